// A fixed-capacity map from media line to per-line state, with least-recently-used replacement: the
// shape of both on-DIMM buffers. No allocation after construction and O(1) per operation, because the
// device model runs once per 64 B event of every modelled run (its cost is benchmarked by model.cost).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <vector>

namespace pmlab::model {

template <class Payload>
class LruTable {
 public:
  struct Evicted {
    uint64_t key;
    Payload payload;
  };

  explicit LruTable(uint32_t capacity) : slots_(capacity) {
    uint32_t buckets = 2;
    while (buckets < 2 * capacity) buckets <<= 1;
    index_.assign(buckets, kEmpty);
    mask_ = buckets - 1;
    clear();
  }

  uint32_t capacity() const noexcept { return static_cast<uint32_t>(slots_.size()); }
  uint32_t size() const noexcept { return size_; }

  // The line's state without changing its recency, or null.
  Payload* find(uint64_t key) noexcept {
    const uint32_t s = lookup(key);
    return s == kEmpty ? nullptr : &slots_[s].payload;
  }
  // The line's state, made most recently used, or null.
  Payload* touch(uint64_t key) noexcept {
    const uint32_t s = lookup(key);
    if (s == kEmpty) return nullptr;
    unlink(s);
    push_front(s);
    return &slots_[s].payload;
  }

  // Adds an absent key as most recently used; when full, first evicts and returns the least recent line.
  // `*where` points at the new line's state afterwards.
  std::optional<Evicted> insert(uint64_t key, Payload payload, Payload** where) {
    assert(capacity() > 0 && lookup(key) == kEmpty);
    std::optional<Evicted> evicted;
    if (size_ == capacity()) {
      const uint32_t victim = tail_;
      evicted = Evicted{slots_[victim].key, slots_[victim].payload};
      remove_slot(victim);
    }
    const uint32_t s = free_;
    free_ = slots_[s].next;
    slots_[s].key = key;
    slots_[s].payload = payload;
    push_front(s);
    place(key, s);
    ++size_;
    *where = &slots_[s].payload;
    return evicted;
  }

  // Removes the key; returns its state when it was present.
  std::optional<Payload> erase(uint64_t key) noexcept {
    const uint32_t s = lookup(key);
    if (s == kEmpty) return std::nullopt;
    Payload out = slots_[s].payload;
    remove_slot(s);
    return out;
  }

  void clear() noexcept {
    std::fill(index_.begin(), index_.end(), kEmpty);
    head_ = tail_ = kEmpty;
    size_ = 0;
    free_ = slots_.empty() ? kEmpty : 0;
    for (uint32_t i = 0; i < slots_.size(); ++i) slots_[i].next = i + 1 < slots_.size() ? i + 1 : kEmpty;
  }

  // Visits every line from most to least recently used.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (uint32_t s = head_; s != kEmpty; s = slots_[s].next) fn(slots_[s].key, slots_[s].payload);
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t key = 0;
    Payload payload{};
    uint32_t prev = kEmpty;
    uint32_t next = kEmpty;
  };

  uint32_t bucket_of(uint64_t key) const noexcept {
    return static_cast<uint32_t>((key * 0x9e3779b97f4a7c15ULL) >> 32) & mask_;
  }

  uint32_t lookup(uint64_t key) const noexcept {
    for (uint32_t b = bucket_of(key);; b = (b + 1) & mask_) {
      const uint32_t s = index_[b];
      if (s == kEmpty) return kEmpty;
      if (slots_[s].key == key) return s;
    }
  }

  void place(uint64_t key, uint32_t slot) noexcept {
    uint32_t b = bucket_of(key);
    while (index_[b] != kEmpty) b = (b + 1) & mask_;
    index_[b] = slot;
  }

  // Linear probing with backward-shift deletion: no tombstones, so lookups stay short forever.
  void unplace(uint64_t key) noexcept {
    uint32_t hole = bucket_of(key);
    while (slots_[index_[hole]].key != key) hole = (hole + 1) & mask_;
    for (uint32_t b = (hole + 1) & mask_; index_[b] != kEmpty; b = (b + 1) & mask_) {
      const uint32_t home = bucket_of(slots_[index_[b]].key);
      // Move b's entry into the hole unless its home lies cyclically in (hole, b].
      const bool stays = hole <= b ? (home > hole && home <= b) : (home > hole || home <= b);
      if (!stays) {
        index_[hole] = index_[b];
        hole = b;
      }
    }
    index_[hole] = kEmpty;
  }

  void remove_slot(uint32_t s) noexcept {
    unplace(slots_[s].key);
    unlink(s);
    slots_[s].next = free_;
    free_ = s;
    --size_;
  }

  void unlink(uint32_t s) noexcept {
    Slot& x = slots_[s];
    if (x.prev != kEmpty) slots_[x.prev].next = x.next;
    else head_ = x.next;
    if (x.next != kEmpty) slots_[x.next].prev = x.prev;
    else tail_ = x.prev;
  }

  void push_front(uint32_t s) noexcept {
    slots_[s].prev = kEmpty;
    slots_[s].next = head_;
    if (head_ != kEmpty) slots_[head_].prev = s;
    head_ = s;
    if (tail_ == kEmpty) tail_ = s;
  }

  std::vector<Slot> slots_;
  std::vector<uint32_t> index_;
  uint32_t mask_ = 0;
  uint32_t head_ = kEmpty;
  uint32_t tail_ = kEmpty;
  uint32_t free_ = kEmpty;
  uint32_t size_ = 0;
};

}  // namespace pmlab::model
