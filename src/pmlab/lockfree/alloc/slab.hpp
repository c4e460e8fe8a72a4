// A slab of fixed-size nodes inside a region addressed by offsets, indexed by a volatile lock-free
// bitmap ([PMIdioBench] §6.2, "Memory Allocator Design").
//
// The nodes live in the region (the pool for persistent designs); the bitmap that says which are taken
// lives in DRAM and is never persisted. After a crash the owner rebuilds it by walking its structure and
// marking every reachable node (mark_allocated): whatever was allocated but not yet linked, or unlinked
// but not yet reclaimed, comes back free, so a crash leaks nothing and allocation needs no log.
// Nodes are named by offsets from the region base (0 is null), so the region may map anywhere.
//
// Bits are searched a 64-bit word at a time with std::countr_one (the PMIdioBench artifact searched its 64-bit
// words with the 32-bit ffs and never found the upper half free).
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace pmlab::lockfree {

class Slab {
 public:
  static constexpr int kMaxThreads = 64;

  // Nodes [0, count) of `node_bytes` each (a power of two, >= 8) start at `first_offset` from `base`.
  Slab(std::byte* base, uint64_t first_offset, uint32_t node_bytes, uint32_t count);
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;

  // A free node's offset, or 0 when every node is taken. Lock-free: a fetch_or claims the bit. `tid`
  // only spreads threads over the bitmap.
  uint64_t alloc(int tid) noexcept;
  // Returns a node to the slab (the caller guarantees no thread can still reach it: see EpochReclaimer).
  void free(uint64_t offset) noexcept;

  // Recovery: everything free, then each node the structure reaches marked taken.
  void reset_all_free() noexcept;
  // False when the offset is not a node of this slab or was already marked (a node reached twice).
  bool mark_allocated(uint64_t offset) noexcept;

  bool owns(uint64_t offset) const noexcept {
    return offset >= first_ && offset < first_ + static_cast<uint64_t>(count_) * node_bytes_ &&
           (offset - first_) % node_bytes_ == 0;
  }
  uint32_t index_of(uint64_t offset) const noexcept { return static_cast<uint32_t>((offset - first_) / node_bytes_); }
  uint64_t offset_of(uint32_t index) const noexcept { return first_ + static_cast<uint64_t>(index) * node_bytes_; }
  bool is_allocated(uint64_t offset) const noexcept;
  template <class T>
  T* at(uint64_t offset) const noexcept {
    return reinterpret_cast<T*>(base_ + offset);
  }
  std::byte* base() const noexcept { return base_; }

  uint32_t count() const noexcept { return count_; }
  uint32_t node_bytes() const noexcept { return node_bytes_; }
  uint64_t first_offset() const noexcept { return first_; }
  uint64_t end_offset() const noexcept { return first_ + static_cast<uint64_t>(count_) * node_bytes_; }
  // Nodes taken now (exact when no thread is allocating or freeing).
  uint64_t allocated() const noexcept;

 private:
  std::byte* base_;
  uint64_t first_;
  uint32_t node_bytes_;
  uint32_t count_;
  size_t words_;
  std::unique_ptr<std::atomic<uint64_t>[]> bits_;  // 1 = taken
  uint64_t tail_mask_ = 0;                         // bits of the last word beyond count_: always taken
  struct alignas(64) Cursor {
    std::atomic<size_t> word{0};
  };
  std::unique_ptr<Cursor[]> cursors_;  // where each thread's next search starts
};

}  // namespace pmlab::lockfree
