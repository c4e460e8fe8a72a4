// ds.ycsb: one YCSB workload over one structure in one mode. The structure is loaded with `records`
// records (in parallel, one share per thread, untimed), each thread's run-phase operations are generated
// before the timed loop, and the loop only executes them (wrapping around its stream; a repeated insert
// is an upsert). Modes: dram (volatile on DRAM), pmem-volatile (volatile on the pool), persist (durable on
// the pool), tx (PMDK transactions, the arena in a libpmemobj pool beside the run's pool), and pmdk for
// PMDK's example maps (the peers, structure pmdk-*; pmdk/maps.hpp); a mode on the other medium is left out
// of the sweep.
//
// Overhead decomposition [PMDKOverheads]: `breakdown` switches one cost off per run, on the write-heavy
// workloads (a, write-only): no-flush / no-fence (persist: the run's persister with elide_flush /
// elide_fence; tx and pmdk: PMDK's flushes and drains, through the libpmem interposer of
// pmdk/persistence.hpp), no-log (tx only: snapshots become no-snapshot registrations). Such runs
// measure a cost, not a design: their crash guarantees are void.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/side_by_side.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/ds/array/array.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/common/mode.hpp"
#include "pmlab/ds/common/structure.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ds/list/list.hpp"
#include "pmlab/ds/skiplist/skiplist.hpp"
#include "pmlab/pmdk/obj_pool.hpp"
#include "pmlab/pmdk/persistence.hpp"
#include "pmlab/pmdk/tx.hpp"
#include "pmlab/pmdk/maps.hpp"
#include "pmlab/pmdk/environment.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/pool/scratch.hpp"
#include "pmlab/suites/ds/summary.hpp"
#include "pmlab/workload/handoffs.hpp"
#include "pmlab/workload/ycsb.hpp"

namespace pmlab::suites::ds {
namespace {

using namespace bench;
using pmlab::ds::Arena;
using pmlab::ds::Durable;
using pmlab::ds::Mode;
using pmlab::ds::Options;
using pmlab::ds::Transactional;
using pmlab::ds::Volatile;
using workload::Op;
using workload::OpType;

// The list looks every key up by walking it: beyond this many records a run would not finish.
constexpr uint64_t kListMaxRecords = 50000;
// PMDK's skiplist_map has 4 levels (SKIPLIST_LEVELS_NUM): a lookup walks ~records/8 nodes.
constexpr uint64_t kPmdkSkiplistMaxRecords = 20000;
constexpr double kQuickSeconds = 0.2;

struct Setup {
  workload::WorkloadSpec spec;
  workload::KeySpace keys;
  uint64_t ops_per_thread = 0;
  Options options;
};

Result<Setup> setup_of(const Params& p, int threads, bool quick) {
  Setup s;
  auto spec = workload::workload_named(p.text("workload"));
  if (!spec) return spec.status();
  s.spec = *spec;
  if (p.text("distribution") != "default") {
    auto d = workload::parse_distribution(p.text("distribution"));
    if (!d) return d.status();
    s.spec.distribution = *d;
  }
  s.keys = workload::KeySpace{p.size("records"), true};
  s.ops_per_thread = quick ? (1u << 18) : (1u << 20);
  s.options.value_bytes = static_cast<uint32_t>(p.size("value"));
  s.options.capacity = workload::records_after_run(s.spec, s.keys, s.ops_per_thread, threads);
  s.options.concurrent = threads > 1;
  return s;
}

// An arena for a structure of `o`, with slack for the allocator's rounding.
template <template <class> class S>
uint64_t arena_bytes_for(const Options& o) {
  return S<Arena<Durable>>::bytes_needed(o) * 5 / 4 + (1u << 20);
}

template <template <class> class S>
uint64_t bytes_for(const Params& p) {
  const int threads = static_cast<int>(p.integer("threads"));
  auto s = setup_of(p, threads, true);
  Options o;
  if (s) o = s->options;
  // The full sweep generates 4x the operations: size for it.
  if (s) o.capacity = workload::records_after_run(s->spec, s->keys, 1u << 20, threads);
  return arena_bytes_for<S>(o);
}

// Bytes of the structure's arena (tx mode: inside its libpmemobj pool).
uint64_t arena_bytes(const Params& p) {
  const std::string& s = p.text("structure");
  if (s == "array") return bytes_for<pmlab::ds::Array>(p);
  if (s == "hashtable") return bytes_for<pmlab::ds::Hashtable>(p);
  if (s == "skiplist") return bytes_for<pmlab::ds::Skiplist>(p);
  if (s == "bptree") return bytes_for<pmlab::ds::BPTree>(p);
  return bytes_for<pmlab::ds::List>(p);
}

// The tx mode and PMDK's maps live in libpmemobj pools of their own; from the run's pool they take one page,
// whose file tells them the directory to put theirs in.
uint64_t region_bytes(const Params& p) {
  if (p.text("mode") == "tx" || p.text("mode") == "pmdk" || is_null_structure(p.text("structure"))) return 4096;
  return arena_bytes(p);
}

std::optional<std::string> redundant(const Params& p) {
  const std::string& mode_text = p.text("mode");
  if (is_null_structure(p.text("structure")) && (mode_text != "dram" || p.text("breakdown") != "none"))
    return std::string("the null structure measures the harness: DRAM mode, no breakdown");
  const bool pmdk_mode = mode_text == "pmdk";
  if (pmdk_mode != pmdk::Map::is_pmdk(p.text("structure")))
    return std::string("PMDK's example maps run in mode pmdk, and only they do");
  auto mode = pmlab::ds::parse_mode(mode_text);
  const char* medium = pmdk_mode ? "pool" : mode ? pmlab::ds::medium_of(*mode) : p.text("medium").c_str();
  if (p.text("medium") != medium) return std::string("mode ") + mode_text + " runs on " + medium;
  const std::string& breakdown = p.text("breakdown");
  if (breakdown != "none") {
    if (mode_text != "persist" && mode_text != "tx" && !pmdk_mode)
      return std::string("the breakdown switches off persistence costs: persist, tx and pmdk modes only");
    if (p.text("workload") != "a" && p.text("workload") != "write-only")
      return std::string("the breakdown runs on the write-heavy workloads a and write-only");
    if (breakdown == "no-log" && mode_text != "tx")
      return std::string("no-log: the persist mode keeps no log, and PMDK's maps add their undo-log ranges "
                         "inside PMDK's own sources");
  }
  return std::nullopt;
}

std::vector<std::byte> value_pattern(uint32_t bytes, uint64_t seed) {
  std::vector<std::byte> v(bytes);
  for (uint32_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>(seed * 131 + i * 7);
  return v;
}

// Load, run phase and checks over any structure with the Structure interface (ours in every mode, and
// PMDK's maps).
// The harness's own cost per operation (issue: ratios between designs are compressed by whatever every
// operation pays outside the structure): a structure whose operations return at once, driven by the same
// loop as the others — operation dispatch, key and value handling, sampled timing. It reads the key and
// the value's first byte so the compiler keeps the dispatch. Threads share it as they share a structure:
// what it writes on every operation is the thread's own, or two threads would time one line moving between
// their cores; only the record count (inserts) is shared.
struct NullStructure {
  std::atomic<uint64_t> records{0};
  static inline thread_local uint64_t sink = 0;
  bool insert(uint64_t key, uint64_t, const std::byte* in) {
    sink += key + static_cast<uint64_t>(in[0]);
    records.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  bool update(uint64_t key, uint64_t, const std::byte* in) {
    sink += key ^ static_cast<uint64_t>(in[0]);
    return true;
  }
  bool read(uint64_t key, uint64_t, std::byte* out) {
    out[0] = static_cast<std::byte>(key);
    return true;
  }
  uint32_t scan(uint64_t key, uint64_t, uint32_t n, std::byte* out) {
    out[0] = static_cast<std::byte>(key);
    return n;
  }
  uint64_t count() const { return records.load(); }
  Status check() const { return Status::success(); }
};

// Load phase: untimed, one share of the records per thread.
template <class Tree>
void load_records(RunContext& ctx, const Setup& setup, Tree& tree) {
  const int threads = ctx.threads();
  std::atomic<uint64_t> load_failures{0};
  {
    std::vector<std::thread> loaders;
    for (int t = 0; t < threads; ++t)
      loaders.emplace_back([&, t] {
        const auto value = value_pattern(setup.options.value_bytes, static_cast<uint64_t>(t));
        for (const Op& op : workload::load_ops(setup.keys, t, threads))
          if (!tree.insert(op.key, op.record, value.data())) load_failures.fetch_add(1, std::memory_order_relaxed);
      });
    for (std::thread& l : loaders) l.join();
  }
  if (load_failures.load() != 0) ctx.fail("load phase ran out of space (" + std::to_string(load_failures.load()) + " inserts failed)");
  if (tree.count() != setup.keys.records)
    ctx.fail("load phase holds " + std::to_string(tree.count()) + " records, expected " + std::to_string(setup.keys.records));
}

// Run phase streams, one per thread, generated outside the timed loop (a power of two of operations each).
std::vector<std::vector<Op>> run_streams(const Setup& setup, int threads, bool types_spread = false) {
  std::vector<std::vector<Op>> streams(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    streams[static_cast<size_t>(t)] = workload::run_ops(setup.spec, setup.keys, setup.ops_per_thread, 0x5eed, t, threads);
  if (types_spread)
    for (std::vector<Op>& stream : streams) stream = workload::with_types_spread(stream);
  return streams;
}

// What the workload alone makes threads pass between their caches, whatever the structure: beside the
// scaling it explains how much of a shortfall the records' sharing accounts for.
void record_handoffs(RunContext& ctx, const std::vector<std::vector<Op>>& streams) {
  if (streams.size() > 1)
    if (const auto handoffs = workload::record_handoffs_per_op(streams))
      ctx.metric("record_handoffs_per_op", *handoffs, "ratio", MetricKind::modelled,
                 "record hand-offs: threads in lockstep, unbounded caches (workload/handoffs.hpp)");
}

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
[[gnu::always_inline]] inline void apply_op(Tree& tree, const Op& op, const std::byte* value, std::byte* out,
                                            OpTally& tally) {
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
    case OpType::insert:
      tally.failed += !tree.insert(op.key, op.record, value);
      break;
    case OpType::scan:
      tree.scan(op.key, op.record, op.scan_length, out);
      break;
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

template <class Tree>
void run_ops(RunContext& ctx, const Setup& setup, Tree& tree, bool types_spread = false) {
  const int threads = ctx.threads();
  load_records(ctx, setup, tree);
  const std::vector<std::vector<Op>> streams = run_streams(setup, threads, types_spread);
  record_handoffs(ctx, streams);

  std::atomic<uint64_t> misses{0}, failures{0}, lookups{0};
  ctx.run_threads([&](ThreadState& t) {
    const std::vector<Op>& ops = streams[static_cast<size_t>(t.index())];
    const uint64_t mask = ops.size() - 1;  // a power of two
    const auto value = value_pattern(setup.options.value_bytes, 1000 + static_cast<uint64_t>(t.index()));
    std::vector<std::byte> out(setup.options.value_bytes);
    OpTally tally;
    t.measure([&](uint64_t i) { apply_op(tree, ops[i & mask], value.data(), out.data(), tally); });
    misses.fetch_add(tally.missed);
    failures.fetch_add(tally.failed);
    lookups.fetch_add(tally.looked_up);
  });
  if (failures.load() != 0) ctx.fail(std::to_string(failures.load()) + " inserts ran out of space");
  ctx.metric("miss_ratio", lookups.load() ? static_cast<double>(misses.load()) / static_cast<double>(lookups.load()) : 0.0,
             "ratio");
  if (Status s = tree.check(); !s) ctx.fail("structure broken after the run: " + s.message());
}

// What a breakdown run switches off, for the run's lifetime (restored however the run ends); the run's
// device model sees PMDK's write-backs and drains as it sees the persister's.
class BreakdownScope {
 public:
  BreakdownScope(const std::string& breakdown, bool pmdk_persistence, persist::Observer* model)
      : persistence_({.count = pmdk_persistence,
                      .elide_flush = breakdown == "no-flush",
                      .elide_fence = breakdown == "no-fence",
                      .observer = model}) {
    pmdk::tx::set_logging(breakdown != "no-log");
  }
  ~BreakdownScope() { pmdk::tx::set_logging(true); }
  BreakdownScope(const BreakdownScope&) = delete;
  BreakdownScope& operator=(const BreakdownScope&) = delete;

 private:
  pmdk::ScopedPersistence persistence_;
};

// The file for a libpmemobj pool beside the run's pool.
std::string pool_file_beside(RunContext& ctx, const std::string& what) {
  auto dir = pmdk::directory_of_mapping(ctx.region().base);
  if (!dir) ctx.skip("no directory for PMDK's pool: " + dir.status().message());
  ctx.note("pmem_is_pmem_force", std::to_string(pmdk::force_pmem_is_pmem()) +
                                     " (PMEM_IS_PMEM_FORCE as PMDK read it; pmlab sets 1 unless the user set it, "
                                     "so PMDK flushes instead of msync on an emulated pool)");
  return pool::scratch_pool_path(*dir, "ds-" + what);
}

// A pmlab pool file of `data_bytes` beside the run's pool (pool_file_beside), its pages allocated and mapped
// when it is made; removed when it goes (a stop signal ends a run through its destructors).
class PoolBeside {
 public:
  PoolBeside(RunContext& ctx, const std::string& what, uint64_t data_bytes) : path_(pool_file_beside(ctx, what)) {
    const uint64_t size = (data_bytes + 2 * pool::kHeaderSize - 1) / pool::kHeaderSize * pool::kHeaderSize;
    auto made = pool::Pool::create(path_, size, "bench");
    if (!made) ctx.fail(made.status().message());
    pool_ = std::move(*made);
    media::prefault_for_writing(pool_->data(), pool_->data_size());
  }
  ~PoolBeside() {
    pool_.reset();
    (void)pool::remove(path_);
  }
  PoolBeside(const PoolBeside&) = delete;
  PoolBeside& operator=(const PoolBeside&) = delete;

  std::byte* data() const noexcept { return pool_->data(); }
  uint64_t data_size() const noexcept { return pool_->data_size(); }

 private:
  std::string path_;
  std::unique_ptr<pool::Pool> pool_;
};

template <template <class> class S>
void run_ours(RunContext& ctx, const Params& p, const Setup& setup, Mode mode, const persist::Persister& persister) {
  const media::Region& region = ctx.region();
  if (mode == Mode::tx) {
    if (!pmdk::tx::available()) ctx.skip("pmlab was built without libpmemobj (install libpmemobj-dev and rebuild)");
    const std::string path = pool_file_beside(ctx, std::string(S<Arena<Transactional>>::kName) + "-tx");
    auto pool = pmdk::ObjArenaPool::create(path, arena_bytes(p));
    if (!pool) ctx.fail(pool.status().message());
    (*pool)->remove_on_close(true);
    const uint64_t aborts_before = pmdk::tx::aborts();
    {
      Arena<Transactional> arena((*pool)->arena(), (*pool)->arena_bytes(), persister, (*pool)->handle());
      S<Arena<Transactional>> tree(arena, setup.options);
      if (Status s = tree.create(setup.options.capacity); !s) ctx.fail(s.message());
      run_ops(ctx, setup, tree);
      ctx.metric("arena_bytes", static_cast<double>(arena.used()), "B");
    }
    if (pmdk::tx::aborts() != aborts_before)
      ctx.fail(std::to_string(pmdk::tx::aborts() - aborts_before) + " transactions aborted");
    // Recovery as after a crash: PMDK's (reopening the pool), then the structure's over the arena.
    const uint64_t records = setup.keys.records;
    (*pool)->remove_on_close(false);
    pool->reset();
    auto reopened = pmdk::ObjArenaPool::open(path);
    if (!reopened) ctx.fail("reopening the tx pool: " + reopened.status().message());
    (*reopened)->remove_on_close(true);
    Arena<Transactional> arena((*reopened)->arena(), (*reopened)->arena_bytes(), persister, (*reopened)->handle());
    S<Arena<Transactional>> tree(arena, setup.options);
    if (Status s = tree.recover(); !s) ctx.fail("tx recovery: " + s.message());
    if (Status s = tree.check(); !s) ctx.fail("tx recovery: " + s.message());
    if (tree.count() < records) ctx.fail("tx recovery lost records: " + std::to_string(tree.count()));
    return;
  }
  Arena<Durable> durable_arena(region.base, region.size, persister);
  Arena<Volatile> volatile_arena(region.base, region.size, persister);
  if (mode == Mode::persist) {
    S<Arena<Durable>> tree(durable_arena, setup.options);
    if (Status s = tree.create(setup.options.capacity); !s) ctx.fail(s.message());
    run_ops(ctx, setup, tree);
    ctx.metric("arena_bytes", static_cast<double>(durable_arena.used()), "B");
  } else {
    S<Arena<Volatile>> tree(volatile_arena, setup.options);
    if (Status s = tree.create(setup.options.capacity); !s) ctx.fail(s.message());
    run_ops(ctx, setup, tree);
    ctx.metric("arena_bytes", static_cast<double>(volatile_arena.used()), "B");
  }
}

// PMDK's map `structure` in a pool file beside the run's pool (named with `copy` where a run has several),
// sized for the run; skips the run where PMDK's maps cannot run it.
std::unique_ptr<pmdk::Map> pmdk_map_for(RunContext& ctx, const Setup& setup, const std::string& structure,
                                         const std::string& copy = "") {
  if (std::string why = pmdk::Map::unavailable_reason(); !why.empty()) ctx.skip(why);
  if (ctx.threads() > 1) ctx.skip("PMDK's example maps are not thread-safe: one thread only");
  if (setup.spec.scan > 0) ctx.skip("PMDK's map.h interface has no range scan");
  if (structure == "pmdk-skiplist" && setup.keys.records > kPmdkSkiplistMaxRecords)
    ctx.skip("PMDK's skiplist_map has 4 levels, a lookup walks ~records/8 nodes: run it with --set records=<" +
             std::to_string(kPmdkSkiplistMaxRecords + 1));
  const std::string path = pool_file_beside(ctx, copy.empty() ? structure : structure + "-" + copy);
  auto map = pmdk::Map::create(structure, path, pmdk::Map::pool_bytes_for(setup.options.capacity, setup.options.value_bytes),
                               setup.options.value_bytes);
  if (!map) ctx.fail(map.status().message());
  return std::move(*map);
}

void run_pmdk(RunContext& ctx, const Setup& setup, const std::string& structure) {
  const std::unique_ptr<pmdk::Map> map = pmdk_map_for(ctx, setup, structure);
  run_ops(ctx, setup, *map);
  if (map->aborts() != 0) ctx.fail(std::to_string(map->aborts()) + " transactions aborted");
  if (Status s = map->reopen(); !s) ctx.fail("PMDK recovery: " + s.message());
  if (Status s = map->check(); !s) ctx.fail("PMDK recovery: " + s.message());
  if (map->count() < setup.keys.records) ctx.fail("PMDK recovery lost records");
}

// The ds.ycsb point a side-by-side case's parameters stand for (ds.vs_pmdk, ds.vs_one_thread): the persist
// mode, no breakdown, the workload's own distribution.
Params persist_point(const Params& p) {
  Params q;
  for (const char* key : {"structure", "medium", "workload", "records", "value", "threads"}) q.set(key, p.json().at(key));
  q.set("mode", "persist");
  q.set("breakdown", "none");
  q.set("distribution", "default");
  return q;
}

// ds.vs_pmdk: the points ds.target divides, side by side in one run. Our persist structure and PMDK's map
// are loaded with the same records; then the two run the same operation stream in alternating 10 ms phases
// over many rounds (bench/side_by_side.hpp). Two separate ds.ycsb runs of the same point lie minutes apart
// in a sweep, and this VM's speed changes over such spans by more than the margin a 2x target has to spare;
// phases of a round fall inside one spell.
//
// Each side runs as `placements` copies, one phase each per round, and a round's ratio is ours' mean
// throughput over PMDK's. Every copy, ours as PMDK's, lives in a pool file of its own beside the run's pool,
// the files made by turns (ours, PMDK's, ours, …): an emulated pool's pages differ in speed by up to several
// times from one stretch of memory to another, a structure that overlaps its cache misses the better (ours)
// moves the most with them, and pages of the run's pool, made at its start, are not drawn as a fresh pool
// file's are (docs/ds.md, "Placements").
template <template <class> class S>
void run_vs_pmdk(RunContext& ctx, const Setup& setup, const std::string& peer) {
  const auto copies = static_cast<size_t>(ctx.params().integer("placements"));
  const uint64_t copy_bytes = arena_bytes_for<S>(setup.options);
  std::vector<std::unique_ptr<PoolBeside>> files;
  std::vector<std::unique_ptr<Arena<Durable>>> arenas;
  std::vector<std::unique_ptr<S<Arena<Durable>>>> trees;
  std::vector<std::unique_ptr<pmdk::Map>> maps;
  for (size_t k = 0; k < copies; ++k) {
    files.push_back(std::make_unique<PoolBeside>(ctx, std::string(S<Arena<Durable>>::kName) + "-" + std::to_string(k),
                                                 copy_bytes));
    arenas.push_back(std::make_unique<Arena<Durable>>(files.back()->data(), files.back()->data_size(), ctx.persister()));
    trees.push_back(std::make_unique<S<Arena<Durable>>>(*arenas.back(), setup.options));
    if (Status s = trees.back()->create(setup.options.capacity); !s) ctx.fail(s.message());
    maps.push_back(pmdk_map_for(ctx, setup, peer, std::to_string(k)));
  }
  // PMDK's flushes and fences counted with ours, per contender.
  BreakdownScope scope("none", true, ctx.model());
  for (size_t k = 0; k < copies; ++k) {
    load_records(ctx, setup, *trees[k]);
    load_records(ctx, setup, *maps[k]);
  }
  const std::vector<Op> ops = std::move(run_streams(setup, 1).front());
  const uint64_t mask = ops.size() - 1;
  const auto value = value_pattern(setup.options.value_bytes, 1000);
  std::vector<std::byte> out(setup.options.value_bytes);
  OpTally ours_tally, peer_tally;
  // Ours are contenders 0 … copies-1, PMDK's copies … 2 copies-1.
  std::vector<Contender> contenders;
  for (size_t k = 0; k < copies; ++k)
    contenders.emplace_back("ours " + std::to_string(k), [&, tree = trees[k].get()](int, uint64_t i) {
      apply_op(*tree, ops[i & mask], value.data(), out.data(), ours_tally);
      return true;
    });
  for (size_t k = 0; k < copies; ++k)
    contenders.emplace_back(peer + " " + std::to_string(k), [&, map = maps[k].get()](int, uint64_t i) {
      apply_op(*map, ops[i & mask], value.data(), out.data(), peer_tally);
      return true;
    });
  const int rounds = ctx.quick() ? 21 : 61;
  const InterleaveResult r = interleave(ctx, rounds, phase_seconds(ctx), contenders);
  if (ours_tally.failed + peer_tally.failed != 0) ctx.fail("inserts ran out of space");
  // Per round, each side's throughput over its placements; per placement, its median over the rounds.
  std::vector<double> ours_rounds, peer_rounds, ratios;
  for (const std::vector<double>& round : r.throughput) {
    double ours = 0, theirs = 0;
    for (size_t k = 0; k < copies; ++k) {
      ours += round[k] / static_cast<double>(copies);
      theirs += round[copies + k] / static_cast<double>(copies);
    }
    ours_rounds.push_back(ours);
    peer_rounds.push_back(theirs);
    ratios.push_back(ours / theirs);
  }
  const auto spread = [&](size_t first) {
    std::vector<double> medians;
    for (size_t k = 0; k < copies; ++k) medians.push_back(median(r.rounds_of(first + k)));
    return *std::max_element(medians.begin(), medians.end()) / *std::min_element(medians.begin(), medians.end());
  };
  ctx.metric("throughput", median(ours_rounds), "ops/s");
  ctx.metric("peer_throughput", median(peer_rounds), "ops/s");
  ctx.metric_samples("ratio", ratios, "ratio");
  ctx.metric("placement_spread", spread(0), "ratio");
  ctx.metric("peer_placement_spread", spread(copies), "ratio");
  for (const bool theirs : {false, true}) {
    persist::Counters sum;
    uint64_t n = 0;
    for (size_t c = theirs ? copies : 0; c < (theirs ? 2 * copies : copies); ++c) {
      sum += r.counters[c];
      n += r.ops[c];
    }
    const double per = static_cast<double>(std::max<uint64_t>(n, 1));
    const std::string prefix = theirs ? "peer_" : "";
    ctx.metric(prefix + "flushes_per_op", static_cast<double>(sum.flushes) / per, "count");
    ctx.metric(prefix + "fences_per_op", static_cast<double>(sum.fences) / per, "count");
    ctx.metric(prefix + "nt_bytes_per_op", static_cast<double>(sum.nt_bytes) / per, "B");
  }
  ctx.metric("rounds", static_cast<double>(r.throughput.size()), "count");
  for (size_t k = 0; k < copies; ++k) {
    if (Status s = trees[k]->check(); !s) ctx.fail("structure broken after the run: " + s.message());
    if (maps[k]->aborts() != 0) ctx.fail(std::to_string(maps[k]->aborts()) + " transactions aborted");
    if (Status s = maps[k]->check(); !s) ctx.fail("PMDK's map broken after the run: " + s.message());
  }
}

void vs_pmdk_body(RunContext& ctx) {
  const Params p = persist_point(ctx.params());
  auto setup = setup_of(p, ctx.threads(), ctx.quick());
  if (!setup) ctx.fail(setup.status().message());
  const std::string& structure = p.text("structure");
  std::string peer;
  for (const auto& [ours, theirs] : kTargetPairs)
    if (ours == structure) peer = theirs;
  if (peer.empty()) ctx.fail("no PMDK peer for " + structure);
  if (structure == "hashtable") run_vs_pmdk<pmlab::ds::Hashtable>(ctx, *setup, peer);
  else run_vs_pmdk<pmlab::ds::BPTree>(ctx, *setup, peer);
}

// ds.vs_one_thread: ds.scaling's targeted points side by side in one run. One persist structure, loaded by
// all the run's threads, runs the threads' operation streams in alternating phases: thread 0 alone on the
// structure's one-thread paths, then every thread on its shared paths (set_concurrent between the phases).
// ds.threads measures the two thread counts in two runs on the same pages, minutes apart in a sweep, and a
// slow spell of this VM then falls on one of them; here it falls on both phases of a round.
template <template <class> class S>
void run_vs_one_thread(RunContext& ctx, const Setup& setup) {
  const int threads = ctx.threads();
  const media::Region& region = ctx.region();
  Arena<Durable> arena(region.base, region.size, ctx.persister());
  S<Arena<Durable>> tree(arena, setup.options);
  if (Status s = tree.create(setup.options.capacity); !s) ctx.fail(s.message());
  load_records(ctx, setup, tree);
  const std::vector<std::vector<Op>> streams = run_streams(setup, threads);
  record_handoffs(ctx, streams);
  const uint64_t mask = streams.front().size() - 1;
  // Each thread's value, read buffer and tallies on lines of their own: the reads copy into `out` and the
  // tallies count at every operation. The buffers are allocated here, by one thread, where the heap would
  // put one thread's `out` beside the next one's value.
  struct alignas(64) PerThread {
    std::byte* value = nullptr;
    std::byte* out = nullptr;
    OpTally tally;
  };
  const size_t stride = (setup.options.value_bytes + 63) / 64 * 64;
  std::vector<std::byte> buffers(2 * stride * static_cast<size_t>(threads) + 64);
  std::byte* const lines = buffers.data() + (64 - reinterpret_cast<uintptr_t>(buffers.data()) % 64) % 64;
  std::vector<PerThread> own(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    PerThread& mine = own[static_cast<size_t>(t)];
    mine.value = lines + 2 * stride * static_cast<size_t>(t);
    mine.out = mine.value + stride;
    const auto value = value_pattern(setup.options.value_bytes, 1000 + static_cast<uint64_t>(t));
    std::copy(value.begin(), value.end(), mine.value);
  }
  std::atomic<bool> switch_failed{false};
  const auto switch_to = [&](bool shared) {
    if (!tree.set_concurrent(shared)) switch_failed.store(true);
  };
  const auto op = [&](int t, uint64_t i) {
    PerThread& mine = own[static_cast<size_t>(t)];
    apply_op(tree, streams[static_cast<size_t>(t)][i & mask], mine.value, mine.out, mine.tally);
    return true;
  };
  std::vector<Contender> contenders{{"1 thread", op}, {std::to_string(threads) + " threads", op}};
  contenders[0].threads = 1;
  contenders[0].before_phase = [&] { switch_to(false); };
  contenders[1].before_phase = [&] { switch_to(true); };
  const int rounds = ctx.quick() ? 21 : 61;
  const InterleaveResult r = interleave(ctx, rounds, phase_seconds(ctx), contenders);
  switch_to(true);
  if (switch_failed.load()) ctx.fail("the structure refused to switch between its one-thread and shared paths");
  ctx.metric("throughput", median(r.rounds_of(1)), "ops/s");
  ctx.metric("throughput_one_thread", median(r.rounds_of(0)), "ops/s");
  ctx.metric_samples("scaling", r.ratios(1, 0), "ratio");
  ctx.metric("rounds", static_cast<double>(r.throughput.size()), "count");
  uint64_t missed = 0;
  for (const PerThread& mine : own) missed += mine.tally.missed;
  // B and C read and update the loaded records only.
  if (missed != 0) ctx.fail(std::to_string(missed) + " lookups missed a loaded record");
  if (Status s = tree.check(); !s) ctx.fail("structure broken after the run: " + s.message());
}

void vs_one_thread_body(RunContext& ctx) {
  const Params p = persist_point(ctx.params());
  auto setup = setup_of(p, ctx.threads(), ctx.quick());
  if (!setup) ctx.fail(setup.status().message());
  if (p.text("structure") == "hashtable") run_vs_one_thread<pmlab::ds::Hashtable>(ctx, *setup);
  else run_vs_one_thread<pmlab::ds::BPTree>(ctx, *setup);
}

// One YCSB run at `p` (ds.ycsb's parameters; ds.update_ratio translates its own into them).
void run_ycsb(RunContext& ctx, const Params& p) {
  auto setup = setup_of(p, ctx.threads(), ctx.quick());
  if (!setup) ctx.fail(setup.status().message());
  const std::string& structure = p.text("structure");
  const std::string& mode_text = p.text("mode");
  const std::string& breakdown = p.text("breakdown");
  const bool pmdk = mode_text == "pmdk";
  if (structure == "list" && setup->keys.records > kListMaxRecords)
    ctx.skip("the list walks every record per lookup: run it with --set records=<" + std::to_string(kListMaxRecords + 1));
  auto mode = pmdk ? Result<Mode>(Mode::tx) : pmlab::ds::parse_mode(mode_text);
  if (!mode) ctx.fail(mode.status().message());
  if (*mode == Mode::persist && !ctx.persister().issues_fences() && ctx.persister().domain() == persist::Domain::none)
    ctx.note("persistence", "the run's durability domain is none: persist mode issues no flush or fence");
  ctx.note("locking", pmdk ? "none (PMDK's maps: one thread)"
                      : ctx.threads() == 1 ? "none (one thread)"
                      : structure == "array"
                          ? "striped version locks (per slot): writers take them, point reads validate them"
                      : structure == "hashtable"
                          ? "striped version locks (per bucket) that writers and scans take; point reads take none "
                            "(a chain walk and the value cell's update count)"
                      : structure == "bptree"
                          ? "version locks per leaf (writers take them, point reads validate them) and a shape version "
                            "that splits take and reads and upserts validate; a reader-writer lock for splits and scans"
                          : "one reader-writer lock");
  if (breakdown != "none")
    ctx.note("breakdown", breakdown + ": " +
                              (breakdown == "no-log" ? "transactions register ranges without undo-logging them"
                               : *mode == Mode::persist ? "the run's persister with elide_" + breakdown.substr(3)
                                                        : "PMDK's libpmem calls elide every " + breakdown.substr(3)) +
                              "; crash guarantees void (a measured cost, not a design)");
  // A 50 ms quick loop of YCSB operations on a shared machine is mostly noise: quick runs measure 0.2 s.
  if (ctx.quick() && ctx.control().ops == 0 && ctx.control().duration_s < kQuickSeconds)
    ctx.control().duration_s = kQuickSeconds;
  // PMDK's flushes and fences are counted into the per-operation counters in the tx and pmdk modes.
  BreakdownScope scope(breakdown, *mode == Mode::tx, ctx.model());
  if (*mode == Mode::tx && !pmdk::interposed() && pmdk::tx::available())
    ctx.note("pmdk_counters", "libpmem's entry points were not interposed before this run: PMDK's flushes may be uncounted");
  if (pmdk) return run_pmdk(ctx, *setup, structure);
  if (is_null_structure(structure)) {
    NullStructure harness;
    const bool spread = structure == kNullPredictableStructure;
    ctx.note("structure", spread ? "null on the same operations with their types spread evenly: the harness's own "
                                   "time per operation without the mispredicted branches of a random mix"
                                 : "null: every operation returns at once; its time per operation is the harness's own");
    return run_ops(ctx, *setup, harness, spread);
  }

  persist::Config config = ctx.persister().config();
  config.elide_flush = *mode == Mode::persist && breakdown == "no-flush";
  config.elide_fence = *mode == Mode::persist && breakdown == "no-fence";
  std::optional<persist::Persister> own;
  if (config.elide_flush || config.elide_fence) {
    auto created = ctx.persister().derive(config);
    if (!created) ctx.skip(created.status().message());
    own.emplace(std::move(*created));
  }
  const persist::Persister& persister = own ? *own : ctx.persister();
  if (structure == "array") run_ours<pmlab::ds::Array>(ctx, p, *setup, *mode, persister);
  else if (structure == "hashtable") run_ours<pmlab::ds::Hashtable>(ctx, p, *setup, *mode, persister);
  else if (structure == "skiplist") run_ours<pmlab::ds::Skiplist>(ctx, p, *setup, *mode, persister);
  else if (structure == "bptree") run_ours<pmlab::ds::BPTree>(ctx, p, *setup, *mode, persister);
  else run_ours<pmlab::ds::List>(ctx, p, *setup, *mode, persister);
}

void body(RunContext& ctx) { run_ycsb(ctx, ctx.params()); }

std::vector<std::string> structures(bool with_list = true) {
  std::vector<std::string> s{"array", "hashtable", "skiplist", "bptree"};
  if (with_list) s.emplace_back("list");
  s.emplace_back(kNullStructure);
  s.emplace_back(kNullPredictableStructure);
  for (const std::string& m : pmdk::Map::names()) s.push_back(m);
  return s;
}

// The records and value parameters every ds YCSB case shares (ds.update_ratio and ds.threads run ds.ycsb
// points).
ParamSpec records_param() {
  return std_params::size("records", "records loaded before the run phase", {"1M"}, {"100K"}, 1, 1LL << 30);
}
ParamSpec value_param() { return std_params::size("value", "bytes per value (keys are 8 bytes)", {"128"}, {"128"}, 8, 1 << 16); }

ParamSpec workload_param() {
  ParamSpec s;
  s.name = "workload";
  s.type = ParamType::text;
  s.doc = "YCSB core workload a|b|c|d|e|f, write-only (100% update), or mix:R/U/I/S/M (percent of "
          "read/update/insert/scan/read-modify-write)";
  s.defaults = {"a", "b", "c", "d", "e", "f", "write-only"};
  s.quick = {"a", "b", "c", "write-only"};
  return s;
}

const CaseRegistration registration{CaseDef{
    .suite = "ds",
    .name = "ycsb",
    .summary = "YCSB throughput and latency per structure x mode x workload ([StoredsBench] Figure 1)",
    .params = {std_params::choice("structure", "the data structure (list: O(n) lookups, small record counts only; "
                                               "null: operations that return at once, the harness's own cost; "
                                               "null-predictable: the same on the operations with their types "
                                               "spread evenly; pmdk-*: PMDK's example maps, mode pmdk)",
                                  structures(), structures(false)),
               std_params::choice("mode", "dram: volatile on DRAM; pmem-volatile: volatile on the pool; persist: "
                                          "crash-consistent on the pool; tx: failure-atomic through PMDK "
                                          "transactions; pmdk: PMDK's example maps (the peers)",
                                  {"dram", "pmem-volatile", "persist", "tx", "pmdk"},
                                  {"dram", "pmem-volatile", "persist", "tx", "pmdk"}),
               std_params::choice("breakdown", "switch one persistence cost off (the decomposition of "
                                               "[PMDKOverheads]; persist, tx and pmdk modes, workloads a and "
                                               "write-only): none, no-flush, no-fence, no-log (tx)",
                                  {"none", "no-flush", "no-fence", "no-log"}, {"none", "no-flush", "no-fence", "no-log"}),
               std_params::medium(),
               workload_param(),
               std_params::choice("distribution", "request distribution; default: the workload's own",
                                  {"default", "uniform", "zipfian", "latest", "hotspot"}, {"default"}),
               records_param(),
               value_param(),
               std_params::threads()},
    .region_bytes = region_bytes,
    .redundant = redundant,
    .body = body,
    // The points ds.target divides (summary.cpp) and the report's "structure by workload" compares (durable
    // modes, one thread), and the DRAM points ds.harness and the persistent-vs-DRAM check hold them
    // against: their verdicts and ratios need an interval even in a quick run.
    .quick_repetitions =
        [](const Params& p) {
          const std::string& mode = p.text("mode");
          const bool compared = mode == "persist" || mode == "tx" || mode == "pmdk" || mode == "dram";
          return compared && p.text("breakdown") == "none" && p.integer("threads") == 1 ? 3 : 0;
        },
}};

// ds.update_ratio: [StoredsBench]'s read/write-ratio axis (Figure 1: 100(R)/0(W) … 0(R)/100(W)), swept for each
// of our structures in each mode: a YCSB mix of reads and updates over zipfian keys, updates% of them updates.
// The ds.ycsb run of mix:(100-u)/u/0/0/0, so both cases measure alike.
// The ds.ycsb point a derived case's parameters stand for: the same structure, mode, medium, records, value
// and threads, on `workload` with the default distribution and no breakdown.
Params ycsb_point(const Params& p, nlohmann::ordered_json workload) {
  Params q;
  for (const char* key : {"structure", "mode", "medium"}) q.set(key, p.json().at(key));
  q.set("breakdown", "none");
  q.set("workload", std::move(workload));
  q.set("distribution", "default");
  for (const char* key : {"records", "value", "threads"}) q.set(key, p.json().at(key));
  return q;
}

Params as_ycsb(const Params& p) {
  const int64_t updates = p.integer("updates");
  return ycsb_point(p, "mix:" + std::to_string(100 - updates) + "/" + std::to_string(updates) + "/0/0/0");
}

// [StoredsBench] §4 quotes four of Figure 1's bars, all on the write-only workload (0(R)/100(W)).
struct PublishedBar {
  const char* structure;
  const char* mode;
  double kops;
};
constexpr PublishedBar kPublishedWriteOnly[] = {
    {"bptree", "dram", 1420}, {"skiplist", "dram", 992}, {"bptree", "tx", 49}, {"skiplist", "tx", 152}};
constexpr const char* kPublishedSource =
    "[StoredsBench] §4 (Figure 1, 0(R)/100(W); PMEM-Trans is the tx mode; their machine and thread count)";

void update_ratio_body(RunContext& ctx) {
  const Params& p = ctx.params();
  run_ycsb(ctx, as_ycsb(p));
  if (p.integer("updates") != 100) return;
  for (const PublishedBar& bar : kPublishedWriteOnly)
    if (p.text("structure") == bar.structure && p.text("mode") == bar.mode)
      ctx.metric("published_throughput", bar.kops * 1e3, "ops/s", MetricKind::published, kPublishedSource);
}

const CaseRegistration update_ratio{CaseDef{
    .suite = "ds",
    .name = "update_ratio",
    .summary = "throughput versus the share of updates (0-100%) per structure and mode ([StoredsBench] Figure 1)",
    .params = {std_params::choice("structure", "the data structure", {"array", "hashtable", "skiplist", "bptree"},
                                  {"array", "hashtable", "skiplist", "bptree"}),
               std_params::choice("mode", "dram | pmem-volatile | persist | tx, as in ds.ycsb",
                                  {"dram", "pmem-volatile", "persist", "tx"}, {"dram", "pmem-volatile", "persist", "tx"}),
               std_params::medium(),
               ParamSpec{.name = "updates",
                         .type = ParamType::integer,
                         .doc = "percent of operations that are updates; the rest are reads",
                         .defaults = {"0", "25", "50", "75", "100"},
                         .quick = {"0", "25", "50", "75", "100"},
                         .choices = {},
                         .min = 0,
                         .max = 100},
               records_param(),
               value_param(),
               std_params::threads()},
    .region_bytes = [](const Params& p) { return region_bytes(as_ycsb(p)); },
    .redundant = [](const Params& p) { return redundant(as_ycsb(p)); },
    .body = update_ratio_body,
}};

// ds.threads: each structure at 1 and 2 threads on the read-mostly workloads (B: 95% reads, C: reads only),
// in DRAM and persist modes: the ds.ycsb run of the same point, so both cases measure alike; ds.scaling
// (summary.cpp) divides the 2-thread throughput by the 1-thread one.
Params threads_as_ycsb(const Params& p) { return ycsb_point(p, p.json().at("workload")); }

const CaseRegistration threads_case{CaseDef{
    .suite = "ds",
    .name = "threads",
    .summary = "each structure at 1 and 2 threads on YCSB B and C, DRAM and persist modes (ds.scaling: the ratio)",
    .params = {std_params::choice("structure", "the data structure", {"array", "hashtable", "skiplist", "bptree"},
                                  {"array", "hashtable", "skiplist", "bptree"}),
               std_params::choice("mode", "dram | persist, as in ds.ycsb", {"dram", "persist"}, {"dram", "persist"}),
               std_params::medium(),
               std_params::choice("workload", "the read-mostly YCSB workloads: b (95% reads, 5% updates), c (reads)",
                                  {"b", "c"}, {"b", "c"}),
               records_param(),
               value_param(),
               std_params::threads({"1", "2"}, {"1", "2"})},
    .region_bytes = [](const Params& p) { return region_bytes(threads_as_ycsb(p)); },
    .redundant = [](const Params& p) { return redundant(threads_as_ycsb(p)); },
    .body = [](RunContext& ctx) { run_ycsb(ctx, threads_as_ycsb(ctx.params())); },
    // ds.scaling's targeted points (persist B+-tree and hashtable) divide two runs: an interval even quick.
    .quick_repetitions =
        [](const Params& p) {
          const std::string& s = p.text("structure");
          return p.text("mode") == "persist" && (s == "bptree" || s == "hashtable") ? 3 : 0;
        },
}};


const CaseRegistration vs_pmdk_case{CaseDef{
    .suite = "ds",
    .name = "vs_pmdk",
    .summary = "our persist B+-tree and hashtable against PMDK's btree and hashmap_tx in alternating phases of one "
               "run (ds.target's ratio)",
    .params = {std_params::choice("structure", "ours; the peer: bptree - pmdk-btree, hashtable - pmdk-hashmap-tx",
                                  {"bptree", "hashtable"}, {"bptree", "hashtable"}),
               std_params::choice("medium", "pool: every copy, ours and PMDK's, in a pool file beside the run's pool", {"pool"},
                                  {"pool"}),
               std_params::choice("workload", "ds.target's workloads", {"a", "b", "c", "write-only"},
                                  {"a", "b", "c", "write-only"}),
               records_param(),
               value_param(),
               std_params::threads({"1"}, {"1"}),
               std_params::size("placements",
                                "copies of each side, each in a pool file of its own beside the run's pool, one phase "
                                "each per round (the ratio: ours' mean throughput over PMDK's)",
                                {"3"}, {"3"}, 1, 8)},
    // Every copy lives in a file of its own: from the run's pool only the directory (one page).
    .region_bytes = [](const Params&) -> uint64_t { return 4096; },
    .redundant = {},
    .body = vs_pmdk_body,
}};

const CaseRegistration vs_one_thread_case{CaseDef{
    .suite = "ds",
    .name = "vs_one_thread",
    .summary = "our persist B+-tree and hashtable at N threads against one thread, in alternating phases of one run "
               "on one structure (ds.scaling's ratio)",
    .params = {std_params::choice("structure", "the structures ds.scaling holds to its target", {"bptree", "hashtable"},
                                  {"bptree", "hashtable"}),
               std_params::choice("medium", "the run's pool", {"pool"}, {"pool"}),
               std_params::choice("workload", "ds.scaling's workloads: b (95% reads, 5% updates), c (reads)", {"b", "c"},
                                  {"b", "c"}),
               records_param(),
               value_param(),
               [] {
                 ParamSpec t = std_params::threads({"2"}, {"2"});
                 t.doc = "threads of the shared phases (the other phases run one); at least 2";
                 t.min = 2;
                 return t;
               }()},
    .region_bytes = [](const Params& p) { return region_bytes(persist_point(p)); },
    .redundant = {},
    .body = vs_one_thread_body,
}};

}  // namespace
}  // namespace pmlab::suites::ds
