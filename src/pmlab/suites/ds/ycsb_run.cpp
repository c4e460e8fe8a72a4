// ds.ycsb's run (ycsb_run.hpp): setup, load, the timed loop, and each kind of contender in it.
#include "pmlab/suites/ds/ycsb_run.hpp"

#include <algorithm>

#include "pmlab/ds/common/mode.hpp"
#include "pmlab/ds/common/structure.hpp"
#include "pmlab/ds/structures.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/pmdk/environment.hpp"
#include "pmlab/pmdk/obj_pool.hpp"
#include "pmlab/pmdk/tx.hpp"
#include "pmlab/pool/scratch.hpp"
#include "pmlab/suites/ds/contenders.hpp"
#include "pmlab/workload/handoffs.hpp"

namespace pmlab::suites::ds {

using namespace bench;
using pmlab::ds::Arena;
using pmlab::ds::Durable;
using pmlab::ds::Mode;
using pmlab::ds::Options;
using pmlab::ds::StructureTag;
using pmlab::ds::Transactional;
using pmlab::ds::Volatile;
using workload::Op;

namespace {

// The list looks every key up by walking it: beyond this many records a run would not finish.
constexpr uint64_t kListMaxRecords = 50000;
// PMDK's skiplist_map has 4 levels (SKIPLIST_LEVELS_NUM): a lookup walks ~records/8 nodes.
constexpr uint64_t kPmdkSkiplistMaxRecords = 20000;
constexpr double kQuickSeconds = 0.2;

template <template <class> class S>
uint64_t bytes_for(const Params& p) {
  const int threads = static_cast<int>(p.integer("threads"));
  // Sized for the full sweep's stream, the longer: a quick run's inserts fit in it too.
  auto s = setup_of(p, threads, /*quick=*/false);
  return arena_bytes_for<S>(s ? s->options : Options{});
}

// Bytes of the structure's arena (tx mode: inside its libpmemobj pool).
uint64_t arena_bytes(const Params& p) {
  return pmlab::ds::visit_structure(p.text("structure"),
                                    [&p]<template <class> class S>(StructureTag<S>) { return bytes_for<S>(p); });
}

// The harness's own cost per operation (ratios between designs are compressed by whatever every operation
// pays outside the structure): a structure whose operations return at once, driven by the same loop as the
// others — operation dispatch, key and value handling, sampled timing. It reads the key and the value's
// first byte so the compiler keeps the dispatch. Threads share it as they share a structure: what it
// writes on every operation is the thread's own, or two threads would time one line moving between their
// cores; only the record count (inserts) is shared.
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

// Load, run phase and checks over any structure with the Structure interface (ours in every mode, the
// null structures and PMDK's maps).
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
  ctx.metric("miss_ratio",
             lookups.load() ? static_cast<double>(misses.load()) / static_cast<double>(lookups.load()) : 0.0, "ratio");
  if (Status s = tree.check(); !s) ctx.fail("structure broken after the run: " + s.message());
}

// The file for a libpmemobj pool beside the run's pool.
std::string pool_file_beside(RunContext& ctx, const std::string& what) {
  auto dir = pmdk::directory_of_mapping(ctx.region().base);
  if (!dir) ctx.skip("no directory for PMDK's pool: " + dir.status().message());
  ctx.note("pmem_is_pmem_force", std::to_string(pmdk::force_pmem_is_pmem()) +
                                     " (PMEM_IS_PMEM_FORCE as PMDK read it; pmlab sets 1 unless the user set it, "
                                     "so PMDK flushes instead of msync on an emulated pool)");
  return pool::scratch_pool_path(*dir, "ds-" + what);
}

// Our structure S in the tx mode: its arena in a libpmemobj pool beside the run's pool, then recovered as
// after a crash (PMDK's recovery by reopening the pool, then the structure's over the arena).
template <template <class> class S>
void run_transactional(RunContext& ctx, const Params& p, const Setup& setup, const persist::Persister& persister) {
  if (!pmdk::tx::available()) ctx.skip("pmlab was built without libpmemobj (install libpmemobj-dev and rebuild)");
  const std::string path = pool_file_beside(ctx, std::string(StructureTag<S>::kName) + "-tx");
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
}

// Our structure S in a mode on the run's region: durable (persist) or volatile (dram, pmem-volatile).
template <template <class> class S, class M>
void run_in_region(RunContext& ctx, const Setup& setup, const persist::Persister& persister) {
  const media::Region& region = ctx.region();
  Arena<M> arena(region.base, region.size, persister);
  S<Arena<M>> tree(arena, setup.options);
  if (Status s = tree.create(setup.options.capacity); !s) ctx.fail(s.message());
  run_ops(ctx, setup, tree);
  ctx.metric("arena_bytes", static_cast<double>(arena.used()), "B");
}

// The persister our structure runs with: the run's, or one that elides what a persist-mode breakdown
// switches off.
std::optional<persist::Persister> breakdown_persister(RunContext& ctx, Mode mode, const std::string& breakdown) {
  persist::Config config = ctx.persister().config();
  config.elide_flush = mode == Mode::persist && breakdown == "no-flush";
  config.elide_fence = mode == Mode::persist && breakdown == "no-fence";
  if (!config.elide_flush && !config.elide_fence) return std::nullopt;
  auto derived = ctx.persister().derive(config);
  if (!derived) ctx.skip(derived.status().message());
  return std::move(*derived);
}

void run_structure(RunContext& ctx, const Params& p, const Setup& setup, Mode mode) {
  const std::string& structure = p.text("structure");
  if (structure == pmlab::ds::kListName && setup.keys.records > kListMaxRecords)
    ctx.skip("the list walks every record per lookup: run it with --set records=<" +
             std::to_string(kListMaxRecords + 1));
  if (mode == Mode::persist && !ctx.persister().issues_fences() && ctx.persister().domain() == persist::Domain::none)
    ctx.note("persistence", "the run's durability domain is none: persist mode issues no flush or fence");
  const std::optional<persist::Persister> own = breakdown_persister(ctx, mode, p.text("breakdown"));
  const persist::Persister& persister = own ? *own : ctx.persister();
  pmlab::ds::visit_structure(structure, [&]<template <class> class S>(StructureTag<S>) {
    if (ctx.threads() > 1) ctx.note("locking", StructureTag<S>::kLocking);
    if (mode == Mode::tx) run_transactional<S>(ctx, p, setup, persister);
    else if (mode == Mode::persist) run_in_region<S, Durable>(ctx, setup, persister);
    else run_in_region<S, Volatile>(ctx, setup, persister);
  });
}

void run_harness(RunContext& ctx, const Setup& setup, const std::string& structure) {
  NullStructure harness;
  const bool spread = structure == kNullPredictableStructure;
  ctx.note("structure", spread ? "null on the same operations with their types spread evenly: the harness's own "
                                 "time per operation without the mispredicted branches of a random mix"
                               : "null: every operation returns at once; its time per operation is the harness's own");
  run_ops(ctx, setup, harness, spread);
}

void run_pmdk_map(RunContext& ctx, const Setup& setup, const std::string& structure) {
  const std::unique_ptr<pmdk::Map> map = pmdk_map_for(ctx, setup, structure);
  run_ops(ctx, setup, *map);
  if (map->aborts() != 0) ctx.fail(std::to_string(map->aborts()) + " transactions aborted");
  if (Status s = map->reopen(); !s) ctx.fail("PMDK recovery: " + s.message());
  if (Status s = map->check(); !s) ctx.fail("PMDK recovery: " + s.message());
  if (map->count() < setup.keys.records) ctx.fail("PMDK recovery lost records");
}

// What a breakdown run's context says it switched off.
void note_breakdown(RunContext& ctx, const std::string& breakdown, bool persist_mode) {
  if (breakdown == "none") return;
  ctx.note("breakdown", breakdown + ": " +
                            (breakdown == "no-log" ? "transactions register ranges without undo-logging them"
                             : persist_mode        ? "the run's persister with elide_" + breakdown.substr(3)
                                                   : "PMDK's libpmem calls elide every " + breakdown.substr(3)) +
                            "; crash guarantees void (a measured cost, not a design)");
}

}  // namespace

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

std::vector<std::byte> value_pattern(uint32_t bytes, uint64_t seed) {
  std::vector<std::byte> v(bytes);
  for (uint32_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>(seed * 131 + i * 7);
  return v;
}

std::vector<std::vector<Op>> run_streams(const Setup& setup, int threads, bool types_spread) {
  std::vector<std::vector<Op>> streams(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    streams[static_cast<size_t>(t)] =
        workload::run_ops(setup.spec, setup.keys, setup.ops_per_thread, 0x5eed, t, threads);
  if (types_spread)
    for (std::vector<Op>& stream : streams) stream = workload::with_types_spread(stream);
  return streams;
}

void record_handoffs(RunContext& ctx, const std::vector<std::vector<Op>>& streams) {
  if (streams.size() > 1)
    if (const auto handoffs = workload::record_handoffs_per_op(streams))
      ctx.metric("record_handoffs_per_op", *handoffs, "ratio", MetricKind::modelled,
                 "record hand-offs: threads in lockstep, unbounded caches (workload/handoffs.hpp)");
}

BreakdownScope::BreakdownScope(const std::string& breakdown, bool pmdk_persistence, persist::Observer* model)
    : persistence_({.count = pmdk_persistence,
                    .elide_flush = breakdown == "no-flush",
                    .elide_fence = breakdown == "no-fence",
                    .observer = model}) {
  pmdk::tx::set_logging(breakdown != "no-log");
}

BreakdownScope::~BreakdownScope() { pmdk::tx::set_logging(true); }

PoolBeside::PoolBeside(RunContext& ctx, const std::string& what, uint64_t data_bytes)
    : path_(pool_file_beside(ctx, what)) {
  const uint64_t size = (data_bytes + 2 * pool::kHeaderSize - 1) / pool::kHeaderSize * pool::kHeaderSize;
  auto made = pool::Pool::create(path_, size, "bench");
  if (!made) ctx.fail(made.status().message());
  pool_ = std::move(*made);
  media::prefault_for_writing(pool_->data(), pool_->data_size());
}

PoolBeside::~PoolBeside() {
  pool_.reset();
  (void)pool::remove(path_);
}

std::unique_ptr<pmdk::Map> pmdk_map_for(RunContext& ctx, const Setup& setup, const std::string& structure,
                                        const std::string& copy) {
  if (std::string why = pmdk::Map::unavailable_reason(); !why.empty()) ctx.skip(why);
  if (ctx.threads() > 1) ctx.skip("PMDK's example maps are not thread-safe: one thread only");
  if (setup.spec.scan > 0) ctx.skip("PMDK's map.h interface has no range scan");
  if (structure == "pmdk-skiplist" && setup.keys.records > kPmdkSkiplistMaxRecords)
    ctx.skip("PMDK's skiplist_map has 4 levels, a lookup walks ~records/8 nodes: run it with --set records=<" +
             std::to_string(kPmdkSkiplistMaxRecords + 1));
  const std::string path = pool_file_beside(ctx, copy.empty() ? structure : structure + "-" + copy);
  auto map =
      pmdk::Map::create(structure, path, pmdk::Map::pool_bytes_for(setup.options.capacity, setup.options.value_bytes),
                        setup.options.value_bytes);
  if (!map) ctx.fail(map.status().message());
  return std::move(*map);
}

// The tx mode and PMDK's maps live in libpmemobj pools of their own; from the run's pool they take one page,
// whose file tells them the directory to put theirs in.
uint64_t region_bytes(const Params& p) {
  if (p.text("mode") == "tx" || contender_kind(p.text("structure")) != ContenderKind::structure) return 4096;
  return arena_bytes(p);
}

std::optional<std::string> redundant(const Params& p) {
  const std::string& mode_text = p.text("mode");
  const std::optional<ContenderKind> kind = contender_kind(p.text("structure"));
  if (kind == ContenderKind::harness && (mode_text != "dram" || p.text("breakdown") != "none"))
    return std::string("the null structure measures the harness: DRAM mode, no breakdown");
  const bool pmdk_mode = mode_text == "pmdk";
  if (pmdk_mode != (kind == ContenderKind::pmdk_map))
    return std::string("PMDK's example maps run in mode pmdk, and only they do");
  auto mode = pmlab::ds::parse_mode(mode_text);
  const char* medium = pmdk_mode ? "pool" : mode ? pmlab::ds::medium_of(*mode) : p.text("medium").c_str();
  const std::string& breakdown = p.text("breakdown");
  if (media::names_a_node(p.text("medium"))) {
    // A node's memory stands in for the mode's own where the harness provides that memory: DRAM mode's
    // buffer and persist mode's pool (its write-backs and fences then reach the node). tx and PMDK's maps
    // map pool files of their own; pmem-volatile on a node is DRAM mode there.
    if (!mode || (*mode != Mode::dram && *mode != Mode::persist))
      return "on a NUMA node the dram and persist modes run (mode " + mode_text + " runs on " + medium + ")";
    if (kind == ContenderKind::harness || breakdown != "none")
      return std::string("on a NUMA node the structures run without a breakdown (the harness is measured on DRAM)");
    return std::nullopt;
  }
  if (p.text("medium") != medium) return std::string("mode ") + mode_text + " runs on " + medium;
  if (breakdown != "none") {
    if (mode_text != "persist" && mode_text != "tx" && !pmdk_mode)
      return std::string("the breakdown switches off persistence costs: persist, tx and pmdk modes only");
    if (p.text("workload") != "a" && p.text("workload") != "write-only")
      return std::string("the breakdown runs on the write-heavy workloads a and write-only");
    if (breakdown == "no-log" && mode_text != "tx")
      return std::string(
          "no-log: the persist mode keeps no log, and PMDK's maps add their undo-log ranges "
          "inside PMDK's own sources");
  }
  return std::nullopt;
}

void run_ycsb(RunContext& ctx, const Params& p) {
  auto setup = setup_of(p, ctx.threads(), ctx.quick());
  if (!setup) ctx.fail(setup.status().message());
  const std::string& structure = p.text("structure");
  const std::string& breakdown = p.text("breakdown");
  const std::optional<ContenderKind> kind = contender_kind(structure);
  if (!kind) ctx.fail("no contender is called '" + structure + "'");
  std::optional<Mode> mode;
  if (*kind == ContenderKind::structure) {
    auto parsed = pmlab::ds::parse_mode(p.text("mode"));
    if (!parsed) ctx.fail(parsed.status().message());
    mode = *parsed;
  }
  if (*kind == ContenderKind::pmdk_map) ctx.note("locking", "none (PMDK's maps: one thread)");
  else if (ctx.threads() == 1) ctx.note("locking", "none (one thread)");
  else if (*kind == ContenderKind::harness)
    ctx.note("locking", "none (each thread writes its own; inserts count atomically)");
  note_breakdown(ctx, breakdown, mode == Mode::persist);
  // A 50 ms quick loop of YCSB operations on a shared machine is mostly noise: quick runs measure 0.2 s.
  if (ctx.quick() && ctx.control().ops == 0 && ctx.control().duration_s < kQuickSeconds)
    ctx.control().duration_s = kQuickSeconds;
  // PMDK's flushes and fences are counted into the per-operation counters where PMDK persists: our
  // structures in the tx mode and PMDK's maps.
  const bool pmdk_persists = mode == Mode::tx || *kind == ContenderKind::pmdk_map;
  BreakdownScope scope(breakdown, pmdk_persists, ctx.model());
  if (pmdk_persists && !pmdk::interposed() && pmdk::tx::available())
    ctx.note("pmdk_counters",
             "libpmem's entry points were not interposed before this run: PMDK's flushes may be uncounted");
  switch (*kind) {
    case ContenderKind::structure: return run_structure(ctx, p, *setup, *mode);
    case ContenderKind::harness: return run_harness(ctx, *setup, structure);
    case ContenderKind::pmdk_map: return run_pmdk_map(ctx, *setup, structure);
  }
}

Params ycsb_point(const Params& p, nlohmann::ordered_json workload) {
  Params q;
  for (const char* key : {"structure", "mode", "medium"}) q.set(key, p.json().at(key));
  q.set("breakdown", "none");
  q.set("workload", std::move(workload));
  q.set("distribution", "default");
  for (const char* key : {"records", "value", "threads"}) q.set(key, p.json().at(key));
  return q;
}

Params persist_point(const Params& p) {
  Params q;
  for (const char* key : {"structure", "medium", "workload", "records", "value", "threads"})
    q.set(key, p.json().at(key));
  q.set("mode", "persist");
  q.set("breakdown", "none");
  q.set("distribution", "default");
  return q;
}

ParamSpec records_param() {
  return std_params::size("records", "records loaded before the run phase", {"1M"}, {"100K"}, 1, 1LL << 30);
}

ParamSpec value_param() {
  return std_params::size("value", "bytes per value (keys are 8 bytes)", {"128"}, {"128"}, 8, 1 << 16);
}

ParamSpec workload_param() {
  ParamSpec s;
  s.name = "workload";
  s.type = ParamType::text;
  s.doc =
      "YCSB core workload a|b|c|d|e|f, write-only (100% update), or mix:R/U/I/S/M (percent of "
      "read/update/insert/scan/read-modify-write)";
  s.defaults = {"a", "b", "c", "d", "e", "f", "write-only"};
  s.quick = {"a", "b", "c", "write-only"};
  return s;
}

}  // namespace pmlab::suites::ds
