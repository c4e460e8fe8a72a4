// What every lock-free sorted set in pmlab offers — the PersistentSet concept, the family's plugin
// interface (the benches and crash subjects are templates over it) — and the names of its designs
// ([PMIdioBench] Table 3).
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <optional>
#include <thread>
#include <string_view>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/config.hpp"

namespace pmlab::lockfree {

enum class ListDesign : uint8_t {
  volatile_harris,  // Harris's list, nothing persisted (the DRAM baseline)
  tlog,             // links persisted + per-thread micro-log of the in-flight update, redone on recovery
  logfree,          // eADR: Harris as is, a fence at each linearization point
  soft,             // Zuriel et al. SOFT: volatile list in DRAM, persistent nodes with validity, no links
  linkfree,         // Zuriel et al. Link-free: nodes (and unpersisted links) in PMEM, validity + flush flags
};

inline constexpr ListDesign kListDesigns[] = {ListDesign::volatile_harris, ListDesign::tlog, ListDesign::logfree,
                                              ListDesign::soft, ListDesign::linkfree};

const char* to_string(ListDesign d) noexcept;
std::optional<ListDesign> parse_list_design(std::string_view name) noexcept;
// The durability domains a design is correct under (volatile: none).
std::vector<persist::Domain> claimed_domains(ListDesign d);

// Keys are 1 .. kMaxKey (0 is the head sentinel; TLog packs a key into 30 bits of its log word).
inline constexpr uint64_t kMaxKey = (uint64_t{1} << 30) - 1;

enum class InsertOutcome : uint8_t { inserted, present, no_space };

// An insert that found the slab full retries outside its epoch: the nodes it needs may be waiting for a
// descheduled thread to leave an old epoch (more threads than cores), and waiting inside a critical
// section would hold the epoch back itself. After `kMaxWaits` yields the slab is taken to be full.
template <class Attempt, class Reclaim>
bool insert_with_backpressure(Attempt&& attempt, Reclaim&& reclaim, std::atomic<uint64_t>& failures) {
  constexpr int kMaxWaits = 20000;
  for (int wait = 0;; ++wait) {
    const InsertOutcome o = attempt();
    if (o != InsertOutcome::no_space) return o == InsertOutcome::inserted;
    if (wait == kMaxWaits) {
      failures.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    reclaim();
    if (wait > 0) std::this_thread::yield();
  }
}

// A lock-free sorted set of keys 1 .. kMaxKey in a region: formatted once, recovered after a crash,
// used by threads that each pass their own id (the per-thread log slot or epoch record).
template <class S>
concept PersistentSet = requires(S s, int tid, uint64_t key, uint32_t capacity, int threads) {
  { S::bytes_needed(capacity, threads) } -> std::convertible_to<uint64_t>;
  { s.format(capacity, threads) } -> std::same_as<Status>;
  { s.recover() } -> std::same_as<Status>;
  { s.insert(tid, key) } -> std::same_as<bool>;
  { s.try_insert(tid, key) } -> std::same_as<InsertOutcome>;  // tells a full slab from a present key
  { s.remove(tid, key) } -> std::same_as<bool>;
  { s.contains(tid, key) } -> std::same_as<bool>;
  { s.keys() } -> std::same_as<std::vector<uint64_t>>;  // in order; quiescent only
  { s.check() } -> std::same_as<Status>;                // structural invariants; quiescent only
};

}  // namespace pmlab::lockfree
