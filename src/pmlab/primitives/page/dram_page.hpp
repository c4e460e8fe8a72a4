// A buffer-pool page in DRAM and the cache lines written since its last flush.
//
// The flushers persist only what changed (micro-log) or the whole page (copy-on-write); either way the
// page knows its dirty lines, because the writes to it go through write() or mark_dirty().
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "pmlab/common/status.hpp"

namespace pmlab::primitives::page {

inline constexpr uint32_t kLineBytes = 64;
inline constexpr uint32_t kMinPageBytes = 4096;
inline constexpr uint32_t kMaxPageBytes = 65536;
inline constexpr uint32_t kMaxLinesPerPage = kMaxPageBytes / kLineBytes;

// Page sizes the store and flushers take: a power of two from 4 KiB to 64 KiB.
Status check_page_size(uint64_t bytes);

// One bit per cache line of a page of up to 64 KiB, and their count (kept, so asking costs nothing).
class DirtyLines {
 public:
  void mark(uint32_t line) noexcept {
    uint64_t& word = words_[line / 64];
    const uint64_t bit = uint64_t{1} << (line % 64);
    count_ += (word & bit) ? 0 : 1;
    word |= bit;
  }
  bool test(uint32_t line) const noexcept { return words_[line / 64] >> (line % 64) & 1; }
  void clear() noexcept {
    words_.fill(0);
    count_ = 0;
  }
  uint32_t count() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  // Calls visit(line) for every dirty line, in increasing order.
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (uint32_t w = 0; w < words_.size(); ++w)
      for (uint64_t bits = words_[w]; bits != 0; bits &= bits - 1)
        visit(w * 64 + static_cast<uint32_t>(std::countr_zero(bits)));
  }

 private:
  std::array<uint64_t, kMaxLinesPerPage / 64> words_{};
  uint32_t count_ = 0;
};

class DramPage {
 public:
  // A zeroed, clean page of `bytes` (check_page_size first).
  explicit DramPage(uint32_t bytes);

  uint64_t pid = 0;  // the logical page this frame holds

  std::byte* data() noexcept { return data_.get(); }
  const std::byte* data() const noexcept { return data_.get(); }
  uint32_t size() const noexcept { return size_; }
  uint32_t lines() const noexcept { return size_ / kLineBytes; }

  // Copies into the page and marks the lines it touched dirty. Fails when the range leaves the page.
  Status write(size_t offset, const void* src, size_t len);
  void mark_dirty(uint32_t line) noexcept { dirty_.mark(line); }
  const DirtyLines& dirty() const noexcept { return dirty_; }
  void clear_dirty() noexcept { dirty_.clear(); }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte[], Free> data_;
  uint32_t size_;
  DirtyLines dirty_;
};

}  // namespace pmlab::primitives::page
