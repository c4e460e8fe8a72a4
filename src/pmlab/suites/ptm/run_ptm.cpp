#include "pmlab/suites/ptm/run_ptm.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "pmlab/ds/tx/pmdk_persistence.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/ptm/pmdk/pmdk_ptm.hpp"
#include "pmlab/ptm/redo/redo_ptm.hpp"
#include "pmlab/ptm/undo/undo_ptm.hpp"
#include "pmlab/ptm/workloads/bank.hpp"
#include "pmlab/ptm/workloads/bptree.hpp"
#include "pmlab/ptm/workloads/hashmap.hpp"
#include "pmlab/ptm/workloads/queue.hpp"
#include "pmlab/ptm/workloads/sps.hpp"
#include "pmlab/pool/pmdk_environment.hpp"

namespace pmlab::suites::ptm {

using namespace pmlab::ptm;
using bench::RunContext;
using bench::ThreadState;

namespace fs = std::filesystem;

namespace {
constexpr uint64_t kSlotBytes = 256 << 10;
}  // namespace

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names = {"sps-1", "sps-4", "sps-16", "sps-64", "queue", "hashmap", "bptree", "bank"};
  return names;
}

Status parse_workload(const std::string& name, std::string* kind, int* swaps) {
  *swaps = 1;
  if (name.rfind("sps-", 0) == 0) {
    *kind = "sps";
    *swaps = std::atoi(name.c_str() + 4);
    if (*swaps < 1 || *swaps > 64) return error(Errc::invalid_argument, "sps takes 1..64 swaps: " + name);
    return Status::success();
  }
  if (name == "queue" || name == "hashmap" || name == "bptree" || name == "bank") {
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
  if (kind == "sps" || kind == "bank") s.config.records = quick ? (1 << 16) : (1 << 20);
  else if (kind == "queue") s.config.records = quick ? 1024 : 4096;
  else s.config.records = quick ? (1 << 14) : (1 << 17);
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
  uint64_t b = 0;
  if (kind == "sps") b = workloads::Sps<UndoPtm>::heap_bytes(spec.config);
  else if (kind == "queue") b = workloads::Queue<UndoPtm>::heap_bytes(spec.config);
  else if (kind == "hashmap") b = workloads::HashMap<UndoPtm>::heap_bytes(spec.config);
  else if (kind == "bptree") b = workloads::BPTree<UndoPtm>::heap_bytes(spec.config);
  else b = workloads::Bank<UndoPtm>::heap_bytes(spec.config);
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
  if (kind == "sps") measure<workloads::Sps>(ctx, ptm, spec, after_load);
  else if (kind == "queue") measure<workloads::Queue>(ctx, ptm, spec, after_load);
  else if (kind == "hashmap") measure<workloads::HashMap>(ctx, ptm, spec, after_load);
  else if (kind == "bptree") measure<workloads::BPTree>(ctx, ptm, spec, after_load);
  else measure<workloads::Bank>(ctx, ptm, spec, after_load);
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
  ctx.note("log", std::string(P::kName) == std::string("undo")
                      ? "undo: 32 B entries {offset, old, check}; one flush+fence per distinct logged word, 2 more at commit"
                      : "redo: 16 B entries {offset, value} + checksummed header; 3 fences per writing transaction");
  ctx.note("medium", std::string("data on ") + (data_on_dram(spec.durability) ? "DRAM" : media::to_string(region.kind)) +
                         ", log on " + (log_on_dram(spec.durability) ? "DRAM" : media::to_string(region.kind)));
}

void run_pmdk(RunContext& ctx, const RunSpec& spec) {
  if (!PmdkPtm::available()) ctx.skip("pmlab was built without libpmemobj (install libpmemobj-dev and rebuild)");
  if (spec.durability != Durability::adr && spec.durability != Durability::eadr)
    ctx.skip("PMDK has no PDRAM mode (only the platform's ADR, or eADR through PMEM_NO_FLUSH=1)");
  const char* no_flush = std::getenv("PMEM_NO_FLUSH");
  const bool flushes_off = no_flush != nullptr && std::string(no_flush) == "1";
  if (flushes_off != spec.elide_flush)
    ctx.skip(flushes_off ? "PMEM_NO_FLUSH=1 is set for this process: PMDK's full-cost runs are not possible in it"
                         : "internal: PMDK without flushes must run in a child with PMEM_NO_FLUSH=1");
  if (!spec.logging || spec.elide_fence)
    ctx.skip("not measurable: PMDK's logging and fences cannot be switched off without modifying libpmemobj");
  const int forced = pool::force_pmem_for_pmdk();
  std::string dir = "/dev/shm";
  if (ctx.region().base != nullptr) {
    auto d = pool::directory_of_mapping(ctx.region().base);
    if (d) dir = *d;
  }
  const std::string path = (fs::path(dir) / ("pmlab-" + std::to_string(getpid()) + "-ptm-pmdk.pool")).string();
  auto ptm = PmdkPtm::create(path, heap_bytes(spec) * 3 / 2 + (16 << 20));
  if (!ptm) ctx.fail(ptm.status().message());
  // Counted over the timed loop only (the load's transactions are subtracted after it).
  struct Counts {
    uint64_t tx, ranges;
  };
  Counts before{0, 0};
  {
    // PMDK's flushes and drains counted (and shown to the run's device model) through pmlab's libpmem
    // interposer, as our PTMs' are through their persisters.
    const ds::tx::ScopedPmdkPersistence seen({.count = true, .observer = ctx.model()});
    dispatch(ctx, **ptm, spec, [&] { before = {(*ptm)->transactions(), (*ptm)->ranges_added()}; });
  }
  const double txs = static_cast<double>((*ptm)->transactions() - before.tx);
  if (txs > 0) {
    const double ranges = static_cast<double>((*ptm)->ranges_added() - before.ranges) / txs;
    ctx.metric("ranges_added_per_tx", ranges, "count");
    ctx.metric("pmdk_fences_per_tx_modelled", 2.0 + 2.0 * ranges, "count", record::MetricKind::modelled,
               "PMDK 1.12 tx: 2 + 2 x ranges added (shared/reference/README.md, from PMDK sources)");
  }
  ctx.note("pmdk", "libpmemobj " + std::string("1.12 transactions, pool ") + path + " (removed after the run), "
                   "PMEM_IS_PMEM_FORCE=" + std::to_string(forced) + (flushes_off ? ", PMEM_NO_FLUSH=1" : "") +
                   "; one global lock serializes transactions as for undo/redo");
  ctx.note("counters", ds::tx::pmdk_persistence_interposed()
                           ? "flushes_per_op and fences_per_op count PMDK's libpmem calls (pmlab's interposer)"
                           : "flushes_per_op and fences_per_op read zero: libpmem's calls did not reach pmlab's "
                             "interposer in this process");
}

}  // namespace

void run(RunContext& ctx, const RunSpec& spec) {
  ctx.note("durability", assumption(spec.durability));
  ctx.note("lock", "one global lock (std::mutex) serializes transactions; a log slot per thread");
  if (spec.ptm == "undo") run_pmlab_ptm<UndoPtm>(ctx, spec);
  else if (spec.ptm == "redo") run_pmlab_ptm<RedoPtm>(ctx, spec);
  else run_pmdk(ctx, spec);
}

bool run_pmdk_without_flush(RunContext& ctx, const std::string& case_name) {
  const char* no_flush = std::getenv("PMEM_NO_FLUSH");
  if (no_flush != nullptr && std::string(no_flush) == "1") return false;  // we are the child: measure here
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) ctx.skip("cannot find pmlab's own executable to run PMDK with PMEM_NO_FLUSH=1");
  char tmpl[] = "/dev/shm/pmlab-ptm-child-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) ctx.fail("mkdtemp for the PMEM_NO_FLUSH child failed");
  const std::string out = tmpl;
  std::string cmd = "PMEM_NO_FLUSH=1 PMEM_IS_PMEM_FORCE=1 '" + self.string() + "' run " + case_name + " --no-progress --out '" + out + "'";
  for (const auto& [k, v] : ctx.params().json().items())
    cmd += " --set " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  if (ctx.quick()) cmd += " --quick";
  if (ctx.control().ops) cmd += " --ops " + std::to_string(ctx.control().ops);
  else cmd += " --duration " + std::to_string(ctx.control().duration_s) + "s";
  cmd += " >/dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  nlohmann::json doc;
  {
    std::ifstream in(out + "/results.json");
    if (in) doc = nlohmann::json::parse(in, nullptr, false);
  }
  fs::remove_all(out, ec);
  if (doc.is_discarded() || !doc.contains("runs") || doc["runs"].empty())
    ctx.fail("the PMEM_NO_FLUSH=1 child wrote no results (exit " + std::to_string(rc) + ")");
  const auto& child = doc["runs"][0];
  if (child.value("status", "") != "ok")
    ctx.fail("the PMEM_NO_FLUSH=1 child run failed: " + child.value("reason", std::string("?")));
  for (const auto& [name, m] : child["metrics"].items())
    if (m["value"].is_number() && m.value("kind", "") == "measured")
      ctx.metric(name, m["value"].get<double>(), m.value("unit", ""));
  if (child.contains("notes") && child["notes"].is_object())
    for (auto it = child["notes"].begin(); it != child["notes"].end(); ++it)
      if (it.value().is_string()) ctx.note(it.key(), it.value().get<std::string>());
  ctx.note("pmem_no_flush", "measured in a child pmlab process started with PMEM_NO_FLUSH=1: libpmem reads it once, "
                            "when it is loaded, so it cannot be switched within one process");
  return true;
}

}  // namespace pmlab::suites::ptm
