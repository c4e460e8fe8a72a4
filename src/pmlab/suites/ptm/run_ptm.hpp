// One run of the ptm suite: a PTM (undo | redo | pmdk) under a durability model on one workload, with
// the breakdown's switches. Shared by ptm.tx and ptm.breakdown.
#pragma once

#include <string>

#include "pmlab/bench/case.hpp"
#include "pmlab/ptm/common/durability.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::suites::ptm {

struct RunSpec {
  std::string ptm;  // undo | redo | pmdk
  pmlab::ptm::Durability durability = pmlab::ptm::Durability::adr;
  std::string workload;  // sps-N | queue | hashmap | bptree | bank
  pmlab::ptm::workloads::Config config;
  bool logging = true;
  bool elide_flush = false;
  bool elide_fence = false;
};

// The workload parameter's values and their parse ("sps-16" -> sps with 16 swaps).
const std::vector<std::string>& workload_names();
Status parse_workload(const std::string& name, std::string* kind, int* swaps);

// Heap bytes the run needs (pmlab heap, or PMDK pool before its own overhead) and log bytes.
uint64_t heap_bytes(const RunSpec& spec);
uint64_t log_bytes(const RunSpec& spec, int threads);
// The spec of a run from its params (records scaled for --quick).
Result<RunSpec> spec_of(const bench::Params& p, bool quick);

void run(bench::RunContext& ctx, const RunSpec& spec);

// Where PMDK's pool file goes: beside the run's pool, or on /dev/shm (DRAM, as medium=dram is). Memory bound
// to a node (medium=numa:N) has no file to put it beside, and a file elsewhere would not be on that node:
// the run is skipped, never measured on other memory than its medium names.
std::string pmdk_pool_directory(bench::RunContext& ctx);

// ptm.target: undo, redo and PMDK on the same workload, ADR, one thread, side by side in alternating
// short phases (bench::interleave: orders from a balanced Latin square); ratios are medians of per-round
// ratios, so a phase disturbed by another process moves one round, not the verdict.
void run_target(bench::RunContext& ctx, const RunSpec& spec);

}  // namespace pmlab::suites::ptm
