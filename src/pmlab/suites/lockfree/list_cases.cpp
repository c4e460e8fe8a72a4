// lockfree.list and lockfree.list_latency: the sorted sets of [PMIdioBench] §6.2 under a mix of lookups and
// updates (half inserts, half deletes) over a key range, prefilled to half the range ([PMIdioBench] Figures 11
// and 13). Operation streams are generated before the timed loop.
#include <algorithm>
#include <barrier>
#include <random>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/lockfree/list/linked_list.hpp"
#include "pmlab/lockfree/list/linkfree_list.hpp"
#include "pmlab/lockfree/list/soft_list.hpp"
#include "pmlab/suites/lockfree/published.hpp"
#include "pmlab/suites/lockfree/timed_ops.hpp"

namespace pmlab::suites::lockfree {
namespace {

using namespace bench;
using pmlab::lockfree::ListDesign;

enum class Kind : uint8_t { contains, insert, remove };
struct ListOp {
  Kind kind;
  uint64_t key;
};
constexpr size_t kStream = 1u << 16;

std::vector<ListOp> stream_for(int thread, uint64_t range, int update_pct) {
  std::mt19937_64 rng(0x5eed + static_cast<uint64_t>(thread) * 7919);
  std::vector<ListOp> ops(kStream);
  for (ListOp& op : ops) {
    const uint64_t r = rng() % 200;  // update_pct % updates, half of them inserts
    op.kind = r < static_cast<uint64_t>(update_pct)       ? Kind::insert
              : r < 2 * static_cast<uint64_t>(update_pct) ? Kind::remove
                                                          : Kind::contains;
    op.key = 1 + rng() % range;
  }
  return ops;
}

std::vector<std::vector<ListOp>> thread_streams(int threads, uint64_t range, int update_pct) {
  std::vector<std::vector<ListOp>> streams;
  for (int t = 0; t < threads; ++t) streams.push_back(stream_for(t, range, update_pct));
  return streams;
}

// Deleted nodes wait for reclamation: room for the range plus what the epochs hold back.
uint32_t capacity_for(uint64_t range) { return static_cast<uint32_t>(2 * range + (1u << 16)); }
constexpr int kMaxThreads = 64;

uint64_t region_bytes(const Params& p) {
  return pmlab::lockfree::list_layout::bytes_needed(capacity_for(p.size("range")), kMaxThreads) + 4096;
}

std::optional<std::string> redundant(const Params& p) {
  const auto d = pmlab::lockfree::parse_list_design(p.text("design"));
  if (!d) return std::nullopt;
  if (auto why = unclaimed_domain(p, pmlab::lockfree::claimed_domains(*d))) return why;
  return other_medium(p, *d == ListDesign::volatile_harris);
}

// What a list case runs on: its "range" and "update", the list formatted and prefilled on the run's
// region, and each thread's operation stream.
template <class List>
struct Prepared {
  uint64_t range;
  int update;
  std::unique_ptr<List> list;
  std::vector<std::vector<ListOp>> streams;
};

template <class List>
Prepared<List> prepare(RunContext& ctx) {
  Prepared<List> run;
  run.range = ctx.params().size("range");
  run.update = static_cast<int>(ctx.params().integer("update"));
  const media::Region& region = ctx.region();
  run.list = std::make_unique<List>(region.base, region.size, ctx.persister());
  if (Status s = run.list->format(capacity_for(run.range), ctx.threads()); !s) ctx.fail(s.message());
  // Prefill: every other key, so half the range is present (the setup of [PMIdioBench]).
  for (uint64_t k = 2; k <= run.range; k += 2)
    if (!run.list->insert(0, k)) ctx.fail("prefill failed at key " + std::to_string(k));
  run.streams = thread_streams(ctx.threads(), run.range, run.update);
  return run;
}

// Applies `op` to the list; returns which kind of operation it was: 0 a lookup, 1 an update.
template <class List>
int run_op(List& list, int tid, const ListOp& op) {
  switch (op.kind) {
    case Kind::contains: (void)list.contains(tid, op.key); return 0;
    case Kind::insert: (void)list.insert(tid, op.key); return 1;
    case Kind::remove: (void)list.remove(tid, op.key); return 1;
  }
  return 0;
}

template <class List>
void finish(RunContext& ctx, List& list) {
  if (list.alloc_failures() != 0) ctx.fail(std::to_string(list.alloc_failures()) + " inserts found the slab full");
  if (Status s = list.check(); !s) ctx.fail("set broken after the run: " + s.message());
  ctx.metric("slab_nodes", static_cast<double>(list.slab().allocated()), "count");
}

void notes(RunContext& ctx) {
  ctx.note("published_setup", std::string("published numbers: ") + kPublishedSource +
                                  "; this run: " + std::to_string(ctx.threads()) + " threads");
  if (persist::caches_are_durable(ctx.params().domain()))
    ctx.note("domain",
             "eadr as the persistence vocabulary applies it: fences issued, flushes elided (durable only "
             "on a platform whose caches are in the power-fail domain)");
}

template <class List>
void run_throughput(RunContext& ctx) {
  const Prepared<List> run = prepare<List>(ctx);
  List& list = *run.list;
  const auto& streams = run.streams;
  ctx.control().per_op_timing = false;  // throughput only: a timer read per lookup would distort it
  at_least(ctx, 0.08);
  ctx.run_threads([&](ThreadState& t) {
    const std::vector<ListOp>& ops = streams[static_cast<size_t>(t.index())];
    const int tid = t.index();
    t.measure([&](uint64_t i) { (void)run_op(list, tid, ops[i & (kStream - 1)]); });
  });
  finish(ctx, list);
  notes(ctx);
  if (auto v = published_list_throughput(ctx.params().text("domain"), ctx.params().text("design"),
                                         static_cast<int>(run.range), run.update))
    ctx.metric("published_throughput", *v, "ops/s", MetricKind::published, kPublishedSource);
}

template <class List>
void run_latency(RunContext& ctx) {
  const Prepared<List> run = prepare<List>(ctx);
  List& list = *run.list;
  const auto& streams = run.streams;
  TimedTotals<2> totals;
  std::barrier<> sync(ctx.threads());
  at_least(ctx, 0.25);
  ctx.run_threads([&](ThreadState& t) {
    const std::vector<ListOp>& ops = streams[static_cast<size_t>(t.index())];
    const int tid = t.index();
    timed_thread<2>(ctx, sync, totals, [&](uint64_t i) { return run_op(list, tid, ops[i & (kStream - 1)]); });
  });
  record_timed<2>(ctx, totals, {"find", "update"});
  finish(ctx, list);
  notes(ctx);
  ctx.note("operations",
           "find = contains (a lookup); update = insert or delete, whose search the paper times as "
           "'search' (ours includes the update's persistence)");
  const std::string design = ctx.params().text("design");
  if (auto v = published_list_latency("find", design, static_cast<int>(run.range), run.update))
    ctx.metric("published_find_latency", *v * 1e3, "ns", MetricKind::published, kPublishedSource);
  if (auto v = published_list_latency("search", design, static_cast<int>(run.range), run.update))
    ctx.metric("published_search_latency", *v * 1e3, "ns", MetricKind::published, kPublishedSource);
}

template <template <class> class Runner>
void dispatch(RunContext& ctx) {
  const auto d = pmlab::lockfree::parse_list_design(ctx.params().text("design"));
  if (!d) ctx.fail("unknown design " + ctx.params().text("design"));
  switch (*d) {
    case ListDesign::volatile_harris: Runner<pmlab::lockfree::LinkedList<ListDesign::volatile_harris>>::run(ctx); break;
    case ListDesign::tlog: Runner<pmlab::lockfree::LinkedList<ListDesign::tlog>>::run(ctx); break;
    case ListDesign::logfree: Runner<pmlab::lockfree::LinkedList<ListDesign::logfree>>::run(ctx); break;
    case ListDesign::soft: Runner<pmlab::lockfree::SoftList>::run(ctx); break;
    case ListDesign::linkfree: Runner<pmlab::lockfree::LinkFreeList>::run(ctx); break;
  }
}
template <class L>
struct Throughput {
  static void run(RunContext& ctx) { run_throughput<L>(ctx); }
};
template <class L>
struct Latency {
  static void run(RunContext& ctx) { run_latency<L>(ctx); }
};

ParamSpec design_param(std::vector<std::string> defaults, std::vector<std::string> quick = {}) {
  return std_params::choice("design",
                            "volatile: Harris on DRAM; tlog: persisted links + per-thread micro-log (ADR, eADR); "
                            "logfree: fences at linearization points (eADR); soft, linkfree: Zuriel et al. (ADR, eADR)",
                            {"volatile", "tlog", "logfree", "soft", "linkfree"}, std::move(defaults), std::move(quick));
}
ParamSpec update_param(std::vector<std::string> defaults, std::vector<std::string> quick) {
  return std_params::integer("update",
                             "percent of operations that update (half insert, half delete); the rest are lookups",
                             std::move(defaults), std::move(quick), 0, 100);
}
ParamSpec range_param() {
  return std_params::size("range", "key range [1, range]; the set is prefilled with half of it",
                          {"256", "1024", "4096"}, {"256", "1024", "4096"}, 2, 1 << 24);
}

const CaseRegistration throughput{CaseDef{
    .suite = "lockfree",
    .name = "list",
    .summary = "sorted-set throughput vs update ratio and key range per design and domain ([PMIdioBench] Figure 11)",
    .params = {design_param({"volatile", "tlog", "logfree", "soft", "linkfree"}),
               std_params::domain({"none", "adr", "eadr"}), std_params::medium(),
               update_param({"0", "5", "10", "20", "30", "40", "50"}, {"0", "10", "50"}), range_param(),
               std_params::threads({default_threads()})},
    .region_bytes = region_bytes,
    .redundant = redundant,
    .body = dispatch<Throughput>,
}};

const CaseRegistration latency{CaseDef{
    .suite = "lockfree",
    .name = "list_latency",
    .summary = "lookup (find) and update latency per design at 5 and 50% updates ([PMIdioBench] Figure 13)",
    .params = {design_param({"tlog", "soft", "linkfree", "logfree"}, {"tlog", "soft"}),
               std_params::domain({"adr", "eadr"}, {"adr"}), std_params::medium({"pool"}),
               update_param({"5", "50"}, {"5", "50"}), range_param(), std_params::threads({default_threads()})},
    .region_bytes = region_bytes,
    .redundant = redundant,
    .body = dispatch<Latency>,
}};

}  // namespace
}  // namespace pmlab::suites::lockfree
