// Judges a design's write-backs and fences in a region as `pmlab crash exec` does for a program: a
// write-back of a line that holds what it held when it was last written back (or when judging began) is
// redundant, and a fence that follows no write-back with news is empty. A test attaches it to the
// persister a format writes through, on a region as a new pool has it (zeros), and expects neither.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "pmlab/persist/observer.hpp"

namespace pmlab::testing {

class WriteBackJudge final : public persist::Observer {
 public:
  static constexpr size_t kLine = 64;

  // `region` starts on a line; its content now counts as written back.
  explicit WriteBackJudge(std::span<const std::byte> region)
      : region_(region), written_back_(region.begin(), region.end()) {}

  void on_writeback(const void* addr, size_t len, persist::Writeback, const std::source_location&) noexcept override {
    const auto* at = static_cast<const std::byte*>(addr);
    if (at < region_.data() || at + len > region_.data() + region_.size()) {
      ++outside;
      return;
    }
    const size_t from = static_cast<size_t>(at - region_.data()) / kLine * kLine;
    for (size_t line = from; line < static_cast<size_t>(at - region_.data()) + len; line += kLine) {
      const size_t n = std::min(kLine, region_.size() - line);
      if (std::memcmp(region_.data() + line, written_back_.data() + line, n) == 0) {
        ++redundant_lines;
        continue;
      }
      std::memcpy(written_back_.data() + line, region_.data() + line, n);
      ++lines_with_news;
      news_since_fence_ = true;
    }
  }

  void on_fence(const std::source_location&) noexcept override {
    if (!news_since_fence_) ++empty_fences;
    news_since_fence_ = false;
    ++fences;
  }

  uint64_t redundant_lines = 0;  // written back with nothing new
  uint64_t lines_with_news = 0;
  uint64_t empty_fences = 0;
  uint64_t fences = 0;
  uint64_t outside = 0;  // write-backs outside the region (none expected)

 private:
  std::span<const std::byte> region_;
  std::vector<std::byte> written_back_;
  bool news_since_fence_ = false;
};

}  // namespace pmlab::testing
