// core.library: libpmlab's API against the same designs called in-tree, side by side in one run
// (bench::interleave): a 64-byte append through pmlab::Log vs primitives::log::Log::append on the zero log,
// a transfer transaction (two reads, two writes) through pmlab::Ptm vs RedoPtm::run, and the key-value
// example's operations — a get or a put of an 8-byte key and a 32-byte value, one transaction each —
// through pmlab::Map vs the same B+-tree on the in-tree redo PTM (TxArena). Each pair runs on
// two pool files of the same layout and size beside the run's pool, with the pools' own persister, so the
// only difference is the API: the library's out-of-line calls, offset checks, log-slot hand-out and
// exceptions. Target: the library at >= 0.95x the in-tree throughput (issue 41).
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <pmlab/log.hpp>
#include <pmlab/map.hpp>
#include <pmlab/ptm.hpp>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/side_by_side.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/pmdk/environment.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/pool/scratch.hpp"
#include "pmlab/primitives/log/log.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ptm/store/ptm_store.hpp"
#include "pmlab/ptm/workloads/tx_arena.hpp"

namespace pmlab::suites::core {
namespace {

using namespace bench;
namespace plog = primitives::log;

constexpr double kTarget = 0.95;
constexpr uint64_t kPayload = 64;
constexpr uint64_t kLogPoolBytes = uint64_t{64} << 20;
constexpr uint64_t kPtmPoolBytes = uint64_t{16} << 20;
constexpr uint64_t kAccounts = 4096;
constexpr uint64_t kSlotBytes = 64 << 10;
constexpr uint64_t kKvPoolBytes = uint64_t{64} << 20;
constexpr uint64_t kKvKeys = uint64_t{1} << 15;  // loaded; the operations draw from twice as many
constexpr unsigned kKvValueBytes = 32;
constexpr int kKvRoot = 0;

// Scratch pool files beside the run's pool, removed when the case ends (a stop signal ends it through
// destructors too).
class Beside {
 public:
  explicit Beside(RunContext& ctx) {
    auto dir = pmdk::directory_of_mapping(ctx.region().base);
    if (!dir) ctx.skip("no directory for the library's pool files: " + dir.status().message());
    dir_ = *dir;
  }
  ~Beside() {
    for (const std::string& p : paths_) (void)pool::remove(p);
  }
  Beside(const Beside&) = delete;
  Beside& operator=(const Beside&) = delete;
  std::string path(const std::string& what) {
    paths_.push_back(pool::scratch_pool_path(dir_, "lib-" + what));
    return paths_.back();
  }

 private:
  std::string dir_;
  std::vector<std::string> paths_;
};

// The accounts a transfer moves between: two per operation, never the same one twice.
struct Pick {
  uint64_t from, to;
};
Pick pick(int thread, uint64_t i) {
  const uint64_t h = mix64(i * 2 + static_cast<uint64_t>(thread) * 0x9E3779B97F4A7C15ull);
  const uint64_t from = h % kAccounts;
  return {from, (from + 1 + (h >> 32) % (kAccounts - 1)) % kAccounts};
}

// One unit from account p.from to p.to of the array at `accounts`, through the library's Transaction (the
// in-tree contender's body is the same over RedoPtm::Tx).
void library_transfer(pmlab::Transaction& tx, uint64_t accounts, Pick p) {
  const uint64_t from = accounts + 8 * p.from, to = accounts + 8 * p.to;
  const uint64_t a = tx.read(from);
  if (a == 0) return;
  tx.write(from, a - 1);
  tx.write(to, tx.read(to) + 1);
}

// The key-value operation `i` of a thread: a key of the key space (twice the loaded keys) as the tree's
// 64-bit key, and whether it is a put (else a get), half and half.
struct KvOp {
  uint64_t key;
  bool put;
};
KvOp kv_op(int thread, uint64_t i) {
  const uint64_t h = mix64(i * 2 + 1 + static_cast<uint64_t>(thread) * 0x9E3779B97F4A7C15ull);
  return {mix64(h % (2 * kKvKeys)), (h >> 63) != 0};
}
uint64_t loaded_key(uint64_t i) { return mix64(2 * i); }
// The library's key: the same number as 8 big-endian bytes (pmlab::Map's key order).
struct KeyBytes {
  explicit KeyBytes(uint64_t k) noexcept {
    for (int b = 7; b >= 0; --b, k >>= 8) bytes[b] = static_cast<char>(k & 0xff);
  }
  std::string_view view() const noexcept { return {bytes, 8}; }
  char bytes[8];
};

// The library contender's throughput over the in-tree one's, round by round, and its target.
void ratio_metrics(RunContext& ctx, const InterleaveResult& r, size_t library, size_t in_tree, const std::string& what,
                   const std::string& label) {
  ctx.metric_samples("library_vs_in_tree_" + what, r.ratios(library, in_tree), "ratio");
  ctx.target("library_vs_in_tree_" + what, kTarget, TargetDirection::at_least, label);
}

void body(RunContext& ctx) {
  const int threads = ctx.threads();
  Beside beside(ctx);
  const std::vector<std::byte> payload(kPayload, std::byte{0x5a});

  // The zero log, one lane per thread, through the library and in-tree.
  plog::Options log_options;
  log_options.kind = plog::Kind::zero;
  log_options.lanes = static_cast<uint32_t>(threads);
  pmlab::Log library_log = pmlab::Log::create(beside.path("log"), kLogPoolBytes, {"zero", log_options.lanes, false});
  auto tree_log_pool = plog::create_pool(beside.path("tree-log"), kLogPoolBytes, log_options);
  if (!tree_log_pool) ctx.fail(tree_log_pool.status().message());
  auto tree_log = plog::open_in_pool(**tree_log_pool);
  if (!tree_log) ctx.fail(tree_log.status().message());

  // The redo PTM, one log slot per thread, each with the same accounts.
  const pmlab::PtmOptions ptm_options{pmlab::PtmKind::redo, static_cast<unsigned>(threads), kSlotBytes};
  pmlab::Ptm library_ptm = pmlab::Ptm::create(beside.path("ptm"), kPtmPoolBytes, ptm_options);
  pmlab::Ptm session_ptm = pmlab::Ptm::create(beside.path("ptm-sessions"), kPtmPoolBytes, ptm_options);
  auto tree_ptm_pool =
      ptm::create_store_pool(beside.path("tree-ptm"), kPtmPoolBytes, {ptm::StoreKind::redo, threads, kSlotBytes});
  if (!tree_ptm_pool) ctx.fail(tree_ptm_pool.status().message());
  auto tree_store = ptm::open_store(**tree_ptm_pool);
  if (!tree_store) ctx.fail(tree_store.status().message());
  ptm::RedoPtm& tree_ptm = *(*tree_store)->redo();
  uint64_t library_accounts = 0, session_accounts = 0, tree_accounts = 0;
  for (auto [ptm, accounts] : {std::pair{&library_ptm, &library_accounts}, std::pair{&session_ptm, &session_accounts}})
    ptm->run([&](pmlab::Transaction& tx) {
      *accounts = tx.alloc(8 * kAccounts);
      for (uint64_t a = 0; a < kAccounts; ++a) tx.write(*accounts + 8 * a, 1000);
    });
  tree_ptm.run(0, [&](ptm::RedoPtm::Tx& tx) {
    tree_accounts = tx.alloc(8 * kAccounts);
    auto* acc = tx.at<uint64_t>(tree_accounts);
    for (uint64_t a = 0; a < kAccounts; ++a) tx.write(acc + a, 1000);
  });

  // The key-value store: pmlab::Map's B+-tree and the in-tree one, each in a redo heap of its own, loaded
  // with the same keys; the library side runs a Session per thread, as the example's load does.
  pmlab::Ptm kv_ptm = pmlab::Ptm::create(beside.path("kv"), kKvPoolBytes, ptm_options);
  pmlab::MapOptions map_options;
  map_options.key_bytes = 8;
  map_options.value_bytes = kKvValueBytes;
  pmlab::Map kv_map = pmlab::Map::create(kv_ptm, kKvRoot, map_options);
  auto tree_kv_pool =
      ptm::create_store_pool(beside.path("tree-kv"), kKvPoolBytes, {ptm::StoreKind::redo, threads, kSlotBytes});
  if (!tree_kv_pool) ctx.fail(tree_kv_pool.status().message());
  auto tree_kv_store = ptm::open_store(**tree_kv_pool);
  if (!tree_kv_store) ctx.fail(tree_kv_store.status().message());
  ptm::RedoPtm& tree_kv_ptm = *(*tree_kv_store)->redo();
  ds::Options tree_options;
  tree_options.value_bytes = kKvValueBytes;
  tree_options.capacity = 2 * kKvKeys;
  ptm::workloads::PtmStructure<ptm::RedoPtm, ds::BPTree> tree_kv(tree_kv_ptm, kKvRoot, tree_options);
  if (Status st = tree_kv.create(tree_kv_ptm, tree_options.capacity); !st) ctx.fail(st.message());
  const std::vector<std::byte> kv_value(kKvValueBytes, std::byte{0x3c});
  for (uint64_t i = 0; i < kKvKeys; i += 64) {
    kv_ptm.run([&](pmlab::Transaction& tx) {
      for (uint64_t j = i; j < std::min(i + 64, kKvKeys); ++j)
        kv_map.put(tx, KeyBytes(loaded_key(j)).view(), kv_value.data());
    });
    bool ok = true;
    tree_kv.run(tree_kv_ptm, 0, [&](auto& tree) {
      for (uint64_t j = i; j < std::min(i + 64, kKvKeys) && ok; ++j)
        ok = tree.insert(loaded_key(j), 0, kv_value.data());
    });
    if (!ok) ctx.fail("the in-tree key-value heap is full");
  }
  std::vector<pmlab::Ptm::Session> kv_sessions;
  for (int t = 0; t < threads; ++t) kv_sessions.push_back(kv_ptm.session());

  // The library's two ways to run a transaction, each on a Ptm of its own: Ptm::run (a log slot borrowed
  // each time) and a Session per thread (one slot kept).
  std::vector<pmlab::Ptm::Session> sessions;
  for (int t = 0; t < threads; ++t) sessions.push_back(session_ptm.session());
  const std::vector<Contender> contenders{
      {"library_log",
       [&](int lane, uint64_t) {
         try {
           library_log.append(static_cast<unsigned>(lane), payload.data(), kPayload);
           return true;
         } catch (const pmlab::Error& e) {
           if (e.code() != PMLAB_E_POOL_FULL) throw;
           return false;
         }
       },
       [&] { library_log.truncate(); }},
      {"in_tree_log",
       [&](int lane, uint64_t) {
         auto lsn = (*tree_log)->append(static_cast<uint32_t>(lane), payload.data(), kPayload);
         if (!lsn && lsn.status().code() != Errc::pool_full) throw std::runtime_error(lsn.status().message());
         return lsn.ok();
       },
       [&] {
         if (Status s = (*tree_log)->truncate(); !s) throw std::runtime_error(s.message());
       }},
      {"library_ptm",
       [&](int thread, uint64_t i) {
         const Pick p = pick(thread, i);
         library_ptm.run([&](pmlab::Transaction& tx) { library_transfer(tx, library_accounts, p); });
         return true;
       }},
      {"library_ptm_session",
       [&](int thread, uint64_t i) {
         const Pick p = pick(thread, i);
         sessions[static_cast<size_t>(thread)].run(
             [&](pmlab::Transaction& tx) { library_transfer(tx, session_accounts, p); });
         return true;
       }},
      {"in_tree_ptm",
       [&](int thread, uint64_t i) {
         const Pick p = pick(thread, i);
         tree_ptm.run(thread, [&](ptm::RedoPtm::Tx& tx) {
           uint64_t* acc = tx.at<uint64_t>(tree_accounts);
           const uint64_t a = tx.read(acc + p.from);
           if (a == 0) return;
           tx.write(acc + p.from, a - 1);
           tx.write(acc + p.to, tx.read(acc + p.to) + 1);
         });
         return true;
       }},
      {"library_kv",
       [&](int thread, uint64_t i) {
         const KvOp op = kv_op(thread, i);
         const KeyBytes key(op.key);
         std::byte value[kKvValueBytes];
         kv_sessions[static_cast<size_t>(thread)].run([&](pmlab::Transaction& tx) {
           if (op.put) kv_map.put(tx, key.view(), kv_value.data());
           else (void)kv_map.get(tx, key.view(), value);
         });
         return true;
       }},
      {"in_tree_kv",
       [&](int thread, uint64_t i) {
         const KvOp op = kv_op(thread, i);
         std::byte value[kKvValueBytes];
         bool ok = true;
         tree_kv.run(tree_kv_ptm, thread, [&](auto& tree) {
           if (op.put) ok = tree.insert(op.key, 0, kv_value.data());
           else (void)tree.read(op.key, 0, value);
         });
         if (!ok) throw std::runtime_error("the in-tree key-value heap is full");
         return true;
       }},
  };
  enum { kLibraryLog, kTreeLog, kLibraryPtm, kLibrarySession, kTreePtm, kLibraryKv, kTreeKv };
  const int rounds = ctx.quick() ? 11 : 31;
  const InterleaveResult r = interleave(ctx, rounds, phase_seconds(ctx), contenders);
  for (size_t c = 0; c < contenders.size(); ++c)
    ctx.metric(contenders[c].name + "_throughput", median(r.rounds_of(c)), "ops/s");
  ratio_metrics(ctx, r, kLibraryLog, kTreeLog, "log", "pmlab::Log appends vs the in-tree zero log's");
  ratio_metrics(ctx, r, kLibraryPtm, kTreePtm, "ptm", "pmlab::Ptm::run transactions vs the in-tree redo PTM's");
  ratio_metrics(ctx, r, kLibrarySession, kTreePtm, "ptm_session",
                "pmlab::Ptm::Session transactions vs the in-tree redo PTM's");
  ratio_metrics(ctx, r, kLibraryKv, kTreeKv, "kv",
                "pmlab::Map gets and puts (the key-value example's) vs the in-tree B+-tree on the redo PTM");
  ctx.metric("rounds", static_cast<double>(r.throughput.size()), "count");
  ctx.note("persister",
           "both sides of each pair on pool files beside the run's pool, with the pools' own "
           "persister (domain and flush the mapping implies), not the run's --set domain/flush");
}

const CaseRegistration registration{CaseDef{
    .suite = "core",
    .name = "library",
    .summary =
        "libpmlab's pmlab::Log, pmlab::Ptm and pmlab::Map vs the same designs in-tree, side by side (target >= 0.95x)",
    .params = {std_params::choice("medium", "pool: the library's objects are pool files", {"pool"}, {"pool"}),
               std_params::threads({"1", "2"}, {"1"})},
    .region_bytes = [](const Params&) { return uint64_t{1} << 20; },
    .redundant = {},
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::core
