// Which page each flush writes and which of its lines are dirty, drawn before the timed loop.
#pragma once

#include <cstdint>
#include <cstring>
#include <algorithm>
#include <numeric>
#include <vector>

#include "pmlab/common/random.hpp"
#include "pmlab/primitives/page/dram_page.hpp"

namespace pmlab::suites::primitives {

class PageStreams {
 public:
  // Thread `thread` of `threads` flushes pages thread, thread + threads, … of `pages`, uniformly at random;
  // each flush dirties `dirty` distinct random lines.
  PageStreams(uint64_t pages, uint32_t page_size, uint32_t dirty, int thread, int threads)
      : dirty_(dirty), pids_(kPicks), lines_(static_cast<size_t>(kSets) * dirty) {
    uint64_t seed = 0x9a9e5eed + static_cast<uint64_t>(thread);
    const uint64_t own = std::max<uint64_t>(1, pages / static_cast<uint64_t>(threads));
    for (uint64_t& pid : pids_) pid = static_cast<uint64_t>(thread) + (splitmix64(seed) % own) * threads;
    const uint32_t count = page_size / pmlab::primitives::page::kLineBytes;
    std::vector<uint16_t> all(count);
    std::iota(all.begin(), all.end(), uint16_t{0});
    for (uint32_t s = 0; s < kSets; ++s) {
      for (uint32_t j = 0; j < dirty; ++j) {  // a partial Fisher-Yates shuffle: `dirty` distinct lines
        const uint32_t k = j + static_cast<uint32_t>(splitmix64(seed) % (count - j));
        std::swap(all[j], all[k]);
        lines_[static_cast<size_t>(s) * dirty + j] = all[j];
      }
    }
  }

  // Writes into flush i's dirty lines of `frame` and marks them; returns the page to flush.
  uint64_t touch(pmlab::primitives::page::DramPage& frame, uint64_t i) const noexcept {
    const uint16_t* set = &lines_[static_cast<size_t>(i % kSets) * dirty_];
    for (uint32_t j = 0; j < dirty_; ++j) {
      std::memcpy(frame.data() + set[j] * pmlab::primitives::page::kLineBytes, &i, sizeof i);
      frame.mark_dirty(set[j]);
    }
    return pids_[i % kPicks];
  }

 private:
  static constexpr uint32_t kPicks = 4096;
  static constexpr uint32_t kSets = 256;
  uint32_t dirty_;
  std::vector<uint64_t> pids_;
  std::vector<uint16_t> lines_;
};

}  // namespace pmlab::suites::primitives
