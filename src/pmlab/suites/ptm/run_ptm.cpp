#include "pmlab/pool/scratch.hpp"
#include "pmlab/suites/ptm/run_ptm.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "pmlab/pmdk/persistence.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/pmdk/obj_ptm.hpp"
#include "pmlab/ptm/redo/redo_ptm.hpp"
#include "pmlab/ptm/undo/undo_ptm.hpp"
#include "pmlab/ptm/workloads/catalog.hpp"
#include "pmlab/pmdk/environment.hpp"

namespace pmlab::suites::ptm {

using namespace pmlab::ptm;
using bench::RunContext;
using bench::ThreadState;

namespace fs = std::filesystem;
static_assert(pmdk::ObjPtm::kRootWords >= pmlab::ptm::kRoots, "the PMDK peer holds every root a workload uses");

namespace {
constexpr uint64_t kSlotBytes = 256 << 10;
}  // namespace

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names = {"sps-1", "sps-4",   "sps-16", "sps-64",
                                                 "queue", "hashmap", "bptree", "bank"};
  return names;
}

Status parse_workload(const std::string& name, std::string* kind, int* swaps) {
  *swaps = 1;
  if (name.rfind(std::string(workloads::kSpsKind) + "-", 0) == 0) {
    *kind = workloads::kSpsKind;
    *swaps = std::atoi(name.c_str() + workloads::kSpsKind.size() + 1);
    if (*swaps < 1 || *swaps > 64) return error(Errc::invalid_argument, "sps takes 1..64 swaps: " + name);
    return Status::success();
  }
  if (workloads::is_workload_kind(name) && name != workloads::kSpsKind) {
    *kind = name;
    return Status::success();
  }
  return error(Errc::invalid_argument, "unknown ptm workload '" + name + "'");
}

Result<RunSpec> spec_of(const bench::Params& p, bool quick) {
  RunSpec s;
  s.ptm = p.text("ptm");
  auto d = parse_durability(p.has("durability") ? p.text("durability") : std::string("adr"));
  if (!d) return d.status();
  s.durability = *d;
  s.workload = p.text("workload");
  std::string kind;
  int swaps = 1;
  if (Status st = parse_workload(s.workload, &kind, &swaps); !st) return st;
  s.config.swaps = swaps;
  s.config.records = workloads::visit_workload(kind, [quick]<template <class> class W>(workloads::WorkloadTag<W>) {
    return quick ? workloads::WorkloadTag<W>::kQuickRecords : workloads::WorkloadTag<W>::kRecords;
  });
  if (p.has("cost")) {
    const std::string& c = p.text("cost");
    s.logging = c != "no-log";
    s.elide_flush = c == "no-flush";
    s.elide_fence = c == "no-fence";
  }
  return s;
}

uint64_t heap_bytes(const RunSpec& spec) {
  std::string kind;
  int swaps = 1;
  (void)parse_workload(spec.workload, &kind, &swaps);
  const uint64_t b = workloads::visit_workload(
      kind, [&]<template <class> class W>(workloads::WorkloadTag<W>) { return W<UndoPtm>::heap_bytes(spec.config); });
  return (b + 4095) & ~uint64_t{4095};
}

uint64_t log_bytes(const RunSpec&, int threads) { return static_cast<uint64_t>(threads) * kSlotBytes; }

namespace {

template <template <class> class W, class P, class Hook>
void measure(RunContext& ctx, P& ptm, const RunSpec& spec, Hook&& after_load) {
  W<P> w;
  if (Status s = w.load(ptm, spec.config); !s) ctx.fail(s.message());
  after_load();
  ctx.run_threads([&](ThreadState& t) {
    workloads::Rng rng(0x9e37 + static_cast<uint64_t>(t.index()) * 7919);
    const int slot = t.index();
    t.measure([&](uint64_t) { w.op(ptm, slot, rng); });
  });
  if (Status s = w.check(ptm); !s) ctx.fail("structure broken after the run: " + s.message());
}

template <class P, class Hook>
void dispatch(RunContext& ctx, P& ptm, const RunSpec& spec, Hook&& after_load) {
  std::string kind;
  int swaps = 1;
  (void)parse_workload(spec.workload, &kind, &swaps);
  workloads::visit_workload(
      kind, [&]<template <class> class W>(workloads::WorkloadTag<W>) { measure<W>(ctx, ptm, spec, after_load); });
}

template <class P>
void run_pmlab_ptm(RunContext& ctx, const RunSpec& spec) {
  persist::Config base = ctx.persister().config();
  base.elide_flush = spec.elide_flush;
  base.elide_fence = spec.elide_fence;
  auto log_p = ctx.persister().derive(log_config(spec.durability, base));
  auto data_p = ctx.persister().derive(data_config(spec.durability, base));
  if (!log_p) ctx.skip(log_p.status().message());
  if (!data_p) ctx.skip(data_p.status().message());

  const media::Region& region = ctx.region();
  const uint64_t heap = heap_bytes(spec);
  const uint64_t logs = log_bytes(spec, ctx.threads());
  Regions r;
  r.heap = region.base;
  r.heap_bytes = heap;
  media::DramBuffer log_dram;
  if (log_on_dram(spec.durability) && !data_on_dram(spec.durability)) {
    // pdram-lite: the data on the pool, the log in (persistent) DRAM.
    if (Status s = log_dram.reserve(logs); !s) ctx.fail(s.message());
    r.log = log_dram.region().base;
  } else {
    r.log = region.base + heap;
  }
  r.log_bytes = logs;
  r.log_persister = &*log_p;
  r.data_persister = &*data_p;
  Options o;
  o.slots = ctx.threads();
  o.slot_bytes = kSlotBytes;
  o.logging = spec.logging;
  P ptm(r, o);
  if (Status s = ptm.format(); !s) ctx.fail(s.message());
  TxCounters before;
  dispatch(ctx, ptm, spec, [&] { before = ptm.counters(); });
  const TxCounters after = ptm.counters();
  const double txs = static_cast<double>(after.transactions - before.transactions);
  if (txs > 0)
    ctx.metric("log_entries_per_tx", static_cast<double>(after.log_entries - before.log_entries) / txs, "count");
  ctx.note(
      "log",
      std::string(P::kName) == std::string("undo")
          ? "undo: 32 B entries {offset, old, check}; one flush+fence per distinct logged word, 2 more at commit"
          : "redo: one non-temporal record {seq, n, 16 B entries, checksum} per writing transaction, 1 fence (commit), "
            "data written back lazily; ownership records let disjoint and read-only transactions run in parallel");
  ctx.note("medium", std::string("data on ") +
                         (data_on_dram(spec.durability) ? "DRAM" : media::to_string(region.kind)) + ", log on " +
                         (log_on_dram(spec.durability) ? "DRAM" : media::to_string(region.kind)));
}

void run_pmdk(RunContext& ctx, const RunSpec& spec) {
  if (!pmdk::ObjPtm::available()) ctx.skip("pmlab was built without libpmemobj (install libpmemobj-dev and rebuild)");
  if (spec.durability != Durability::adr && spec.durability != Durability::eadr)
    ctx.skip("PMDK has no PDRAM mode (only ADR, or eADR with its flushes off)");
  if (!spec.logging || spec.elide_fence)
    ctx.skip("not measurable: PMDK's logging and fences cannot be switched off without modifying libpmemobj");
  const int forced = pmdk::force_pmem_is_pmem();
  const std::string path = pool::scratch_pool_path(pmdk_pool_directory(ctx), "ptm-pmdk");
  auto ptm = pmdk::ObjPtm::create(path, heap_bytes(spec) * 3 / 2 + (16 << 20));
  if (!ptm) ctx.fail(ptm.status().message());
  // Counted over the timed loop only (the load's transactions are subtracted after it).
  struct Counts {
    uint64_t tx, ranges;
  };
  Counts before{0, 0};
  {
    // PMDK's flushes and drains counted (and shown to the run's device model) through pmlab's libpmem
    // interposer, as our PTMs' are through their persisters; under eADR (and the no-flush breakdown) the
    // interposer issues no flush, as libpmem does on a platform that reports eADR.
    const pmdk::ScopedPersistence seen({.count = true, .elide_flush = spec.elide_flush, .observer = ctx.model()});
    dispatch(ctx, **ptm, spec, [&] { before = {(*ptm)->transactions(), (*ptm)->ranges_added()}; });
  }
  if (spec.elide_flush && !pmdk::interposed())
    ctx.fail("PMDK's flushes could not be switched off: libpmem's calls did not reach pmlab's interposer");
  const double txs = static_cast<double>((*ptm)->transactions() - before.tx);
  if (txs > 0) {
    const double ranges = static_cast<double>((*ptm)->ranges_added() - before.ranges) / txs;
    ctx.metric("ranges_added_per_tx", ranges, "count");
    ctx.metric("pmdk_fences_per_tx_modelled", 2.0 + 2.0 * ranges, "count", record::MetricKind::modelled,
               "PMDK 1.12 tx: 2 + 2 x ranges added (data/reference/README.md, from PMDK sources)");
  }
  ctx.note("pmdk", "libpmemobj " + std::string("1.12 transactions, pool ") + path +
                       " (removed after the run), "
                       "PMEM_IS_PMEM_FORCE=" +
                       std::to_string(forced) + (spec.elide_flush ? ", flushes off at libpmem's entry points" : "") +
                       "; one global lock serializes transactions, as for undo (redo runs disjoint ones in parallel)");
  ctx.note("counters", pmdk::interposed()
                           ? "flushes_per_op and fences_per_op count PMDK's libpmem calls (pmlab's interposer)"
                           : "flushes_per_op and fences_per_op read zero: libpmem's calls did not reach pmlab's "
                             "interposer in this process");
}

}  // namespace

std::string pmdk_pool_directory(RunContext& ctx) {
  if (ctx.region().kind == media::Kind::numa)
    ctx.skip("libpmemobj maps a pool file, which cannot be bound to node " + std::to_string(ctx.region().node) +
             ": PMDK runs on medium=pool, or dram (its pool on /dev/shm)");
  if (ctx.region().base != nullptr)
    if (auto d = pmdk::directory_of_mapping(ctx.region().base)) return *d;
  return "/dev/shm";
}

void run(RunContext& ctx, const RunSpec& spec) {
  ctx.note("durability", assumption(spec.durability));
  ctx.note("lock", "one global lock (std::mutex) serializes transactions; a log slot per thread");
  if (spec.ptm == "volatile") {
    // [OptanePTM]'s volatile-DRAM baseline: the same workloads through the same interface and lock with
    // nothing made durable — what a transaction costs before any persistence.
    RunSpec baseline = spec;
    baseline.logging = false;
    baseline.elide_flush = true;
    baseline.elide_fence = true;
    ctx.note("baseline", "volatile: the undo PTM with its log off and no flush or fence, on DRAM; not failure-atomic");
    return run_pmlab_ptm<UndoPtm>(ctx, baseline);
  }
  if (spec.ptm == "undo") run_pmlab_ptm<UndoPtm>(ctx, spec);
  else if (spec.ptm == "redo") run_pmlab_ptm<RedoPtm>(ctx, spec);
  else run_pmdk(ctx, spec);
}

}  // namespace pmlab::suites::ptm
