// The ds suite's side-by-side cases: a target's two sides in alternating phases of one run
// (bench/side_by_side.hpp), each side a ds.ycsb point (ycsb_run.hpp). ds.vs_pmdk holds our structure
// against PMDK's map (ds.target's ratio), ds.vs_one_thread a structure at N threads against one thread
// (ds.scaling's ratio).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/side_by_side.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/ds/structures.hpp"
#include "pmlab/suites/ds/contenders.hpp"
#include "pmlab/suites/ds/ycsb_run.hpp"

namespace pmlab::suites::ds {
namespace {

using namespace bench;
using pmlab::ds::Arena;
using pmlab::ds::Durable;
using pmlab::ds::StructureTag;
using workload::Op;

// ds.vs_pmdk's metrics from its interleaved run: contenders 0 … copies-1 are ours, copies … 2 copies-1
// PMDK's. Per round, each side's throughput over its placements; per placement, its median over the
// rounds; per side, the flushes, fences and non-temporal bytes per operation.
void record_sides(RunContext& ctx, const InterleaveResult& r, size_t copies) {
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
    files.push_back(
        std::make_unique<PoolBeside>(ctx, std::string(StructureTag<S>::kName) + "-" + std::to_string(k), copy_bytes));
    arenas.push_back(
        std::make_unique<Arena<Durable>>(files.back()->data(), files.back()->data_size(), ctx.persister()));
    trees.push_back(std::make_unique<S<Arena<Durable>>>(*arenas.back(), setup.options));
    if (Status s = trees.back()->create(setup.options.capacity); !s) ctx.fail(s.message());
    maps.push_back(pmdk_map_for(ctx, setup, peer, std::to_string(k)));
  }
  // PMDK's flushes and fences counted with ours, per contender.
  BreakdownScope scope("none", /*pmdk_persistence=*/true, ctx.model());
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
  record_sides(ctx, r, copies);
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
  const std::optional<std::string> peer = pmdk_peer_of(structure);
  if (!peer) ctx.fail("no PMDK peer for " + structure);
  pmlab::ds::visit_structure(structure,
                             [&]<template <class> class S>(StructureTag<S>) { run_vs_pmdk<S>(ctx, *setup, *peer); });
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
  pmlab::ds::visit_structure(p.text("structure"),
                             [&]<template <class> class S>(StructureTag<S>) { run_vs_one_thread<S>(ctx, *setup); });
}

const CaseRegistration vs_pmdk_case{CaseDef{
    .suite = "ds",
    .name = "vs_pmdk",
    .summary = "our persist B+-tree and hashtable against PMDK's btree and hashmap_tx in alternating phases of one "
               "run (ds.target's ratio)",
    .params = {std_params::choice("structure", "ours; the peer: bptree - pmdk-btree, hashtable - pmdk-hashmap-tx",
                                  targeted_names(), targeted_names()),
               std_params::choice("medium", "pool: every copy, ours and PMDK's, in a pool file beside the run's pool",
                                  {"pool"}, {"pool"}),
               std_params::choice("workload", "ds.target's workloads", {"a", "b", "c", "write-only"},
                                  {"a", "b", "c", "write-only"}),
               records_param(), value_param(), std_params::threads({"1"}, {"1"}),
               std_params::size("placements",
                                "copies of each side, each in a pool file of its own beside the run's pool, one phase "
                                "each per round (the ratio: ours' mean throughput over PMDK's)",
                                {"3"}, {"3"}, 1, 8)},
    // Every copy lives in a file of its own: from the run's pool only the directory (one page).
    .region_bytes = [](const Params&) -> uint64_t { return 4096; },
    .body = vs_pmdk_body,
}};

const CaseRegistration vs_one_thread_case{CaseDef{
    .suite = "ds",
    .name = "vs_one_thread",
    .summary = "our persist B+-tree and hashtable at N threads against one thread, in alternating phases of one run "
               "on one structure (ds.scaling's ratio)",
    .params = {std_params::choice("structure", "the structures ds.scaling holds to its target", targeted_names(),
                                  targeted_names()),
               std_params::choice("medium", "the run's pool", {"pool"}, {"pool"}),
               std_params::choice("workload", "ds.scaling's workloads: b (95% reads, 5% updates), c (reads)",
                                  {"b", "c"}, {"b", "c"}),
               records_param(), value_param(),
               [] {
                 ParamSpec t = std_params::threads({"2"}, {"2"});
                 t.doc = "threads of the shared phases (the other phases run one); at least 2";
                 t.min = 2;
                 return t;
               }()},
    .region_bytes = [](const Params& p) { return region_bytes(persist_point(p)); },
    .body = vs_one_thread_body,
}};

}  // namespace
}  // namespace pmlab::suites::ds
