// A per-transaction map from an 8-byte-word (or cache-line) offset to a small index: open addressing,
// cleared in O(1) by bumping an epoch, so a transaction of two writes does not pay for the last one of a
// thousand. Volatile scratch of one thread.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "pmlab/common/random.hpp"

namespace pmlab::ptm {

class WordMap {
 public:
  explicit WordMap(size_t capacity = 256) { resize(capacity < 16 ? 16 : capacity); }

  void clear() noexcept {
    size_ = 0;
    if (++epoch_ == 0) {  // wrapped: stale slots could look live
      for (Slot& s : slots_) s.epoch = 0;
      epoch_ = 1;
    }
  }
  size_t size() const noexcept { return size_; }
  // clear(), and back to a small table if an earlier transaction grew it past `slots`: a bulk load's
  // thousands of lines would otherwise make every later transaction's lookups miss the cache.
  void clear_and_shrink(size_t slots = 4096) {
    if (slots_.size() > slots) {
      resize(256);
      epoch_ = 1;
      size_ = 0;
    } else {
      clear();
    }
  }

  // The value stored for `key`, or `value` newly inserted; `.second` says whether it was inserted.
  std::pair<uint32_t, bool> insert(uint64_t key, uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (uint64_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.epoch != epoch_) {
        s = Slot{key, value, epoch_};
        ++size_;
        return {value, true};
      }
      if (s.key == key) return {s.value, false};
    }
  }
  const uint32_t* find(uint64_t key) const noexcept {
    for (uint64_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.epoch != epoch_) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

  static uint64_t hash(uint64_t key) noexcept { return (key * 0x9E3779B97F4A7C15ull) >> 17; }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = 0;
    uint32_t epoch = 0;
  };
  void resize(size_t n) {
    slots_.assign(n, Slot{});
    mask_ = n - 1;
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    const uint32_t live = epoch_;
    resize(old.size() * 2);
    epoch_ = 1;
    size_ = 0;
    for (const Slot& s : old)
      if (s.epoch == live) insert(s.key, s.value);
  }

  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  uint32_t epoch_ = 1;
  size_t size_ = 0;
};

}  // namespace pmlab::ptm
