// What the primitives suite's cases share: their parameters, the peers' setup, payloads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/pmdk/persistence.hpp"
#include "pmlab/primitives/log/log.hpp"
#include "pmlab/primitives/page/dram_page.hpp"
#include "pmlab/primitives/page/flusher.hpp"

namespace pmlab::suites::primitives {

namespace plog = pmlab::primitives::log;
namespace ppage = pmlab::primitives::page;

inline constexpr const char* kPmemLog = "pmemlog";
inline constexpr const char* kPmemBlk = "pmemblk";
// Each appending thread's share of a log: large enough that truncations are rare, small enough for
// several runs in one pool.
inline constexpr uint64_t kLaneBytes = 64ULL << 20;
// A page store's region: larger than this machine's caches, so flushes reach memory.
inline constexpr uint64_t kStoreBytes = 64ULL << 20;

// medium dram,pool (quick: pool, where the peers run too).
bench::ParamSpec medium_param();
// classic | header | header-dancing | zero | pmemlog, and padding none | line.
bench::ParamSpec writer_param(std::vector<std::string> quick = {});
// cow | ulog | hybrid | pmemblk, page size 4K … 64K, dirty lines 1 … 1024 (points beyond the page are left out).
bench::ParamSpec flusher_param(std::vector<std::string> quick = {});
bench::ParamSpec page_param();
bench::ParamSpec dirty_param(std::vector<std::string> defaults = {"1", "2", "4", "8", "16", "32", "64", "128", "256",
                                                                  "512", "1024"},
                             std::vector<std::string> quick = {"1", "8", "32", "64", "256"});
bench::ParamSpec padding_param(std::vector<std::string> defaults = {"none", "line"},
                               std::vector<std::string> quick = {});
// How our writers store entries (plog::Stores).
bench::ParamSpec stores_param();
// libpmemlog has no padding or stores option: its twins with one are left out of sweeps.
std::optional<std::string> pmemlog_options_are_redundant(const bench::Params& p);

plog::Options log_options(const bench::Params& p, uint32_t lanes);

// The directory for a peer's pool file: beside the run's pool. Skips the run on DRAM.
std::string peer_directory(bench::RunContext& ctx, const char* peer);
// The peer `create` returns; the run is skipped when the peer is unsupported here (PMDK built without it,
// a DRAM medium) and fails on any other error.
template <class Create>
auto peer_or_skip(bench::RunContext& ctx, Create&& create) {
  auto peer = create();
  if (!peer) {
    if (peer.status().code() == Errc::unsupported) ctx.skip(peer.status().message());
    ctx.fail(peer.status().message());
  }
  return std::move(*peer);
}
// The peer `create(directory)` makes in `peer`'s directory (peer_directory, peer_or_skip), prefaulted so that
// its first-touch faults stay out of what is measured.
template <class Create>
auto prefaulted_peer(bench::RunContext& ctx, const char* peer, Create&& create) {
  const std::string dir = peer_directory(ctx, peer);
  auto made = peer_or_skip(ctx, [&] { return create(dir); });
  made->prefault();
  return made;
}

// While alive, the run's device model (`--model`, `--emulate`) sees the PMDK peers' write-backs and drains
// (through pmlab's libpmem interposers) as it sees our writers', so both sides pay the same emulation.
// Taken after the peer's prefault, so the model sees only the measured work.
[[nodiscard]] pmdk::ScopedPersistence peer_persistence_seen_by_model(bench::RunContext& ctx);

// A page flush sweep point with more dirty lines than the page has is left out.
std::optional<std::string> dirty_beyond_page(const bench::Params& p);

// A peer's counters are not the persistence vocabulary's: its flush counts are unknown (null) and its
// fences per operation are the published count. Records PMEM_IS_PMEM_FORCE as it was in effect.
void record_peer_counters(bench::RunContext& ctx, double published_fences_per_op);
// Which kernel composed streamed entries' lines (Persister::store_record_nt): it moves a streamed
// append by ~10%, so a run says which it had.
void note_record_kernel(bench::RunContext& ctx);

// What the hybrid flusher chose at a (dirty lines, threads) point: its calibrated crossover and the
// model's choice, the share of its flushes that went through the micro-log and that explored the other
// policy (its online learners', summed over lanes), and the learners' median ratio of ulog's time to cow's.
void record_hybrid_choices(bench::RunContext& ctx, const ppage::HybridFlusher& hybrid, uint32_t dirty,
                           uint32_t threads);

// Touches every page of the region (keeping its bytes), so no page fault lands in a timed loop: pools on
// tmpfs or a file system are allocated on first write, as a database pre-allocates its log files.
void prefault(std::byte* base, size_t bytes);

// Bytes of a pseudo-random payload, the same for a seed.
std::vector<std::byte> random_bytes(size_t size, uint64_t seed);

}  // namespace pmlab::suites::primitives
