// YCSB 0.17 core workloads as pre-generated operation streams.
//
// What YCSB's CoreWorkload decides per operation (the operation by its proportion, the record by the
// request distribution, the scan length), pmlab decides before the timed loop, once per thread from
// (seed, thread), so the loop only executes. Differences from YCSB, on purpose:
//  - keys are 8-byte integers: record number r becomes fnv_hash64(r) (YCSB's insertorder=hashed key
//    "user" + Utils.fnvhash64(r), without the prefix: the same keys, but a scan orders them as numbers,
//    not as strings) or r itself (insertorder=ordered);
//  - inserts are numbered per thread (thread t of n inserts records + t, records + t + n, …) instead of
//    through a shared counter, and a thread's chooser sees the records up to its own newest insert
//    (YCSB: up to the newest acknowledged one), so streams stay independent of thread timing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::workload {

enum class OpType : uint8_t { read, update, insert, scan, read_modify_write };
const char* to_string(OpType t) noexcept;

enum class Distribution : uint8_t { uniform, zipfian, latest, hotspot };
const char* to_string(Distribution d) noexcept;
Result<Distribution> parse_distribution(std::string_view text);

struct Op {
  OpType type;
  uint32_t scan_length;  // records a scan visits (scans only)
  uint64_t record;       // record number (0 .. records + inserts)
  uint64_t key;          // the 8-byte key of that record
};

struct WorkloadSpec {
  std::string name;
  // Operation proportions; they need not sum to 1 (YCSB normalizes them too).
  double read = 0, update = 0, insert = 0, scan = 0, read_modify_write = 0;
  Distribution distribution = Distribution::zipfian;
  uint32_t max_scan_length = 100;      // scan lengths are uniform in [1, max] (YCSB's default)
  double hotspot_data_fraction = 0.2;  // hotspot: the hot set's share of the records
  double hotspot_op_fraction = 0.8;    // hotspot: the hot set's share of the operations
};

// "a".."f" (YCSB's workloada..workloadf), "write-only" (100% update, zipfian: the 0(R)/100(W) of
// [StoredsBench]), or a custom mix "mix:R/U/I/S/M" in percent of read/update/insert/scan/read-modify-write,
// zipfian.
Result<WorkloadSpec> workload_named(std::string_view name);
// How many operation types the workload mixes (those with a non-zero proportion).
int operation_types(const WorkloadSpec& spec) noexcept;
Status validate(const WorkloadSpec& spec);

struct KeySpace {
  uint64_t records = 0;  // records loaded before the run phase
  bool hashed = true;    // insertorder=hashed (default) or ordered
  uint64_t key_of(uint64_t record) const noexcept;
};

// The load phase of thread `thread` of `threads`: inserts of records thread, thread + threads, … < records.
std::vector<Op> load_ops(const KeySpace& keys, int thread, int threads);

// The run phase: `count` operations of thread `thread` of `threads`, reproducible from `seed`.
std::vector<Op> run_ops(const WorkloadSpec& spec, const KeySpace& keys, uint64_t count, uint64_t seed, int thread,
                        int threads);

// The same operations reordered so that their types follow an even, repeating pattern (each type's
// operations keep their relative order; a type with share s of the stream takes every 1/s-th place). A
// branch on the type of the next operation is then predicted; on the stream as generated it is not (the
// types are independent draws), and on a workload that mixes types each misprediction costs a pipeline
// refill that every structure pays alike. What measures the harness without that cost (ds.harness) runs
// on this; a structure must not: a read can come before the insert of its record.
std::vector<Op> with_types_spread(const std::vector<Op>& ops);

// Largest record number a run of `count` operations per thread over `threads` threads can insert, plus one:
// what a structure must have room for.
// The inserts YCSB sizes its scrambled-zipfian key range for, as CoreWorkload computes expectednewkeys:
// (int) (insertproportion x operationcount x 2.0), with the proportion as written (not normalized) and the
// operation count of the whole run (all threads). The range is records + this + 1 items: CoreWorkload's
// bounds insertstart .. insertstart + insertcount + expectednewkeys are both inclusive.
uint64_t expected_new_keys(const WorkloadSpec& w, uint64_t count, int threads);

uint64_t records_after_run(const WorkloadSpec& spec, const KeySpace& keys, uint64_t count, int threads);

}  // namespace pmlab::workload
