// core.library: libpmlab's API against the same designs called in-tree, side by side in one run
// (bench::interleave): a 64-byte append through pmlab::Log vs primitives::log::Log::append on the zero log,
// a transfer transaction (two reads, two writes) through pmlab::Ptm vs RedoPtm::run, and the key-value
// example's operations — a get or a put of an 8-byte key and a 32-byte value, one transaction each —
// through pmlab::Map vs the same B+-tree on the in-tree redo PTM (TxArena), and the same gets and puts
// through pmlab::Tree vs the ds B+-tree in its persist mode on a ds arena. Each pair runs on
// two pool files of the same layout and size beside the run's pool, with the pools' own persister, so the
// only difference is the API: the library's out-of-line calls, offset checks, log-slot hand-out and
// exceptions. Target: the library at >= 0.95x the in-tree throughput.
#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <pmlab/log.hpp>
#include <pmlab/map.hpp>
#include <pmlab/ptm.hpp>
#include <pmlab/tree.hpp>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/side_by_side.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/pmdk/environment.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/pool/scratch.hpp"
#include "pmlab/primitives/log/log.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/common/arena.hpp"
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
    static_assert(std::endian::native == std::endian::little);
    const uint64_t big_endian = __builtin_bswap64(k);
    std::memcpy(bytes, &big_endian, 8);
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

// A value of Result<T>, or the run failed with its message.
template <class T>
T take(RunContext& ctx, Result<T> r) {
  if (!r) ctx.fail(r.status().message());
  return std::move(*r);
}

// The zero log, one lane per thread, through the library and in-tree.
class LogPair {
 public:
  LogPair(RunContext& ctx, Beside& beside, int threads)
      : library_(
            pmlab::Log::create(beside.path("log"), kLogPoolBytes, {"zero", static_cast<unsigned>(threads), false})) {
    plog::Options options;
    options.kind = plog::Kind::zero;
    options.lanes = static_cast<uint32_t>(threads);
    tree_pool_ = take(ctx, plog::create_pool(beside.path("tree-log"), kLogPoolBytes, options));
    tree_ = take(ctx, plog::open_in_pool(*tree_pool_));
  }

  void add_contenders(std::vector<Contender>& out) {
    out.emplace_back(
        "library_log",
        [this](int lane, uint64_t) {
          try {
            library_.append(static_cast<unsigned>(lane), payload_.data(), kPayload);
            return true;
          } catch (const pmlab::Error& e) {
            if (e.code() != PMLAB_E_POOL_FULL) throw;
            return false;
          }
        },
        [this] { library_.truncate(); });
    out.emplace_back(
        "in_tree_log",
        [this](int lane, uint64_t) {
          auto lsn = tree_->append(static_cast<uint32_t>(lane), payload_.data(), kPayload);
          if (!lsn && lsn.status().code() != Errc::pool_full) throw std::runtime_error(lsn.status().message());
          return lsn.ok();
        },
        [this] {
          if (Status s = tree_->truncate(); !s) throw std::runtime_error(s.message());
        });
  }

 private:
  const std::vector<std::byte> payload_ = std::vector<std::byte>(kPayload, std::byte{0x5a});
  pmlab::Log library_;
  std::unique_ptr<pool::Pool> tree_pool_;
  std::unique_ptr<plog::Log> tree_;
};

// The redo PTM's transfers, one log slot per thread, each side with the same accounts. The library runs
// them its two ways, each on a Ptm of its own: Ptm::run (a log slot borrowed each time) and a Session per
// thread (one slot kept).
class PtmPair {
 public:
  PtmPair(RunContext& ctx, Beside& beside, int threads)
      : options_{pmlab::PtmKind::redo, static_cast<unsigned>(threads), kSlotBytes},
        library_(pmlab::Ptm::create(beside.path("ptm"), kPtmPoolBytes, options_)),
        session_ptm_(pmlab::Ptm::create(beside.path("ptm-sessions"), kPtmPoolBytes, options_)) {
    tree_pool_ = take(ctx, ptm::create_store_pool(beside.path("tree-ptm"), kPtmPoolBytes,
                                                  {ptm::StoreKind::redo, threads, kSlotBytes}));
    tree_store_ = take(ctx, ptm::open_store(*tree_pool_));
    for (auto [p, accounts] : {std::pair{&library_, &library_accounts_}, std::pair{&session_ptm_, &session_accounts_}})
      p->run([&](pmlab::Transaction& tx) {
        *accounts = tx.alloc(8 * kAccounts);
        for (uint64_t a = 0; a < kAccounts; ++a) tx.write(*accounts + 8 * a, 1000);
      });
    tree().run(0, [&](ptm::RedoPtm::Tx& tx) {
      tree_accounts_ = tx.alloc(8 * kAccounts);
      auto* acc = tx.at<uint64_t>(tree_accounts_);
      for (uint64_t a = 0; a < kAccounts; ++a) tx.write(acc + a, 1000);
    });
    for (int t = 0; t < threads; ++t) sessions_.push_back(session_ptm_.session());
  }

  void add_contenders(std::vector<Contender>& out) {
    out.emplace_back("library_ptm", [this](int thread, uint64_t i) {
      const Pick p = pick(thread, i);
      library_.run([&](pmlab::Transaction& tx) { library_transfer(tx, library_accounts_, p); });
      return true;
    });
    out.emplace_back("library_ptm_session", [this](int thread, uint64_t i) {
      const Pick p = pick(thread, i);
      sessions_[static_cast<size_t>(thread)].run(
          [&](pmlab::Transaction& tx) { library_transfer(tx, session_accounts_, p); });
      return true;
    });
    out.emplace_back("in_tree_ptm", [this](int thread, uint64_t i) {
      const Pick p = pick(thread, i);
      tree().run(thread, [&](ptm::RedoPtm::Tx& tx) {
        uint64_t* acc = tx.at<uint64_t>(tree_accounts_);
        const uint64_t a = tx.read(acc + p.from);
        if (a == 0) return;
        tx.write(acc + p.from, a - 1);
        tx.write(acc + p.to, tx.read(acc + p.to) + 1);
      });
      return true;
    });
  }

  const pmlab::PtmOptions& options() const noexcept { return options_; }

 private:
  ptm::RedoPtm& tree() { return *tree_store_->redo(); }

  pmlab::PtmOptions options_;
  pmlab::Ptm library_, session_ptm_;
  std::vector<pmlab::Ptm::Session> sessions_;
  std::unique_ptr<pool::Pool> tree_pool_;
  std::unique_ptr<ptm::PtmStore> tree_store_;
  uint64_t library_accounts_ = 0, session_accounts_ = 0, tree_accounts_ = 0;
};

// The key-value store: pmlab::Map's B+-tree and the in-tree one, each in a redo heap of its own, loaded
// with the same keys; the library side runs a Session per thread, as the example's load does.
class KvPair {
 public:
  using TreeKv = ptm::workloads::PtmStructure<ptm::RedoPtm, ds::BPTree>;

  KvPair(RunContext& ctx, Beside& beside, int threads, const pmlab::PtmOptions& ptm_options)
      : ptm_(pmlab::Ptm::create(beside.path("kv"), kKvPoolBytes, ptm_options)),
        map_(pmlab::Map::create(ptm_, kKvRoot, map_options())) {
    tree_pool_ = take(
        ctx, ptm::create_store_pool(beside.path("tree-kv"), kKvPoolBytes, {ptm::StoreKind::redo, threads, kSlotBytes}));
    tree_store_ = take(ctx, ptm::open_store(*tree_pool_));
    ds::Options tree_options;
    tree_options.value_bytes = kKvValueBytes;
    tree_options.capacity = 2 * kKvKeys;
    tree_.emplace(tree_ptm(), kKvRoot, tree_options);
    if (Status st = tree_->create(tree_ptm(), tree_options.capacity); !st) ctx.fail(st.message());
    load(ctx);
    for (int t = 0; t < threads; ++t) sessions_.push_back(ptm_.session());
  }

  void add_contenders(std::vector<Contender>& out) {
    out.emplace_back("library_kv", [this](int thread, uint64_t i) {
      const KvOp op = kv_op(thread, i);
      const KeyBytes key(op.key);
      std::byte value[kKvValueBytes];
      sessions_[static_cast<size_t>(thread)].run([&](pmlab::Transaction& tx) {
        if (op.put) map_.put(tx, key.view(), value_.data());
        else (void)map_.get(tx, key.view(), value);
      });
      return true;
    });
    out.emplace_back("in_tree_kv", [this](int thread, uint64_t i) {
      const KvOp op = kv_op(thread, i);
      std::byte value[kKvValueBytes];
      bool ok = true;
      tree_->run(tree_ptm(), thread, [&](auto& tree) {
        if (op.put) ok = tree.insert(op.key, 0, value_.data());
        else (void)tree.read(op.key, 0, value);
      });
      if (!ok) throw std::runtime_error("the in-tree key-value heap is full");
      return true;
    });
  }

 private:
  static pmlab::MapOptions map_options() {
    pmlab::MapOptions o;
    o.key_bytes = 8;
    o.value_bytes = kKvValueBytes;
    return o;
  }
  ptm::RedoPtm& tree_ptm() { return *tree_store_->redo(); }

  void load(RunContext& ctx) {
    for (uint64_t i = 0; i < kKvKeys; i += 64) {
      ptm_.run([&](pmlab::Transaction& tx) {
        for (uint64_t j = i; j < std::min(i + 64, kKvKeys); ++j)
          map_.put(tx, KeyBytes(loaded_key(j)).view(), value_.data());
      });
      bool ok = true;
      tree_->run(tree_ptm(), 0, [&](auto& tree) {
        for (uint64_t j = i; j < std::min(i + 64, kKvKeys) && ok; ++j)
          ok = tree.insert(loaded_key(j), 0, value_.data());
      });
      if (!ok) ctx.fail("the in-tree key-value heap is full");
    }
  }

  const std::vector<std::byte> value_ = std::vector<std::byte>(kKvValueBytes, std::byte{0x3c});
  pmlab::Ptm ptm_;
  pmlab::Map map_;
  std::vector<pmlab::Ptm::Session> sessions_;
  std::unique_ptr<pool::Pool> tree_pool_;
  std::unique_ptr<ptm::PtmStore> tree_store_;
  std::optional<TreeKv> tree_;
};

// The persist B+-tree: pmlab::Tree and the in-tree ds B+-tree over a ds arena of its own pool, the same
// structure with the same options (thread-safe, 32-slot leaves), loaded with the same keys; gets and puts
// as the key-value pair's, each durable when it returns.
class TreePair {
 public:
  using TreeInTree = ds::BPTree<ds::Arena<ds::Durable>>;

  TreePair(RunContext& ctx, Beside& beside)
      : library_(pmlab::Tree::create(beside.path("tree"), kKvPoolBytes, {8, kKvValueBytes})) {
    tree_pool_ = take(ctx, pool::Pool::create(beside.path("tree-tree"), kKvPoolBytes, "tree"));
    ds::Options o;
    o.value_bytes = kKvValueBytes;
    o.concurrent = true;
    // Where pmlab::Tree keeps its arena: past a descriptor line.
    arena_.emplace(tree_pool_->data() + 64, tree_pool_->data_size() - 64, tree_pool_->persister());
    tree_.emplace(*arena_, o);
    if (Status st = tree_->create(0); !st) ctx.fail(st.message());
    for (uint64_t i = 0; i < kKvKeys; ++i) {
      library_.put(KeyBytes(loaded_key(i)).view(), value_.data());
      if (!tree_->insert(loaded_key(i), 0, value_.data())) ctx.fail("the in-tree B+-tree's pool is full");
    }
  }

  void add_contenders(std::vector<Contender>& out) {
    out.emplace_back("library_tree", [this](int thread, uint64_t i) {
      const KvOp op = kv_op(thread, i);
      const KeyBytes key(op.key);
      std::byte value[kKvValueBytes];
      if (op.put) library_.put(key.view(), value_.data());
      else (void)library_.get(key.view(), value);
      return true;
    });
    out.emplace_back("in_tree_tree", [this](int thread, uint64_t i) {
      const KvOp op = kv_op(thread, i);
      std::byte value[kKvValueBytes];
      if (op.put) {
        if (!tree_->insert(op.key, 0, value_.data())) throw std::runtime_error("the in-tree B+-tree's pool is full");
      } else {
        (void)tree_->read(op.key, 0, value);
      }
      return true;
    });
  }

 private:
  const std::vector<std::byte> value_ = std::vector<std::byte>(kKvValueBytes, std::byte{0x3c});
  pmlab::Tree library_;
  std::unique_ptr<pool::Pool> tree_pool_;
  std::optional<ds::Arena<ds::Durable>> arena_;
  std::optional<TreeInTree> tree_;
};

void body(RunContext& ctx) {
  const int threads = ctx.threads();
  Beside beside(ctx);
  LogPair log(ctx, beside, threads);
  PtmPair ptm(ctx, beside, threads);
  KvPair kv(ctx, beside, threads, ptm.options());
  TreePair tree(ctx, beside);
  std::vector<Contender> contenders;
  log.add_contenders(contenders);
  ptm.add_contenders(contenders);
  kv.add_contenders(contenders);
  tree.add_contenders(contenders);
  enum { kLibraryLog, kTreeLog, kLibraryPtm, kLibrarySession, kTreePtm, kLibraryKv, kTreeKv, kLibraryTree, kTreeTree };
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
  ratio_metrics(ctx, r, kLibraryTree, kTreeTree, "tree",
                "pmlab::Tree gets and puts vs the in-tree persist B+-tree on a pool of its own");
  ctx.metric("rounds", static_cast<double>(r.throughput.size()), "count");
  ctx.note("persister",
           "both sides of each pair on pool files beside the run's pool, with the pools' own "
           "persister (domain and flush the mapping implies), not the run's --set domain/flush");
}

const CaseRegistration registration{CaseDef{
    .suite = "core",
    .name = "library",
    .summary =
        "libpmlab's pmlab::Log, pmlab::Ptm, pmlab::Map and pmlab::Tree vs the same designs in-tree, side by side "
        "(target >= 0.95x)",
    .params = {std_params::choice("medium", "pool: the library's objects are pool files", {"pool"}, {"pool"}),
               std_params::threads({"1", "2"}, {"1"})},
    .region_bytes = [](const Params&) { return uint64_t{1} << 20; },
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::core
