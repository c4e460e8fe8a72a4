// pmlab list / pmlab run.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "pmlab/bench/runner.hpp"
#include "pmlab/cli/commands.hpp"
#include "pmlab/cli/options.hpp"
#include "pmlab/common/stop_signal.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/pool/header.hpp"
#include "pmlab/common/units.hpp"

namespace pmlab::cli {
namespace {

// Bounds that no intended run reaches, so a slip of the keyboard (an extra digit, 2^64-1) is refused
// instead of running for days: a day per run, and 10^12 operations per thread (minutes at a
// nanosecond each, days for slow operations).
constexpr double kMaxRunSeconds = 86400;
constexpr uint64_t kMaxOpsPerThread = 1000000000000ULL;

struct RunArgs {
  std::vector<std::string> selectors;
  std::vector<std::string> sets;
  std::string filter, out, pool, pool_size, duration, domain, flush, model, emulate, pages;
  uint64_t ops = 0, repetitions = 0, cpu_node = 0;
  bool cpu_node_given = false;
  bool quick = false, stability = false, keep_pool = false, no_progress = false, report = false, profile = false,
       force = false, dry_run = false;
};

// The rows a suite's summary derives from its runs (ds.target, idio.classification, …): listed with the
// suite's cases, marked, since they have no parameters of their own and cannot be run alone.
void print_derived(const std::string& suite) {
  for (const bench::SuiteSummary& s : bench::Registry::instance().summaries())
    if (s.suite == suite)
      for (const auto& [name, text] : s.cases)
        std::printf("  %-24s (derived from the suite's runs) %s\n", (suite + "." + name).c_str(), text.c_str());
}

int run_list(const std::vector<std::string>& selectors, bool verbose) {
  auto cases = bench::select_cases(selectors);
  if (!cases) return report_error(cases.status());
  const auto& suites = bench::Registry::instance().suites();
  std::string suite;
  for (const bench::CaseDef* c : *cases) {
    if (c->suite != suite) {
      if (!suite.empty()) print_derived(suite);
      suite = c->suite;
      std::string summary;
      for (const auto& [name, text] : suites)
        if (name == suite) summary = text;
      std::printf("%s%s: %s\n", suite == (*cases)[0]->suite ? "" : "\n", suite.c_str(), summary.c_str());
    }
    std::printf("  %-24s %s\n", c->full_name().c_str(), c->summary.c_str());
    if (!verbose) continue;
    for (const auto& p : c->params) {
      std::string defaults, quick;
      for (const auto& d : p.defaults) defaults += (defaults.empty() ? "" : ",") + d;
      for (const auto& d : p.quick) quick += (quick.empty() ? "" : ",") + d;
      std::printf("      %-10s %s\n                 values %s; default %s%s\n", p.name.c_str(), p.doc.c_str(),
                  p.describe_values().c_str(), defaults.c_str(), quick.empty() ? "" : ("; --quick " + quick).c_str());
    }
  }
  if (!suite.empty()) print_derived(suite);
  return 0;
}

int run_run(const RunArgs& a) {
  bench::RunOptions o;
  o.selectors = a.selectors;
  o.filter = a.filter;
  o.quick = a.quick;
  o.pool_path = a.pool;
  o.keep_pool = a.keep_pool;
  o.out_dir = a.out;
  o.force = a.force;
  o.progress = !a.no_progress;
  o.profile = a.profile;
  o.command_line = command_line();
  o.model = a.model;
  o.emulate = a.emulate;
  for (const auto& s : a.sets)
    if (Status st = bench::parse_override(s, o.overrides); !st) return report_error(st);
  if (!a.pool_size.empty()) {
    auto s = parse_size(a.pool_size);
    if (!s) return report_error(error(Errc::invalid_argument, "--pool-size: " + s.status().message()));
    o.pool_size = *s;
  }
  if (!a.duration.empty()) {
    auto d = parse_seconds(a.duration);
    if (!d) return report_error(error(Errc::invalid_argument, "--duration: " + d.status().message()));
    o.duration_s = *d;
  }
  if (a.ops) o.ops = a.ops;
  if (a.repetitions) o.repetitions = static_cast<int>(a.repetitions);
  if (a.cpu_node_given) o.cpu_node = static_cast<int>(a.cpu_node);
  if (!a.pages.empty()) {
    auto p = media::parse_pages(a.pages);
    if (!p) return report_error(error(Errc::invalid_argument, "--pages: " + p.status().message()));
    o.pages = *p;
  }
  o.stability = a.stability;
  if (!a.domain.empty()) {
    auto d = persist::parse_domain(a.domain);
    if (!d) return report_error(d.status());
    o.domain = *d;
  }
  if (!a.flush.empty()) {
    auto f = persist::parse_flush(a.flush);
    if (!f) return report_error(f.status());
    o.flush = *f;
  }
  if (a.dry_run) {
    auto plan = bench::dry_run(o);
    if (!plan) return report_error(plan.status());
    for (const std::string& name : plan->names) std::printf("%s\n", printable(name).c_str());
    std::printf("%zu runs", plan->names.size());
    if (plan->left_out.redundant)
      std::printf(" (%zu sweep points left out as redundant%s%s)", plan->left_out.redundant,
                  plan->names.empty() ? ", the first " : "",
                  plan->names.empty() ? printable(plan->left_out.first_redundant).c_str() : "");
    if (o.ops) std::printf("; --ops fixes the work, not the time\n");
    else std::printf("; at least %.0f s of measuring (side-by-side and peer cases take longer)\n", plan->min_seconds);
    return 0;
  }
  // Held until the exit code is known, so a stop signal at any moment of the command is handled.
  StopSignals stop_signals;
  auto summary = bench::run(o);
  if (!summary) return report_error(summary.status());
  std::printf("%d runs ok, %d failed, %d skipped\nresults: %s\n", summary->ok, summary->errors, summary->skipped,
              printable(summary->results_path).c_str());
  if (summary->stop_signal != 0) {
    std::fflush(stdout);
    std::fprintf(stderr, "pmlab: stopped by %s: the runs so far are in %s (marked interrupted)\n",
                 signal_name(summary->stop_signal).c_str(), printable(summary->results_path).c_str());
    return 128 + summary->stop_signal;
  }
  int code = summary->errors > 0 ? 1 : 0;
  if (a.report) {
    std::string dir = std::filesystem::path(summary->results_path).parent_path().string();
    int rc = render_report(dir, "");
    if (rc != 0 && code == 0) code = rc;
  }
  return code;
}

}  // namespace

void add_list(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "List suites and cases (with -v, their parameters)");
  auto selectors = std::make_shared<std::vector<std::string>>();
  auto verbose = std::make_shared<bool>(false);
  cmd->add_option("selector", *selectors, "suites or cases to list (default: all)");
  cmd->add_flag("-v,--params", *verbose, "show each case's parameters, values and defaults");
  cmd->callback([&exit_code, selectors, verbose] { exit_code = run_list(*selectors, *verbose); });
}

void add_run(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Run suites or cases and write results.json");
  auto a = std::make_shared<RunArgs>();
  cmd->add_option("selector", a->selectors, "suites (core), cases (core.persist) or all")->required();
  cmd->add_flag("--quick", a->quick, "short sweeps and runs: a smoke test of the whole selection");
  cmd->add_option("--out", a->out,
                  "run directory for results.json (default results/<run-id>); one that holds results needs --force")
      ->check(non_empty_value());
  cmd->add_option("--pool", a->pool,
                  "pool file for medium=pool runs (default: a new one under /dev/shm, removed after)")
      ->check(non_empty_value());
  cmd->add_option("--pool-size", a->pool_size, "size of a pool pmlab creates (default: what the runs need, >= 64M)")
      ->check(size_value(pool::kMinPoolSize));
  cmd->add_flag("--keep-pool", a->keep_pool, "keep the default pool (a pool made at a --pool PATH is always kept)");
  cmd->add_option("--set", a->sets, "override a parameter's sweep: name=v1,v2 (repeatable)")->check(non_empty_value());
  cmd->add_option("--filter", a->filter, "run only runs whose name matches this regular expression")
      ->check(non_empty_value());
  cmd->add_option("--duration", a->duration, "measured time per run (default 0.5s, 0.05s with --quick)")
      ->check(duration_value(kMaxRunSeconds));
  cmd->add_option("--ops", a->ops, "fixed operations per thread instead of a duration")
      ->check(count_value(1, kMaxOpsPerThread));
  cmd->add_option("--repetitions", a->repetitions,
                  "run every point N times (in passes over the selection) and report medians with 95% bootstrap "
                  "intervals (default 5; with --quick 3 for target and peer cases, 1 elsewhere)")
      ->check(count_value(1, 1000));
  cmd->add_flag("--stability", a->stability,
                "order-independence check: a few persistence-sensitive points run alone, then after each selected "
                "suite; each must stay within noise of its value alone (a benchmark mode: as long as the selection)");
  cmd->add_option("--cpu-node", a->cpu_node,
                  "run every run's threads on this NUMA node's CPUs (default: for medium=numa:N the nearest node "
                  "with CPUs, else every CPU this process may use)")
      ->check(count_value(0, 1023))
      ->each([a](const std::string&) { a->cpu_node_given = true; });
  cmd->add_option("--pages", a->pages,
                  "page size of the dram and numa:N media: base (default, as a pool on tmpfs has) or huge (2 MiB, "
                  "as a DAX file system may map a pool; every run records its memory's share in huge pages)")
      ->check(non_empty_value());
  cmd->add_option("--domain", a->domain, "run-wide durability domain for domain=auto: none, adr, eadr")
      ->check(non_empty_value());
  cmd->add_option("--flush", a->flush, "run-wide flush instruction for flush=auto: clflush, clflushopt, clwb, ntstore")
      ->check(non_empty_value());
  cmd->add_option("--model", a->model,
                  "attach a device model to every run and add its modelled metrics (EWR, RWR, EBR, ...): "
                  "c1, c2, c3, dcpmm, cxl-a, cxl-b, cxl-c, cxl-pool, or a JSON file of device parameters")
      ->check(non_empty_value());
  cmd->add_option("--emulate", a->emulate,
                  "make medium=pool runs pay a device's modelled media cost (DRAM runs stay the baseline): "
                  "c1, c2, c3, dcpmm, cxl-a, cxl-b, cxl-c, cxl-pool, or a JSON file")
      ->check(non_empty_value());
  cmd->add_flag("--force", a->force,
                "write into an --out directory that already holds results (its old report is removed)");
  cmd->add_flag("--no-progress", a->no_progress, "no progress output on stderr");
  cmd->add_flag("--report", a->report, "render report.html into the run directory afterwards");
  cmd->add_flag("--dry-run", a->dry_run,
                "print the runs the selection makes and the least time they take; run nothing");
  cmd->add_flag("--profile", a->profile,
                "record each run with perf (software cpu-clock): a flame graph per run, its time breakdown "
                "and the measured profiling slowdown (each run also runs once unprofiled)");
  cmd->callback([&exit_code, a] { exit_code = run_run(*a); });
}

}  // namespace pmlab::cli
