// core.library: libpmlab's API against the same designs called in-tree, side by side in one run
// (bench::interleave): a 64-byte append through pmlab::Log vs primitives::log::Log::append on the zero log,
// and a transfer transaction (two reads, two writes) through pmlab::Ptm vs RedoPtm::run. Each pair runs on
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
#include <pmlab/ptm.hpp>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/side_by_side.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/pmdk/environment.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/pool/scratch.hpp"
#include "pmlab/primitives/log/log.hpp"
#include "pmlab/ptm/store/ptm_store.hpp"

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
  auto tree_ptm_pool = ptm::create_store_pool(beside.path("tree-ptm"), kPtmPoolBytes,
                                              {ptm::StoreKind::redo, threads, kSlotBytes});
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
  };
  enum { kLibraryLog, kTreeLog, kLibraryPtm, kLibrarySession, kTreePtm };
  const int rounds = ctx.quick() ? 11 : 31;
  const InterleaveResult r = interleave(ctx, rounds, phase_seconds(ctx), contenders);
  for (size_t c = 0; c < contenders.size(); ++c)
    ctx.metric(contenders[c].name + "_throughput", median(r.rounds_of(c)), "ops/s");
  ratio_metrics(ctx, r, kLibraryLog, kTreeLog, "log", "pmlab::Log appends vs the in-tree zero log's");
  ratio_metrics(ctx, r, kLibraryPtm, kTreePtm, "ptm", "pmlab::Ptm::run transactions vs the in-tree redo PTM's");
  ratio_metrics(ctx, r, kLibrarySession, kTreePtm, "ptm_session",
                "pmlab::Ptm::Session transactions vs the in-tree redo PTM's");
  ctx.metric("rounds", static_cast<double>(r.throughput.size()), "count");
  ctx.note("persister", "both sides of each pair on pool files beside the run's pool, with the pools' own "
                        "persister (domain and flush the mapping implies), not the run's --set domain/flush");
}

const CaseRegistration registration{CaseDef{
    .suite = "core",
    .name = "library",
    .summary = "libpmlab's pmlab::Log and pmlab::Ptm vs the same designs in-tree, side by side (target >= 0.95x)",
    .params = {std_params::choice("medium", "pool: the library's objects are pool files", {"pool"}, {"pool"}),
               std_params::threads({"1", "2"}, {"1"})},
    .region_bytes = [](const Params&) { return uint64_t{1} << 20; },
    .redundant = {},
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::core
