// One YCSB run over one contender, the machinery every ds case shares (ds.ycsb, ds.update_ratio,
// ds.threads run its points; ds.vs_pmdk and ds.vs_one_thread drive its pieces side by side). A structure is
// loaded with `records` records (in parallel, one share per thread, untimed), each thread's run-phase
// operations are generated before the timed loop, and the loop only executes them (wrapping around its
// stream; a repeated insert is an upsert). Modes: dram (volatile on DRAM), pmem-volatile (volatile on the
// pool), persist (durable on the pool), tx (PMDK transactions, the arena in a libpmemobj pool beside the
// run's pool); PMDK's example maps (the peers, structure pmdk-*; pmdk/maps.hpp) run in mode pmdk. A mode
// on the other medium is left out of the sweep.
//
// Overhead decomposition [PMDKOverheads]: `breakdown` switches one cost off per run, on the write-heavy
// workloads (a, write-only): no-flush / no-fence (persist: the run's persister with elide_flush /
// elide_fence; tx and pmdk: PMDK's flushes and drains, through the libpmem interposer of
// pmdk/persistence.hpp), no-log (tx only: snapshots become no-snapshot registrations). Such runs
// measure a cost, not a design: their crash guarantees are void.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/bench/case.hpp"
#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/common/options.hpp"
#include "pmlab/pmdk/maps.hpp"
#include "pmlab/pmdk/persistence.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/workload/ycsb.hpp"

namespace pmlab::suites::ds {

// What a run needs besides its structure: the workload, its keys, the operations per thread and the
// structure's options.
struct Setup {
  workload::WorkloadSpec spec;
  workload::KeySpace keys;
  uint64_t ops_per_thread = 0;
  pmlab::ds::Options options;
};

Result<Setup> setup_of(const bench::Params& p, int threads, bool quick);

// An arena for a structure of `o`, with slack for the allocator's rounding.
template <template <class> class S>
uint64_t arena_bytes_for(const pmlab::ds::Options& o) {
  return S<pmlab::ds::Arena<pmlab::ds::Durable>>::bytes_needed(o) * 5 / 4 + (1u << 20);
}

// A value's bytes, different per seed.
std::vector<std::byte> value_pattern(uint32_t bytes, uint64_t seed);

// Load phase: untimed, one share of the records per thread.
template <class Tree>
void load_records(bench::RunContext& ctx, const Setup& setup, Tree& tree) {
  const int threads = ctx.threads();
  std::atomic<uint64_t> load_failures{0};
  {
    std::vector<std::thread> loaders;
    for (int t = 0; t < threads; ++t)
      loaders.emplace_back([&, t] {
        const auto value = value_pattern(setup.options.value_bytes, static_cast<uint64_t>(t));
        for (const workload::Op& op : workload::load_ops(setup.keys, t, threads))
          if (!tree.insert(op.key, op.record, value.data())) load_failures.fetch_add(1, std::memory_order_relaxed);
      });
    for (std::thread& l : loaders) l.join();
  }
  if (load_failures.load() != 0)
    ctx.fail("load phase ran out of space (" + std::to_string(load_failures.load()) + " inserts failed)");
  if (tree.count() != setup.keys.records)
    ctx.fail("load phase holds " + std::to_string(tree.count()) + " records, expected " +
             std::to_string(setup.keys.records));
}

// Run phase streams, one per thread, generated outside the timed loop (a power of two of operations each).
std::vector<std::vector<workload::Op>> run_streams(const Setup& setup, int threads, bool types_spread = false);

// What the workload alone makes threads pass between their caches, whatever the structure: beside the
// scaling it explains how much of a shortfall the records' sharing accounts for.
void record_handoffs(bench::RunContext& ctx, const std::vector<std::vector<workload::Op>>& streams);

// What one thread's operations came to: lookups that found no record, inserts that found no room.
struct OpTally {
  uint64_t missed = 0, failed = 0, looked_up = 0;
};

// One operation of a stream on `tree`: `value` is what writes store, `out` where reads copy to. Compiled
// into the timed loop with a read tested first, before any jump table: a lookup is a chain of cache
// misses that the processor overlaps with the next operations' misses, and the instructions around it
// (calls, register saves, an indirect jump) take room in that overlap — on a table larger than the cache
// they cost a structure's read far more than their own time, which the null structure alone cannot show
// (docs/checks.md, "How the harness times an operation").
template <class Tree>
[[gnu::always_inline]] inline void apply_op(Tree& tree, const workload::Op& op, const std::byte* value, std::byte* out,
                                            OpTally& tally) {
  using workload::OpType;
  if (op.type == OpType::read) {
    ++tally.looked_up;
    tally.missed += !tree.read(op.key, op.record, out);
    return;
  }
  switch (op.type) {
    case OpType::read:  // above
      break;
    case OpType::update:
      ++tally.looked_up;
      tally.missed += !tree.update(op.key, op.record, value);
      break;
    case OpType::insert: tally.failed += !tree.insert(op.key, op.record, value); break;
    case OpType::scan: tree.scan(op.key, op.record, op.scan_length, out); break;
    case OpType::read_modify_write:
      ++tally.looked_up;
      if (tree.read(op.key, op.record, out)) {
        out[0] ^= std::byte{1};
        tree.update(op.key, op.record, out);
      } else {
        ++tally.missed;
      }
      break;
  }
}

// What a breakdown run switches off, for the run's lifetime (restored however the run ends); the run's
// device model sees PMDK's write-backs and drains as it sees the persister's.
class BreakdownScope {
 public:
  BreakdownScope(const std::string& breakdown, bool pmdk_persistence, persist::Observer* model);
  ~BreakdownScope();
  BreakdownScope(const BreakdownScope&) = delete;
  BreakdownScope& operator=(const BreakdownScope&) = delete;

 private:
  pmdk::ScopedPersistence persistence_;
};

// A pmlab pool file of `data_bytes` beside the run's pool, its pages allocated and mapped when it is
// made; removed when it goes (a stop signal ends a run through its destructors).
class PoolBeside {
 public:
  PoolBeside(bench::RunContext& ctx, const std::string& what, uint64_t data_bytes);
  ~PoolBeside();
  PoolBeside(const PoolBeside&) = delete;
  PoolBeside& operator=(const PoolBeside&) = delete;

  std::byte* data() const noexcept { return pool_->data(); }
  uint64_t data_size() const noexcept { return pool_->data_size(); }

 private:
  std::string path_;
  std::unique_ptr<pool::Pool> pool_;
};

// PMDK's map `structure` in a pool file beside the run's pool (named with `copy` where a run has several),
// sized for the run; skips the run where PMDK's maps cannot run it.
std::unique_ptr<pmdk::Map> pmdk_map_for(bench::RunContext& ctx, const Setup& setup, const std::string& structure,
                                        const std::string& copy = "");

// One YCSB run at `p` (ds.ycsb's parameters; the derived cases translate theirs into them), and what it
// takes from the run's pool and which of its points are left out of a sweep.
void run_ycsb(bench::RunContext& ctx, const bench::Params& p);
uint64_t region_bytes(const bench::Params& p);
std::optional<std::string> redundant(const bench::Params& p);

// The ds.ycsb point a derived case's parameters stand for: the same structure, mode, medium, records,
// value and threads, on `workload` with the default distribution and no breakdown.
bench::Params ycsb_point(const bench::Params& p, nlohmann::ordered_json workload);
// The ds.ycsb point of a side-by-side case's parameters (ds.vs_pmdk, ds.vs_one_thread): the persist
// mode, no breakdown, the workload's own distribution.
bench::Params persist_point(const bench::Params& p);

// The parameters every ds YCSB case shares.
bench::ParamSpec records_param();
bench::ParamSpec value_param();
bench::ParamSpec workload_param();

}  // namespace pmlab::suites::ds
