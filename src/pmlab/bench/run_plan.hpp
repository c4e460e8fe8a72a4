// What one `pmlab run` runs: the selected cases' sweep points, checked against the options, named
// under the run's defaults and filtered. Internal to bench/ (runner.cpp and the pool it sizes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/params.hpp"
#include "pmlab/bench/run_pattern.hpp"
#include "pmlab/bench/runner.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/persist/config.hpp"

namespace pmlab::pool {
class Pool;
}

namespace pmlab::bench {

// One point of a case's sweep; `name` once the run's defaults are known.
struct PlannedRun {
  const CaseDef* def;
  Params params;
  std::string name;
};

bool uses_pool(const PlannedRun& r);
uint64_t region_bytes(const PlannedRun& r);

// What the pool-using runs need, at least 64 MiB, in 2 MiB steps: a repeated run room for up to three
// placements (placement_offset).
uint64_t pool_bytes_for(const std::vector<PlannedRun>& plan, bool quick, std::optional<int> repetitions);

// Every sweep point of the selected cases under `overrides`, each case given the --set values it takes; a
// case that takes none of a parameter's values is left out whole. check_options has made sure some
// selected case takes every value.
Result<std::vector<PlannedRun>> plan_runs(const std::vector<const CaseDef*>& selected, const Overrides& overrides,
                                          bool quick, LeftOut& left_out);

// Every --set names a parameter of some selected case and each of its values is one some selected case
// takes (a typo must not silently run defaults, nor a value no case runs vanish), the filter
// is a regular expression, flush instructions named anywhere exist on this CPU (a sweep over one the CPU
// lacks would skip every run and "succeed"), and the run control is positive. Returns the filter.
Result<std::optional<RunPattern>> check_options(const RunOptions& options, const std::vector<const CaseDef*>& selected);

// Run-wide persistence defaults: the pool's map-time choice, else ADR with the best flush; then the flags.
Result<persist::Config> run_defaults(const RunOptions& options, const pool::Pool* bench_pool);

// Names the runs once the defaults are known (domain=auto -> what ran), keeps those the filter selects,
// once each.
std::vector<PlannedRun> name_and_filter(std::vector<PlannedRun>& plan, const persist::Config& defaults,
                                        const std::optional<RunPattern>& filter);

RunControl run_control(const RunOptions& options);

// Says on stderr, before anything runs, each case left out of a --set value (context.skipped keeps them).
void say_refused(const LeftOut& left_out);

// The error of a selection that leaves no run: with the first sweep point left out and why, where every
// point was (the lock-free designs on a NUMA node), not only that nothing matched.
Status nothing_to_run(const LeftOut& left_out);

}  // namespace pmlab::bench
