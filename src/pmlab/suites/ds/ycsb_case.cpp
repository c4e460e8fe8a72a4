// ds.ycsb: one YCSB workload over one structure in one mode. The structure is loaded with `records`
// records (in parallel, one share per thread, untimed), each thread's run-phase operations are generated
// before the timed loop, and the loop only executes them (wrapping around its stream; a repeated insert
// is an upsert). Modes: dram (volatile on DRAM), pmem-volatile (volatile on the pool), persist (durable on
// the pool); a mode on the other medium is left out of the sweep.
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/ds/array/array.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/common/mode.hpp"
#include "pmlab/ds/common/structure.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ds/list/list.hpp"
#include "pmlab/ds/skiplist/skiplist.hpp"
#include "pmlab/workload/ycsb.hpp"

namespace pmlab::suites::ds {
namespace {

using namespace bench;
using pmlab::ds::Durable;
using pmlab::ds::Mode;
using pmlab::ds::Options;
using pmlab::ds::Volatile;
using workload::Op;
using workload::OpType;

// The list looks every key up by walking it: beyond this many records a run would not finish.
constexpr uint64_t kListMaxRecords = 50000;

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

template <template <class> class S>
uint64_t bytes_for(const Params& p) {
  const int threads = static_cast<int>(p.integer("threads"));
  auto s = setup_of(p, threads, true);
  Options o;
  if (s) o = s->options;
  // The full sweep generates 4x the operations: size for it, plus slack for the allocator's rounding.
  if (s) o.capacity = workload::records_after_run(s->spec, s->keys, 1u << 20, threads);
  return S<Durable>::bytes_needed(o) * 5 / 4 + (1u << 20);
}

uint64_t region_bytes(const Params& p) {
  const std::string& s = p.text("structure");
  if (s == "array") return bytes_for<pmlab::ds::Array>(p);
  if (s == "hashtable") return bytes_for<pmlab::ds::Hashtable>(p);
  if (s == "skiplist") return bytes_for<pmlab::ds::Skiplist>(p);
  if (s == "bptree") return bytes_for<pmlab::ds::BPTree>(p);
  return bytes_for<pmlab::ds::List>(p);
}

std::optional<std::string> redundant(const Params& p) {
  auto mode = pmlab::ds::parse_mode(p.text("mode"));
  if (mode && p.text("medium") != pmlab::ds::medium_of(*mode))
    return std::string("mode ") + p.text("mode") + " runs on " + pmlab::ds::medium_of(*mode);
  return std::nullopt;
}

std::vector<std::byte> value_pattern(uint32_t bytes, uint64_t seed) {
  std::vector<std::byte> v(bytes);
  for (uint32_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>(seed * 131 + i * 7);
  return v;
}

template <class Tree, class M>
void run_structure(RunContext& ctx, const Setup& setup) {
  const media::Region& region = ctx.region();
  pmlab::ds::Arena<M> arena(region.base, region.size, ctx.persister());
  Tree tree(arena, setup.options);
  if (Status s = tree.create(setup.options.capacity); !s) ctx.fail(s.message());
  const int threads = ctx.threads();

  // Load phase: untimed, one share of the records per thread.
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
  if (load_failures.load() != 0) ctx.fail("load phase ran out of arena space (" + std::to_string(load_failures.load()) + " inserts failed)");
  if (tree.count() != setup.keys.records)
    ctx.fail("load phase holds " + std::to_string(tree.count()) + " records, expected " + std::to_string(setup.keys.records));

  // Run phase streams, generated outside the timed loop.
  std::vector<std::vector<Op>> streams(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    streams[static_cast<size_t>(t)] = workload::run_ops(setup.spec, setup.keys, setup.ops_per_thread, 0x5eed, t, threads);

  std::atomic<uint64_t> misses{0}, failures{0}, lookups{0};
  ctx.run_threads([&](ThreadState& t) {
    const std::vector<Op>& ops = streams[static_cast<size_t>(t.index())];
    const uint64_t mask = ops.size() - 1;  // a power of two
    const auto value = value_pattern(setup.options.value_bytes, 1000 + static_cast<uint64_t>(t.index()));
    std::vector<std::byte> out(setup.options.value_bytes);
    uint64_t missed = 0, failed = 0, looked_up = 0;
    t.measure([&](uint64_t i) {
      const Op& op = ops[i & mask];
      switch (op.type) {
        case OpType::read:
          ++looked_up;
          missed += !tree.read(op.key, op.record, out.data());
          break;
        case OpType::update:
          ++looked_up;
          missed += !tree.update(op.key, op.record, value.data());
          break;
        case OpType::insert:
          failed += !tree.insert(op.key, op.record, value.data());
          break;
        case OpType::scan:
          tree.scan(op.key, op.record, op.scan_length, out.data());
          break;
        case OpType::read_modify_write:
          ++looked_up;
          if (tree.read(op.key, op.record, out.data())) {
            out[0] ^= std::byte{1};
            tree.update(op.key, op.record, out.data());
          } else {
            ++missed;
          }
          break;
      }
    });
    misses.fetch_add(missed);
    failures.fetch_add(failed);
    lookups.fetch_add(looked_up);
  });
  if (failures.load() != 0) ctx.fail(std::to_string(failures.load()) + " inserts ran out of arena space");
  ctx.metric("miss_ratio", lookups.load() ? static_cast<double>(misses.load()) / static_cast<double>(lookups.load()) : 0.0,
             "ratio");
  ctx.metric("arena_bytes", static_cast<double>(arena.used()), "B");
  if (Status s = tree.check(); !s) ctx.fail("structure broken after the run: " + s.message());
}

template <template <class> class S>
void dispatch_mode(RunContext& ctx, const Setup& setup, Mode mode) {
  if (mode == Mode::persist)
    run_structure<S<Durable>, Durable>(ctx, setup);
  else
    run_structure<S<Volatile>, Volatile>(ctx, setup);
}

void body(RunContext& ctx) {
  const Params& p = ctx.params();
  auto setup = setup_of(p, ctx.threads(), ctx.quick());
  if (!setup) ctx.fail(setup.status().message());
  auto mode = pmlab::ds::parse_mode(p.text("mode"));
  if (!mode) ctx.fail(mode.status().message());
  const std::string& structure = p.text("structure");
  if (structure == "list" && setup->keys.records > kListMaxRecords)
    ctx.skip("the list walks every record per lookup: run it with --set records=<" + std::to_string(kListMaxRecords + 1));
  if (*mode == Mode::persist && !ctx.persister().issues_fences() && ctx.persister().domain() == persist::Domain::none)
    ctx.note("persistence", "the run's durability domain is none: persist mode issues no flush or fence");
  ctx.note("locking", ctx.threads() == 1 ? "none (one thread)"
                      : structure == "array" || structure == "hashtable" ? "striped spinlocks (per slot / bucket)"
                                                                           : "one reader-writer lock");
  if (structure == "array") dispatch_mode<pmlab::ds::Array>(ctx, *setup, *mode);
  else if (structure == "hashtable") dispatch_mode<pmlab::ds::Hashtable>(ctx, *setup, *mode);
  else if (structure == "skiplist") dispatch_mode<pmlab::ds::Skiplist>(ctx, *setup, *mode);
  else if (structure == "bptree") dispatch_mode<pmlab::ds::BPTree>(ctx, *setup, *mode);
  else dispatch_mode<pmlab::ds::List>(ctx, *setup, *mode);
}

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
    .summary = "YCSB throughput and latency per structure x mode x workload (seed 001 Figure 1)",
    .params = {std_params::choice("structure", "the data structure (list: O(n) lookups, small record counts only)",
                                  {"array", "hashtable", "skiplist", "bptree", "list"},
                                  {"array", "hashtable", "skiplist", "bptree"}),
               std_params::choice("mode", "dram: volatile on DRAM; pmem-volatile: volatile on the pool; persist: "
                                          "crash-consistent on the pool",
                                  {"dram", "pmem-volatile", "persist"}, {"dram", "pmem-volatile", "persist"}),
               std_params::medium(),
               workload_param(),
               std_params::choice("distribution", "request distribution; default: the workload's own",
                                  {"default", "uniform", "zipfian", "latest", "hotspot"}, {"default"}),
               std_params::size("records", "records loaded before the run phase", {"1M"}, {"100K"}, 1, 1LL << 30),
               std_params::size("value", "bytes per value (keys are 8 bytes)", {"128"}, {"128"}, 8, 1 << 16),
               std_params::threads()},
    .region_bytes = region_bytes,
    .redundant = redundant,
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::ds
