// crash.exec_cost: what `pmlab crash exec` costs on a program nobody here wrote — one of PMDK's example maps
// (subjects/pmdk) inserting keys, run natively and under the tracing runtime by turns in the same run
// (the slowdown, whole process and per insert), beside it under Valgrind's core with no tool (a lower bound for
// pmemcheck), then a bounded crash-test of it (states judged per second).
#include <filesystem>

#include "pmlab/bench/case.hpp"
#include "pmlab/common/files.hpp"
#include "pmlab/common/text.hpp"
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

// One process of the example (`driver map insert pool n`), each on a pool the setup makes anew, untimed.
struct Example {
  RunContext& ctx;
  crash::exec::ExecOptions& o;
  std::string driver, map, pool;

  std::vector<std::string> argv(uint64_t n) const { return {driver, map, "insert", pool, std::to_string(n)}; }

  // Seconds of a process of n inserts run after `prefix` (natively: none), or why it could not run.
  Result<double> run(uint64_t n, const std::vector<std::string>& prefix = {}) const {
    platform::ProcessSpec setup;
    setup.argv = {"/bin/sh", "-c", o.setup};
    if (auto r = platform::run_process(setup); !r || !r->ok()) ctx.fail("the setup failed: " + o.setup);
    platform::ProcessSpec spec;
    spec.argv = prefix;
    for (std::string& a : argv(n)) spec.argv.push_back(std::move(a));
    spec.set_env = crash::exec::program_environment(persist::Domain::adr);
    auto r = platform::run_process(spec);
    if (!r) return r.status();
    if (!r->ok()) return Status(Errc::failed, r->outcome() + " " + platform::tail_lines(r->err, 3));
    return r->seconds;
  }
  double traced(uint64_t n, const std::string& trace, const std::string& log) const {
    o.program = argv(n);
    auto r = crash::exec::trace_program(o, persist::Domain::adr, trace, log);
    if (!r) ctx.fail(r.status().message());
    return r->seconds;
  }
};

// A way of running the example: its processes of N inserts and of none, one of each a round.
struct Side {
  std::vector<double> full, empty;
  double us_per_insert(uint64_t inserts) const {
    return (median(full) - median(empty)) / static_cast<double>(inserts) * 1e6;
  }
};

// Valgrind's core with no tool: every Valgrind tool, pmemcheck among them, runs the program through the
// same translation and adds its own instrumentation, so this time is a lower bound for theirs.
const std::vector<std::string> kValgrindNone = {"valgrind", "--tool=none", "-q"};

void record_valgrind(RunContext& ctx, const Side& native, const Side& traced, const Side& none, uint64_t inserts) {
  std::vector<double> over_native, traced_over;
  for (size_t r = 0; r < none.full.size(); ++r) {
    over_native.push_back(none.full[r] / native.full[r]);
    traced_over.push_back(traced.full[r] / none.full[r]);
  }
  ctx.metric("valgrind_none_seconds", median(none.full), "s");
  ctx.metric("valgrind_none_us_per_insert", none.us_per_insert(inserts), "us");
  ctx.metric_samples("valgrind_none_slowdown", over_native, "ratio");
  ctx.metric_samples("traced_vs_valgrind_none", traced_over, "ratio");
  if (none.us_per_insert(inserts) > 0)
    ctx.metric("traced_vs_valgrind_none_per_insert", traced.us_per_insert(inserts) / none.us_per_insert(inserts),
               "ratio");
  ctx.target("traced_vs_valgrind_none", 1.0, TargetDirection::at_most,
             "traced <= the same process under Valgrind with no tool (a lower bound for pmemcheck)");
}

// Native, traced and (when Valgrind is installed) under Valgrind's core, by turns, so all see the same
// machine; a process with no insert gives each side's fixed cost (loading, opening the pool), which the
// per-insert figures leave out.
void time_by_turns(RunContext& ctx, const Example& example, const std::string& dir, uint64_t inserts) {
  const std::string trace = dir + "/exec-cost.pmtrace", log = dir + "/exec-cost.log";
  auto native = [&](uint64_t n) {
    auto s = example.run(n);
    if (!s) ctx.fail("the example failed natively: " + s.status().message());
    return *s;
  };
  bool with_valgrind = platform::find_program("valgrind").has_value();
  if (!with_valgrind) ctx.note("valgrind", "not installed: no Valgrind peer (apt-get install valgrind)");
  const int rounds = ctx.quick() ? 5 : 11;
  Side n, t, v;
  for (int r = 0; r < rounds; ++r) {
    n.full.push_back(native(inserts));
    t.full.push_back(example.traced(inserts, trace, log));
    n.empty.push_back(native(0));
    t.empty.push_back(example.traced(0, trace, log));
    if (!with_valgrind) continue;
    auto full = example.run(inserts, kValgrindNone), empty = example.run(0, kValgrindNone);
    if (!full || !empty) {
      ctx.note("valgrind",
               "valgrind --tool=none could not run the example: " + (full ? empty.status() : full.status()).message());
      with_valgrind = false;
      continue;
    }
    v.full.push_back(*full);
    v.empty.push_back(*empty);
  }
  std::vector<double> whole;
  for (int r = 0; r < rounds; ++r) whole.push_back(t.full[r] / n.full[r]);
  ctx.metric("native_seconds", median(n.full), "s");
  ctx.metric("traced_seconds", median(t.full), "s");
  ctx.metric_samples("tracing_slowdown", whole, "ratio");
  ctx.metric("native_us_per_insert", n.us_per_insert(inserts), "us");
  ctx.metric("traced_us_per_insert", t.us_per_insert(inserts), "us");
  if (n.us_per_insert(inserts) > 0)
    ctx.metric("tracing_slowdown_per_insert", t.us_per_insert(inserts) / n.us_per_insert(inserts), "ratio");
  ctx.target("tracing_slowdown", 5.0, TargetDirection::at_most, "traced / native <= 5");
  if (with_valgrind) record_valgrind(ctx, n, t, v, inserts);
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
  const std::string pool = dir + "/exec-cost.pool";
  crash::exec::ExecOptions o;
  o.setup = "rm -f " + shell_word(pool) + " && " + shell_word(*driver) + " " + map + " create " + shell_word(pool);
  o.check = shell_word(*driver) + " " + map + " check {} " + std::to_string(inserts);
  const Example example{ctx, o, *driver, map, pool};
  time_by_turns(ctx, example, dir, inserts);

  // The crash test itself, on a bounded budget: what it costs to judge states.
  o.program = example.argv(inserts);
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
    .summary = "pmlab crash exec on a PMDK example map: traced vs native vs Valgrind with no tool (ratios, whole "
               "process and per insert), states judged per second",
    .params = {std_params::choice(
                   "map", "PMDK example map (subjects/pmdk)",
                   {"btree", "ctree", "rbtree", "skiplist", "hashmap_tx", "hashmap_atomic", "hashmap_rp"},
                   // the hash maps outgrow the examples' 8 MiB pool before 2000 keys
                   {"btree", "rbtree"}, {"btree"}),
               std_params::integer("inserts", "keys the traced program inserts", {"2000"}, {"200"}, 1, 1 << 20),
               std_params::integer("budget", "crash states of the crash test", {"400"}, {"100"}, 1, 1 << 24)},
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::crash_exec_cost
