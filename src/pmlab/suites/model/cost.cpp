// model.cost: what the device model costs per 64 B request, measured. Two paths, side by side in the
// same thread and interleaved round by round: the trace-driven Device alone, and the live DeviceModel a
// `--model` run attaches to its persister (lock, clock read, Device). The live figure is what every
// flushed line of a modelled run pays on top of the flush itself.
#include <algorithm>
#include <vector>

#include "pmlab/bench/access_pattern.hpp"
#include "pmlab/bench/case.hpp"
#include "pmlab/model/device.hpp"
#include "pmlab/model/device_model.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/suites/model/common.hpp"

namespace pmlab::suites::model {
namespace {

using namespace bench;
namespace pm = pmlab::model;

// Far more lines than any on-DIMM buffer holds, so random requests miss as they would in a real run.
constexpr uint64_t kSpan = uint64_t{1} << 30;

void body(RunContext& ctx) {
  const pm::DeviceParams device = device_of(ctx);
  const std::string& stream = ctx.params().text("stream");
  const bool write = stream.ends_with("write");
  const Pattern pattern = stream.starts_with("rand") ? Pattern::rand : Pattern::seq;
  const auto offsets = make_offsets(pattern, kSpan, pm::kImcLine, 1 << 20, 0xc057);
  const size_t mask = offsets.size() - 1;
  const platform::Clock& clock = platform::Clock::get();
  const int rounds = ctx.quick() ? 5 : 11;

  pm::Device trace(device);
  pm::DeviceModel live(device, /*emulate=*/false);
  // Addresses are only numbers to the model: nothing is dereferenced.
  auto as_pointer = [](uint64_t a) { return reinterpret_cast<const void*>(uintptr_t{a}); };
  uint64_t next = 0;
  auto run_trace = [&](uint64_t n) {
    for (uint64_t i = 0; i < n; ++i, ++next) {
      if (write) trace.write(offsets[next & mask], pm::kImcLine);
      else trace.read(offsets[next & mask], pm::kImcLine);
    }
  };
  auto run_live = [&](uint64_t n) {
    for (uint64_t i = 0; i < n; ++i, ++next) {
      if (write) live.on_writeback(as_pointer(offsets[next & mask]), pm::kImcLine, persist::Writeback::flush);
      else live.on_read(as_pointer(offsets[next & mask]), pm::kImcLine);
    }
  };
  auto timed = [&](auto&& fn, uint64_t n) {
    const uint64_t t0 = platform::Clock::start();
    fn(n);
    const uint64_t t1 = platform::Clock::stop();
    return clock.to_ns(t1 - t0) / static_cast<double>(n);
  };

  ctx.run_threads([&](ThreadState&) {  // a pinned worker, like every measurement
    // Calibrate so the whole comparison takes about the run's duration.
    timed(run_trace, 20000);
    timed(run_live, 20000);
    const double trial = timed(run_live, 20000);
    const double phase_ns = ctx.control().duration_s * 1e9 / (2.0 * rounds);
    const uint64_t n = std::max<uint64_t>(10000, static_cast<uint64_t>(phase_ns / std::max(trial, 1.0)));
    std::vector<double> trace_ns, live_ns;
    for (int r = 0; r < rounds; ++r) {
      if (r % 2 == 0) {
        trace_ns.push_back(timed(run_trace, n));
        live_ns.push_back(timed(run_live, n));
      } else {
        live_ns.push_back(timed(run_live, n));
        trace_ns.push_back(timed(run_trace, n));
      }
    }
    const double live_median = median(live_ns);
    ctx.metric("trace_ns_per_request", median(trace_ns), "ns");
    ctx.metric("live_ns_per_request", live_median, "ns");
    ctx.metric("live_requests_per_s", 1e9 / live_median, "ops/s");
    ctx.metric("requests_per_phase", static_cast<double>(n), "count");
    ctx.metric("rounds", rounds, "count");
  });
}

const CaseRegistration registration{model_case(
    "cost", "the device model's cost per 64 B request: trace-driven Device and the live model a run attaches",
    {device_param(),
     std_params::choice("stream", "requests fed to the model: 64 B writes or reads, consecutive or random",
                        {"seq-write", "rand-write", "seq-read", "rand-read"},
                        {"seq-write", "rand-write", "seq-read", "rand-read"}, {"seq-write", "rand-write"})},
    body)};

}  // namespace
}  // namespace pmlab::suites::model
