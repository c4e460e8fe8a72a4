// The chained hashtable: a power-of-two array of bucket heads, each a chain of nodes [next][key][cell].
// A new node is written and made durable first, then published by one 8-byte store of the bucket head
// (the commit); an update goes through the node's value cell; a remove unlinks the node with one 8-byte
// store of the link that reaches it. Buckets never resize (sized from the capacity create() is given,
// load factor <= 1). Locking (threads > 1): a striped version lock by bucket, which writers and scans hold;
// a point read takes none and writes nothing shared: it walks the chain as writers change it
// (find_in_chain_shared) and copies the value as the cell's own update count allows (read_unlocked). That
// needs blocks that are never reused, which create(), recover() and set_concurrent() check.
#pragma once

#include <bit>

#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/common/chain.hpp"
#include "pmlab/ds/common/locks.hpp"
#include "pmlab/ds/common/structure.hpp"

namespace pmlab::ds {

template <PersistencePolicy A>
class Hashtable : public StructureBase<Identity{"hashtable", "ht"}> {
 public:
  // How threads share it, as a run's context states it.
  static constexpr const char* kLocking =
      "striped version locks (per bucket) that writers and scans take; point reads take none (a "
      "chain walk and the value cell's update count)";
  static constexpr bool kDenseKeysOnly = false;

  Hashtable(A& arena, const Options& o) : StructureBase(o), arena_(arena) {}

  static uint64_t buckets_for(uint64_t capacity) { return std::bit_ceil(std::max<uint64_t>(capacity, 16)); }
  static uint64_t bytes_needed(const Options& o) {
    const uint64_t node = block_bytes(chain_node_bytes(ValueCell(o.value_bytes)));
    return sizeof(ArenaHeader) + buckets_for(o.capacity) * 8 + o.capacity * node + 2 * kBlockAlign;
  }

  Status create(uint64_t capacity) {
    PMLAB_TRY(can_share(concurrent_));
    const uint64_t n = buckets_for(capacity);
    return format_table(arena_, kMagic, n, 8, "hashtable of " + std::to_string(n) + " buckets");
  }
  Status recover() {
    PMLAB_TRY(can_share(concurrent_));
    PMLAB_TRY(arena_.open(kMagic));
    const uint64_t n = arena_.load(arena_.root(1));
    if (n == 0 || !std::has_single_bit(n) || !arena_.contains(arena_.load(arena_.root(0)), n * 8))
      return error(Errc::corrupted, "hashtable bucket array is damaged");
    return Status::success();
  }

  Status set_concurrent(bool shared) {
    PMLAB_TRY(can_share(shared));
    concurrent_ = shared;
    return Status::success();
  }

  bool insert(uint64_t key, uint64_t, const std::byte* value) noexcept(A::kNothrow) {
    const uint64_t b = bucket_of(key);
    MaybeLocked<StripedVersionLocks, uint64_t> guard(locks_, b, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    if (std::byte* node = find(b, key)) {
      cell_.store(arena_, node + 16, value);
      return true;
    }
    return push_on_chain(arena_, cell_, heads() + b, key, value);
  }
  bool update(uint64_t key, uint64_t, const std::byte* value) noexcept(A::kNothrow) {
    const uint64_t b = bucket_of(key);
    MaybeLocked<StripedVersionLocks, uint64_t> guard(locks_, b, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    std::byte* node = find(b, key);
    if (node == nullptr) return false;
    cell_.store(arena_, node + 16, value);
    return true;
  }
  bool remove(uint64_t key, uint64_t) noexcept(A::kNothrow) {
    const uint64_t b = bucket_of(key);
    MaybeLocked<StripedVersionLocks, uint64_t> guard(locks_, b, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    return unlink_from_chain(arena_, cell_, heads() + b, key);
  }
  // Always put into the caller: a point read is a chain of cache misses that the processor overlaps with
  // the next operations' misses, and a call's frame around it takes room in that overlap (docs/ds.md,
  // "Reading a value").
  [[gnu::always_inline]] bool read(uint64_t key, uint64_t, std::byte* out) noexcept(A::kNothrow) {
    const uint64_t b = bucket_of(key);
    if (!concurrent_) {
      const std::byte* node = find(b, key);
      return node != nullptr && cell_.read(arena_, node + 16, out);
    }
    if constexpr (A::kReusesBlocks) {
      return false;  // never shared: can_share()
    } else {
      const std::byte* node = find_in_chain_shared(arena_, heads() + b, key);
      return node != nullptr && cell_.read_unlocked(arena_, node + 16, out);
    }
  }

  // No key order: a scan reads the key's bucket and the following ones until n records (as a hash map
  // can serve YCSB's scan at all).
  uint32_t scan(uint64_t key, uint64_t, uint32_t n, std::byte* out) noexcept(A::kNothrow) {
    uint32_t seen = 0;
    const uint64_t mask = arena_.load(arena_.root(1)) - 1;
    for (uint64_t b = bucket_of(key), visited = 0; seen < n && visited <= mask; b = (b + 1) & mask, ++visited) {
      MaybeLocked<StripedVersionLocks, uint64_t> guard(locks_, b, concurrent_);
      for (uint64_t off = arena_.load8(heads() + b); off != 0 && seen < n; off = next_in_chain(arena_, off)) {
        cell_.read(arena_, arena_.bytes(off) + 16, out);
        ++seen;
      }
    }
    return seen;
  }

  uint64_t count() const noexcept(A::kNothrow) {
    uint64_t n = 0;
    const uint64_t buckets = arena_.load(arena_.root(1));
    for (uint64_t b = 0; b < buckets; ++b)
      for (uint64_t off = arena_.load(heads() + b); off != 0; off = next_in_chain(arena_, off)) ++n;
    return n;
  }
  // Every chain stays inside the arena, is acyclic (bounded by the nodes the arena can hold), holds keys
  // of its own bucket only, and every cell has a value.
  Status check() const {
    const uint64_t limit = arena_.used() / A::kAlign;
    const uint64_t buckets = arena_.load(arena_.root(1));
    for (uint64_t b = 0; b < buckets; ++b) {
      uint64_t steps = 0;
      for (uint64_t off = arena_.load(heads() + b); off != 0; off = next_in_chain(arena_, off)) {
        if (!arena_.contains(off, chain_node_bytes(cell_)) || off % A::kAlign != 0)
          return error(Errc::corrupted, "bucket " + std::to_string(b) + " links outside the arena");
        if (++steps > limit) return error(Errc::corrupted, "bucket " + std::to_string(b) + " chain has a cycle");
        const std::byte* node = arena_.bytes(off);
        if (bucket_of(arena_.load(reinterpret_cast<const uint64_t*>(node) + 1)) != b)
          return error(Errc::corrupted, "a key sits in the wrong bucket " + std::to_string(b));
        if (!cell_.valid(arena_, node + 16) || !cell_.present(arena_, node + 16))
          return error(Errc::corrupted, "a linked node in bucket " + std::to_string(b) + " has no value");
      }
    }
    return Status::success();
  }

 private:
  uint64_t* heads() const noexcept(A::kNothrow) { return arena_.template at<uint64_t>(arena_.load(arena_.root(0))); }
  uint64_t bucket_of(uint64_t key) const noexcept(A::kNothrow) {
    return mix_key(key) >> (64 - std::countr_zero(arena_.load(arena_.root(1))));
  }
  // A shared table's readers hold no lock: a node they reach must stay that node (find_in_chain_shared).
  static Status can_share(bool shared) {
    if (shared && A::kReusesBlocks)
      return error(Errc::invalid_argument,
                   "a hashtable shared between threads needs memory that never reuses a freed block");
    return Status::success();
  }
  std::byte* find(uint64_t b, uint64_t key) const noexcept(A::kNothrow) {
    return find_in_chain(arena_, heads() + b, key);
  }

  A& arena_;
  StripedVersionLocks locks_;
};

}  // namespace pmlab::ds
