// The two on-DIMM buffers: the write-combining buffer (DCPMM's XPBuffer) that merges 64 B writes into
// media lines, and the read buffer the prefetcher fills. Both are LRU tables of media lines.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "pmlab/model/device_params.hpp"
#include "pmlab/model/lru_table.hpp"

namespace pmlab::model {

inline constexpr uint32_t kMaxSectors = kMaxMediaLine / kImcLine;

// Which bytes of a media line were written since the line entered the buffer (bit b of word s is byte
// 64·s + b): a line is complete when every byte is, and a partial line needs its old bytes from the media.
struct LineCoverage {
  std::array<uint64_t, kMaxSectors> bytes{};

  void add(uint32_t sector, uint64_t mask) noexcept { bytes[sector] |= mask; }
  bool complete(uint32_t sectors) const noexcept {
    for (uint32_t s = 0; s < sectors; ++s)
      if (bytes[s] != ~uint64_t{0}) return false;
    return true;
  }
};

struct WriteBufferLine {
  LineCoverage written;
  double ready_ns = 0;  // when the line's old contents are in the buffer (its read-modify-write read)
};

struct ReadBufferLine {
  double ready_ns = 0;  // when the media read that brought the line in completes
};

using WriteBuffer = LruTable<WriteBufferLine>;
using ReadBuffer = LruTable<ReadBufferLine>;

// Watches the media lines a DIMM opens; once three consecutive lines are opened (two sequential steps,
// so that one write spanning two lines does not look like a stream), keeps `depth` lines ahead of the
// stream fetched into the read buffer.
class SequentialPrefetcher {
 public:
  explicit SequentialPrefetcher(uint32_t depth) : depth_(depth) {}

  struct Fetch {
    uint64_t first = 1;
    uint64_t last = 0;  // empty when first > last
  };

  // The stream moved to `line`: the lines to fetch now.
  Fetch on_line(uint64_t line) noexcept {
    if (depth_ == 0 || (started_ && line == last_)) return {};
    steps_ = started_ && line == last_ + 1 ? steps_ + 1 : 0;
    started_ = true;
    last_ = line;
    if (steps_ < kConfirmingSteps) {
      ahead_ = line;
      return {};
    }
    Fetch f{std::max(line + 1, ahead_ + 1), line + depth_};
    ahead_ = std::max(ahead_, f.last);
    return f;
  }

  void reset() noexcept {
    started_ = false;
    steps_ = 0;
  }

 private:
  static constexpr uint32_t kConfirmingSteps = 2;
  uint32_t depth_;
  bool started_ = false;
  uint32_t steps_ = 0;  // consecutive sequential steps up to the current line
  uint64_t last_ = 0;
  uint64_t ahead_ = 0;  // the furthest line already fetched for the current stream
};

}  // namespace pmlab::model
