#include "pmlab/lockfree/alloc/slab.hpp"

#include <cassert>

namespace pmlab::lockfree {

Slab::Slab(std::byte* base, uint64_t first_offset, uint32_t node_bytes, uint32_t count)
    : base_(base), first_(first_offset), node_bytes_(node_bytes), count_(count), words_((count + 63) / 64) {
  assert(node_bytes >= 8 && std::has_single_bit(node_bytes));
  assert(first_offset > 0 && "offset 0 is the null node");
  bits_ = std::make_unique<std::atomic<uint64_t>[]>(words_ == 0 ? 1 : words_);
  if (count % 64 != 0) tail_mask_ = ~((uint64_t{1} << (count % 64)) - 1);
  cursors_ = std::make_unique<Cursor[]>(kMaxThreads);
  for (int t = 0; t < kMaxThreads; ++t)
    cursors_[t].word.store(words_ == 0 ? 0 : (static_cast<size_t>(t) * words_ / kMaxThreads),
                           std::memory_order_relaxed);
  reset_all_free();
}

void Slab::reset_all_free() noexcept {
  // Quiescent (recovery, construction): release stores publish the reset to whoever allocates next.
  for (size_t w = 0; w < words_; ++w) bits_[w].store(0, std::memory_order_release);
  if (tail_mask_ != 0) bits_[words_ - 1].store(tail_mask_, std::memory_order_release);
}

uint64_t Slab::alloc(int tid) noexcept {
  if (words_ == 0) return 0;
  Cursor& cursor = cursors_[static_cast<unsigned>(tid) % kMaxThreads];
  const size_t start = cursor.word.load(std::memory_order_relaxed) % words_;
  for (size_t step = 0; step < words_; ++step) {
    const size_t w = (start + step) % words_;
    uint64_t bits = bits_[w].load(std::memory_order_relaxed);
    while (bits != ~uint64_t{0}) {
      const int bit = std::countr_one(bits);  // lowest free bit of all 64
      const uint64_t mask = uint64_t{1} << bit;
      const uint64_t before = bits_[w].fetch_or(mask, std::memory_order_acq_rel);
      if ((before & mask) == 0) {
        cursor.word.store(w, std::memory_order_relaxed);
        return offset_of(static_cast<uint32_t>(w * 64 + static_cast<size_t>(bit)));
      }
      bits = before | mask;
    }
  }
  return 0;
}

void Slab::free(uint64_t offset) noexcept {
  assert(owns(offset));
  const uint32_t i = index_of(offset);
  const uint64_t mask = uint64_t{1} << (i % 64);
  [[maybe_unused]] const uint64_t before = bits_[i / 64].fetch_and(~mask, std::memory_order_acq_rel);
  assert((before & mask) != 0 && "double free of a slab node");
}

bool Slab::mark_allocated(uint64_t offset) noexcept {
  if (!owns(offset)) return false;
  const uint32_t i = index_of(offset);
  const uint64_t mask = uint64_t{1} << (i % 64);
  return (bits_[i / 64].fetch_or(mask, std::memory_order_acq_rel) & mask) == 0;
}

bool Slab::is_allocated(uint64_t offset) const noexcept {
  if (!owns(offset)) return false;
  const uint32_t i = index_of(offset);
  return (bits_[i / 64].load(std::memory_order_acquire) >> (i % 64)) & 1;
}

uint64_t Slab::allocated() const noexcept {
  uint64_t n = 0;
  for (size_t w = 0; w < words_; ++w)
    n += static_cast<uint64_t>(std::popcount(bits_[w].load(std::memory_order_acquire)));
  return n - static_cast<uint64_t>(std::popcount(tail_mask_));
}

}  // namespace pmlab::lockfree
