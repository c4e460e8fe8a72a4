// crash.exec_cost: what `pmlab crash exec` costs on a program nobody here wrote — one of PMDK's example maps
// (subjects/pmdk) inserting keys, run natively and under the tracing runtime by turns in the same run
// (the slowdown, whole process and per insert), then a bounded crash-test of it (states judged per second).
#include <filesystem>

#include "pmlab/bench/case.hpp"
#include "pmlab/common/files.hpp"
#include "pmlab/crash/exec/campaign.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::suites::crash_exec_cost {
namespace {

using namespace bench;
namespace fs = std::filesystem;

// The example programs are built beside pmlab (build/subjects); an installed pmlab has none.
std::optional<std::string> subject(const std::string& name) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path p = self.parent_path() / "subjects" / name;
  if (ec || !fs::exists(p)) return std::nullopt;
  return p.string();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void body(RunContext& ctx) {
  const std::string map = ctx.params().text("map");
  const auto inserts = static_cast<uint64_t>(ctx.params().integer("inserts"));
  const auto driver = subject("pmdk-map");
  if (!driver)
    ctx.skip("PMDK's example maps are not built beside pmlab (subjects/pmdk needs libpmemobj-dev's examples)");
  auto scratch = ScratchDirectory::make("pmlab-exec-cost");
  if (!scratch) ctx.fail(scratch.status().message());
  const std::string& dir = scratch->path();
  const std::string pool = dir + "/exec-cost.pool", trace = dir + "/exec-cost.pmtrace", log = dir + "/exec-cost.log";
  crash::exec::ExecOptions o;
  o.setup = "rm -f '" + pool + "' && '" + *driver + "' " + map + " create '" + pool + "'";
  o.check = "'" + *driver + "' " + map + " check {} " + std::to_string(inserts);
  auto program = [&](uint64_t n) { return std::vector<std::string>{*driver, map, "insert", pool, std::to_string(n)}; };

  // One process of N inserts, natively (the pool made by the setup, untimed) or traced; seconds.
  auto native = [&](uint64_t n) {
    platform::ProcessSpec setup;
    setup.argv = {"/bin/sh", "-c", o.setup};
    if (auto r = platform::run_process(setup); !r || !r->ok()) ctx.fail("the setup failed: " + o.setup);
    platform::ProcessSpec spec;
    spec.argv = program(n);
    spec.set_env = crash::exec::program_environment(persist::Domain::adr);
    auto r = platform::run_process(spec);
    if (!r || !r->ok())
      ctx.fail("the example failed natively: " + (r ? r->outcome() + " " + r->err : r.status().message()));
    return r->seconds;
  };
  auto traced = [&](uint64_t n) {
    o.program = program(n);
    auto r = crash::exec::trace_program(o, persist::Domain::adr, trace, log);
    if (!r) ctx.fail(r.status().message());
    return r->seconds;
  };
  // By turns, so both sides see the same machine; a process with no insert gives each side's fixed cost
  // (loading, opening the pool), which the per-insert slowdown leaves out.
  const int rounds = ctx.quick() ? 5 : 11;
  std::vector<double> n_native, n_traced, z_native, z_traced, whole;
  for (int r = 0; r < rounds; ++r) {
    n_native.push_back(native(inserts));
    n_traced.push_back(traced(inserts));
    z_native.push_back(native(0));
    z_traced.push_back(traced(0));
    whole.push_back(n_traced.back() / n_native.back());
  }
  const double per_insert_native = (median(n_native) - median(z_native)) / static_cast<double>(inserts);
  const double per_insert_traced = (median(n_traced) - median(z_traced)) / static_cast<double>(inserts);
  ctx.metric("native_seconds", median(n_native), "s");
  ctx.metric("traced_seconds", median(n_traced), "s");
  ctx.metric_samples("tracing_slowdown", whole, "ratio");
  ctx.metric("native_us_per_insert", per_insert_native * 1e6, "us");
  ctx.metric("traced_us_per_insert", per_insert_traced * 1e6, "us");
  if (per_insert_native > 0) ctx.metric("tracing_slowdown_per_insert", per_insert_traced / per_insert_native, "ratio");
  ctx.target("tracing_slowdown", 5.0, TargetDirection::at_most,
             "traced / native <= 5 (pmemcheck, by its users' reports: 100-460x)");

  // The crash test itself, on a bounded budget: what it costs to judge states.
  o.program = program(inserts);
  o.granularities = {crash::Granularity::line};
  o.budget = static_cast<uint64_t>(ctx.params().integer("budget"));
  o.work_dir = dir + "/exec-cost-work";
  o.trace.clear();
  auto report = crash::exec::run_exec(o, nullptr);
  if (!report) ctx.fail(report.status().message());
  const auto& run = report->runs.front();
  if (run.failures) ctx.fail(map + " failed its crash test: " + (run.details.empty() ? "" : run.details[0].outcome));
  ctx.metric("crash_points", static_cast<double>(run.crash_points), "count");
  ctx.metric("states_judged", static_cast<double>(run.states_checked), "count");
  ctx.metric("duplicate_states", static_cast<double>(run.duplicate_states), "count");
  ctx.metric("states_per_second", static_cast<double>(run.states_checked) / run.seconds, "states/s");
  ctx.metric("crash_test_seconds", run.seconds + report->traces.front().seconds, "s");
}

const CaseRegistration registration{CaseDef{
    .suite = "crash",
    .name = "exec_cost",
    .summary = "pmlab crash exec on a PMDK example map: traced vs native (ratio, whole process and per insert), states "
               "judged per second",
    .params = {std_params::choice(
                   "map", "PMDK example map (subjects/pmdk)",
                   {"btree", "ctree", "rbtree", "skiplist", "hashmap_tx", "hashmap_atomic", "hashmap_rp"},
                   // the hash maps outgrow the examples' 8 MiB pool before 2000 keys
                   {"btree", "rbtree"}, {"btree"}),
               std_params::integer("inserts", "keys the traced program inserts", {"2000"}, {"200"}, 1, 1 << 20),
               std_params::integer("budget", "crash states of the crash test", {"400"}, {"100"}, 1, 1 << 24)},
    .region_bytes = {},
    .redundant = {},
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::crash_exec_cost
