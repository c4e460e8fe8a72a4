// `pmlab run`: selects cases, expands their sweeps, provides media and persisters, runs, writes
// results.json. One failing run is recorded as an error and the rest keep running.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/params.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/persist/config.hpp"

namespace pmlab::bench {

struct RunOptions {
  std::vector<std::string> selectors;  // "all", a suite ("core") or a case ("core.persist")
  std::string filter;                  // regular expression on run names
  Overrides overrides;                 // --set name=v1,v2
  bool quick = false;
  std::optional<double> duration_s;  // per run; default 0.5 s (0.05 s with --quick)
  std::optional<uint64_t> ops;       // fixed operations per thread instead of a duration
  std::optional<int> repetitions;    // every point this often; default: bench::repetitions_for
  bool stability = false;            // --stability: sample points alone and after each suite (bench/stability.hpp)
  std::string pool_path;             // empty: a fresh pool under /dev/shm, removed afterwards
  uint64_t pool_size = 0;            // 0: what the selected runs need, at least 64 MiB
  bool keep_pool = false;
  std::optional<persist::Domain> domain;           // run-wide default for domain=auto
  std::optional<persist::FlushInstruction> flush;  // run-wide default for flush=auto
  std::optional<int> cpu_node;                     // --cpu-node: every run's threads on this node's CPUs
  media::Pages pages = media::Pages::base;         // --pages: the page size of the dram and numa:N media
  std::string model;    // --model: device preset or JSON file; every run gets modelled metrics
  std::string emulate;  // --emulate: medium=pool runs also pay this device's modelled cost
  std::string out_dir;  // empty: results/<run-id>
  bool force = false;   // --force: replace the results (and drop the report) in out_dir
  bool progress = true;
  bool profile = false;  // --profile: perf-record each run, flame graph + time breakdown
  std::string command_line;
};

struct RunSummary {
  std::string results_path;
  int ok = 0;
  int errors = 0;
  int skipped = 0;
  int stop_signal = 0;  // the signal that stopped the run early (results.json says interrupted), or 0
};

// Cases named by the selectors (all when empty or "all"), in registration order.
Result<std::vector<const CaseDef*>> select_cases(const std::vector<std::string>& selectors);

// The pool size `pmlab run SELECTORS` creates when given no --pool-size: what its pool runs need, at
// least 64 MiB. `pmlab pool create` defaults to the size for `all`, so its pools fit every run.
Result<uint64_t> pool_size_for(const std::vector<std::string>& selectors, bool quick);

// Repetitions of a medium=pool run move through the pool's data area in steps of this size (a multiple of
// 2 MiB, so a region keeps its alignment): repetition `pass` of a run of `bytes` measures at
// placement_offset, as far as a data area of `data_size` bytes has room. Runs of one pass share the offset
// where both have room (a pool pmlab makes has room for three): ratios pair repetitions by pass, so a
// 1-thread and a 2-thread run measure on the same pages.
inline constexpr uint64_t kPlacementStep = 64ULL << 20;
uint64_t placement_offset(uint64_t data_size, uint64_t bytes, int pass);

// What planning left out: the sweep points a case declares redundant, and each --set value a selected
// case cannot take though another selected case does (a suite-wide medium=numa:0 reaching a case whose
// peer needs a pool file), as {case, why}.
struct LeftOut {
  size_t redundant = 0;
  std::string first_redundant;  // "case: why" of the first, for a selection that leaves nothing to run
  std::vector<std::pair<std::string, std::string>> refused;
};

// What `pmlab run` would run (--dry-run): the run names in order, after --set, --filter and the run-wide
// defaults (without a pool: a pool's map-time defaults may name domain=auto runs otherwise), and the
// measuring time they take at the least (per run: warm-up and duration, or nothing known with --ops;
// side-by-side cases alternate their contenders for longer).
struct RunPlan {
  std::vector<std::string> names;
  LeftOut left_out;
  double min_seconds = 0;
};
Result<RunPlan> dry_run(const RunOptions& options);

// Runs the selection and writes results.json. A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) ends it
// early: the runs so far are written with context.interrupted = true and `stop_signal` says which.
Result<RunSummary> run(const RunOptions& options);

}  // namespace pmlab::bench
