// crash.cost: what the crash simulator costs — an operation stream with the simulated durability domain
// attached versus plain, in the same run, and crash states checked per second.
#include "pmlab/bench/case.hpp"
#include "pmlab/crash/durability_tracker.hpp"
#include "pmlab/crash/simulator.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/platform/clock.hpp"

namespace pmlab::suites::crash_cost {
namespace {

using namespace bench;

struct NoTracking final : crash::OpTracker {
  void begin(uint64_t, std::string_view) noexcept override {}
  void end(uint64_t) noexcept override {}
};

void body(RunContext& ctx) {
  const std::string design = ctx.params().text("design");
  const crash::SubjectInfo* info = crash::SubjectRegistry::instance().find(design);
  if (info == nullptr) ctx.fail("no crash-testable design '" + design + "' (see pmlab crash --list)");
  const auto domain = persist::parse_domain(ctx.params().text("domain")).value();
  crash::SubjectOptions so{.ops = static_cast<uint64_t>(ctx.params().integer("ops")), .seed = 1};
  const platform::Clock& clock = platform::Clock::get();
  auto persister = persist::Persister::create({.domain = domain,
                                               .flush = persist::best_line_flush(platform::CpuFeatures::host()),
                                               .elide_flush = false,
                                               .elide_fence = false});
  if (!persister) ctx.fail(persister.status().message());
  media::DramBuffer memory;

  // One stream: format (untimed), then the timed operations, with or without the tracker.
  auto stream_ns = [&](bool tracked) {
    auto subject = info->make(so);
    if (Status s = memory.reserve(subject->image_bytes()); !s) ctx.fail(s.message());
    crash::Image image{memory.region().base, subject->image_bytes()};
    std::memset(image.base, 0, image.size);
    subject->format(image, *persister);
    crash::DurabilityTracker tracker(image, domain, nullptr);
    if (tracked) persister->attach(&tracker);
    NoTracking ops;
    const uint64_t t0 = platform::Clock::start();
    subject->run(image, *persister, ops);
    const uint64_t t1 = platform::Clock::stop();
    persister->detach();
    return clock.to_ns(t1 - t0);
  };
  const int rounds = ctx.quick() ? 5 : 21;
  std::vector<double> plain, tracked;
  for (int r = 0; r < rounds; ++r) {
    plain.push_back(stream_ns(false));
    tracked.push_back(stream_ns(true));
  }
  std::sort(plain.begin(), plain.end());
  std::sort(tracked.begin(), tracked.end());
  const double ops = static_cast<double>(so.ops);
  const double plain_ns = plain[plain.size() / 2] / ops, tracked_ns = tracked[tracked.size() / 2] / ops;
  ctx.metric("plain_ns_per_op", plain_ns, "ns");
  ctx.metric("tracked_ns_per_op", tracked_ns, "ns");
  ctx.metric("tracking_slowdown", tracked_ns / plain_ns, "ratio");

  crash::SimOptions o;
  o.domain = domain;
  o.granularity = crash::parse_granularity(ctx.params().text("granularity")).value();
  o.budget = static_cast<uint64_t>(ctx.params().integer("budget"));
  o.subject = so;
  auto report = crash::simulate(*info, o);
  if (!report) ctx.fail(report.status().message());
  if (report->failures) ctx.fail(design + " failed its crash test: " + report->details[0].property);
  const double seconds = report->seconds;
  ctx.metric("states_checked", static_cast<double>(report->states_checked), "count");
  ctx.metric("crash_points", static_cast<double>(report->crash_points), "count");
  ctx.metric("states_per_second", static_cast<double>(report->states_checked) / seconds, "states/s");
  ctx.metric("simulated_ns_per_op", seconds * 1e9 / ops, "ns");
  ctx.metric("simulation_slowdown", seconds * 1e9 / ops / plain_ns, "ratio");
}

const CaseRegistration registration{CaseDef{
    .suite = "crash",
    .name = "cost",
    .summary = "simulator cost: tracked vs plain operation stream (ratio) and crash states checked per second",
    .params = {ParamSpec{.name = "design",
                         .type = ParamType::text,
                         .doc = "a crash-testable design (pmlab crash --list)",
                         .defaults = {"selftest.commit-record", "selftest.scan-log"},
                         .quick = {"selftest.commit-record"},
                         .choices = {},
                         .min = INT64_MIN,
                         .max = INT64_MAX},
               std_params::choice("domain", "simulated durability domain", {"adr", "eadr"}, {"adr", "eadr"}, {"adr"}),
               std_params::choice("granularity",
                                  "crash unit: cache line, torn 8-byte word, or plain stores torn by byte",
                                  {"line", "word", "byte"}, {"line", "word", "byte"}, {"line"}),
               std_params::integer("ops", "operations in the stream", {"256"}, {"64"}, 1, 1 << 20),
               std_params::integer("budget", "crash states to check", {"4000"}, {"300"}, 1, 1 << 24)},
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::crash_cost
