// The chained hashtable: a power-of-two array of bucket heads, each a chain of nodes [next][key][cell].
// A new node is written and made durable first, then published by one 8-byte store of the bucket head
// (the commit); an update goes through the node's value cell. Buckets never resize (sized from
// Options::capacity, load factor <= 1). Locking: striped spinlocks by bucket.
#pragma once

#include <bit>
#include <cstring>

#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/common/chain.hpp"
#include "pmlab/ds/common/locks.hpp"
#include "pmlab/ds/common/options.hpp"
#include "pmlab/ds/common/value_cell.hpp"

namespace pmlab::ds {

template <ModePolicy M>
class Hashtable {
 public:
  static constexpr uint64_t kMagic = 0x706d6c61622d6874ULL;  // "pmlab-ht"
  static constexpr const char* kName = "hashtable";

  Hashtable(Arena<M>& arena, const Options& o) : arena_(arena), cell_(o.value_bytes), concurrent_(o.concurrent) {}

  static uint64_t buckets_for(uint64_t capacity) { return std::bit_ceil(std::max<uint64_t>(capacity, 16)); }
  static uint64_t bytes_needed(const Options& o) {
    const uint64_t node = (16 + ValueCell(o.value_bytes).bytes() + kBlockAlign - 1) & ~(kBlockAlign - 1);
    return sizeof(ArenaHeader) + buckets_for(o.capacity) * 8 + o.capacity * node + 2 * kBlockAlign;
  }

  Status create(uint64_t capacity) {
    PMLAB_TRY(arena_.format(kMagic));
    const uint64_t n = buckets_for(capacity);
    const uint64_t buckets = arena_.alloc(n * 8);
    if (buckets == 0) return error(Errc::no_space, "hashtable of " + std::to_string(n) + " buckets does not fit the arena");
    std::memset(arena_.bytes(buckets), 0, n * 8);
    arena_.flush(arena_.bytes(buckets), n * 8);
    arena_.root(0) = buckets;
    arena_.root(1) = n;
    arena_.persist(&arena_.root(0), 16);
    return Status::success();
  }
  Status recover() {
    PMLAB_TRY(arena_.open(kMagic));
    const uint64_t n = arena_.root(1);
    if (n == 0 || !std::has_single_bit(n) || !arena_.contains(arena_.root(0), n * 8))
      return error(Errc::corrupted, "hashtable bucket array is damaged");
    return Status::success();
  }

  bool insert(uint64_t key, uint64_t, const std::byte* value) noexcept {
    const uint64_t b = bucket_of(key);
    MaybeLocked<StripedLocks, uint64_t> guard(locks_, b, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    if (std::byte* node = find(b, key)) {
      cell_.store(arena_, node + 16, value);
      return true;
    }
    const uint64_t off = arena_.alloc(16 + cell_.bytes());
    if (off == 0) return false;
    std::byte* node = arena_.bytes(off);
    uint64_t* head = heads() + b;
    reinterpret_cast<uint64_t*>(node)[0] = *head;
    reinterpret_cast<uint64_t*>(node)[1] = key;
    cell_.init(arena_, node + 16, value);
    arena_.persist(node, 16 + cell_.bytes());
    arena_.store8(head, off);
    arena_.persist(head, 8);
    return true;
  }
  bool update(uint64_t key, uint64_t, const std::byte* value) noexcept {
    const uint64_t b = bucket_of(key);
    MaybeLocked<StripedLocks, uint64_t> guard(locks_, b, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    std::byte* node = find(b, key);
    if (node == nullptr) return false;
    cell_.store(arena_, node + 16, value);
    return true;
  }
  bool read(uint64_t key, uint64_t, std::byte* out) noexcept {
    const uint64_t b = bucket_of(key);
    MaybeLocked<StripedLocks, uint64_t> guard(locks_, b, concurrent_);
    const std::byte* node = find(b, key);
    if (node == nullptr) return false;
    std::memcpy(out, cell_.value(node + 16), cell_.value_bytes());
    return true;
  }
  // No key order: a scan reads the key's bucket and the following ones until n records (as a hash map
  // can serve YCSB's scan at all).
  uint32_t scan(uint64_t key, uint64_t, uint32_t n, std::byte* out) noexcept {
    uint32_t seen = 0;
    const uint64_t mask = arena_.root(1) - 1;
    for (uint64_t b = bucket_of(key), visited = 0; seen < n && visited <= mask; b = (b + 1) & mask, ++visited) {
      MaybeLocked<StripedLocks, uint64_t> guard(locks_, b, concurrent_);
      for (uint64_t off = Arena<M>::load8(heads() + b); off != 0 && seen < n;
           off = *arena_.template at<uint64_t>(off)) {
        std::memcpy(out, cell_.value(arena_.bytes(off) + 16), cell_.value_bytes());
        ++seen;
      }
    }
    return seen;
  }

  uint64_t count() const noexcept {
    uint64_t n = 0;
    for (uint64_t b = 0; b < arena_.root(1); ++b)
      for (uint64_t off = heads()[b]; off != 0; off = *arena_.template at<uint64_t>(off)) ++n;
    return n;
  }
  // Every chain stays inside the arena, is acyclic (bounded by the nodes the arena can hold), holds keys
  // of its own bucket only, and every cell has a value.
  Status check() const {
    const uint64_t limit = arena_.used() / kBlockAlign;
    for (uint64_t b = 0; b < arena_.root(1); ++b) {
      uint64_t steps = 0;
      for (uint64_t off = heads()[b]; off != 0; off = *arena_.template at<uint64_t>(off)) {
        if (!arena_.contains(off, 16 + cell_.bytes()) || off % kBlockAlign != 0)
          return error(Errc::corrupted, "bucket " + std::to_string(b) + " links outside the arena");
        if (++steps > limit) return error(Errc::corrupted, "bucket " + std::to_string(b) + " chain has a cycle");
        const std::byte* node = arena_.bytes(off);
        if (bucket_of(reinterpret_cast<const uint64_t*>(node)[1]) != b)
          return error(Errc::corrupted, "a key sits in the wrong bucket " + std::to_string(b));
        if (!cell_.valid(node + 16) || !cell_.present(node + 16))
          return error(Errc::corrupted, "a linked node in bucket " + std::to_string(b) + " has no value");
      }
    }
    return Status::success();
  }

 private:
  uint64_t* heads() const noexcept { return arena_.template at<uint64_t>(arena_.root(0)); }
  uint64_t bucket_of(uint64_t key) const noexcept {
    return mix_key(key) >> (64 - std::countr_zero(arena_.root(1)));
  }
  std::byte* find(uint64_t b, uint64_t key) const noexcept { return find_in_chain(arena_, heads() + b, key); }

  Arena<M>& arena_;
  ValueCell cell_;
  bool concurrent_;
  StripedLocks locks_;
};

}  // namespace pmlab::ds
