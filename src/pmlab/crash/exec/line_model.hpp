// The durability of a traced program's persistent memory: what its durable image is, and what else a crash
// could leave of each cache line, as the trace's events (trace_format.hpp) unfold.
//
// The rules are the simulator's (durability_tracker.hpp), applied to events instead of observed calls:
//   - ADR: a line is durable once a thread wrote it back and that thread fenced; what becomes durable is the
//     line as it was at the write-back. A fence orders only its own thread's write-backs.
//   - eADR: at a fence, everything stored before it is durable.
//   - Until then the line may reach memory at any moment with any content it was seen to hold since it was
//     last durable: at a write-back of it, or at a fence (the moments the runtime looks).
// It differs in scale, not in rules: a program's pool may be gigabytes, so lines are kept only while they
// differ from their durable content, and every operation costs what it touches, never the image's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/durability_tracker.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::crash::exec {

// Where a line's last change and write-back were seen, for a failure's explanation.
struct LineOrigin {
  uint64_t stored_before_fence = 0;       // the fence that first saw its content now (0: not yet fenced)
  uint32_t stored_stack = 0;              // that fence's stack
  uint64_t stored_site = 0;               // or the write-back that recorded it
  uint64_t written_back_site = 0;         // its last write-back since it was durable (0: none)
  uint64_t written_back_after_fence = 0;  // fences before that write-back
};

class LineModel {
 public:
  explicit LineModel(persist::Domain domain) : domain_(domain) {}

  // The image grows as files appear; new bytes are zero and durable. Its pages cost memory once they hold
  // content: a pool of gigabytes that a run touches in a few pages takes a few pages.
  Status resize(size_t bytes);
  size_t size() const noexcept { return size_; }
  // Content the run started from (a file's pages as first mapped): durable, nothing pending.
  void set_base(size_t offset, const std::byte* bytes, size_t n);
  // Bytes [offset, offset+n) are zero and durable, nothing pending in them: a file cut short, whose bytes
  // past its new end the file system frees (they read zero where the file grows again). Costs the pages
  // with content and the pending lines in the range, never its size.
  void discard(size_t offset, size_t n);

  // Line `line` (index into the image) holds `now`; `non_temporal`: the changed aligned words were written
  // whole by non-temporal stores, else by plain stores. `fence` counts the fences so far; `site` is the
  // write-back that saw it, 0 when a fence's capture did.
  void store(size_t line, const LineBytes& now, bool non_temporal, uint64_t site);
  // `thread` wrote back lines [first, first+count). Returns the lines it wrote back that had nothing new to
  // write back (clean, or unchanged since this thread's last write-back of them).
  size_t writeback(size_t first, size_t count, unsigned thread, uint64_t site);
  // Before a fence: true when it orders something of `thread` (ADR: a write-back not yet fenced; eADR: a
  // store since the last fence).
  bool fence_orders(unsigned thread) const;
  // The fence takes effect: `thread`'s write-backs (eADR: every store) become durable.
  void fence(unsigned thread, uint32_t stack);

  // The lines a crash now may leave other than durable, in address order.
  std::vector<PendingLine> pending() const;
  std::span<const std::byte> durable() const noexcept { return {durable_ ? durable_->base() : nullptr, size_}; }
  // The image's pages the run gave content (a starting page that is not zero, a page a recorded line is in),
  // in the order it first did; every other page is zero in the durable image and in every crash image.
  const std::vector<size_t>& content_pages() const noexcept { return content_pages_; }
  const std::vector<bool>& has_content() const noexcept { return has_content_; }
  // image_hash(durable()), kept as lines commit.
  uint64_t durable_hash() const noexcept { return durable_hash_; }
  const LineOrigin* origin(size_t line) const;
  // Lines changed and never written back by any thread (what ADR loses at exit whatever happens next).
  std::vector<size_t> never_written_back() const;
  uint64_t fences() const noexcept { return fences_; }
  uint64_t dropped_values() const noexcept { return dropped_values_; }

 private:
  struct Line {
    std::vector<LineBytes> history;  // contents seen since durable, each different from the one before
    std::vector<std::pair<unsigned, int>> written_back;  // (thread, index in history) not yet fenced
    uint64_t order = 0;
    uint64_t plain_bytes = 0;
    LineOrigin origin;
  };
  int written_back_by(const Line& l, unsigned thread) const;
  void make_durable(size_t line, const std::byte* content);

  void note_content(size_t offset, size_t n);

  persist::Domain domain_;
  std::unique_ptr<media::AnonymousMapping> durable_;  // untouched pages read zero and cost nothing
  size_t size_ = 0;
  std::vector<bool> has_content_;      // per page
  std::vector<size_t> content_pages_;  // the pages has_content_ marks
  uint64_t durable_hash_ = 0;
  std::unordered_map<size_t, Line> lines_;  // the lines not durable as they are
  std::vector<size_t> stored_since_fence_;
  uint64_t events_ = 0, fences_ = 0, dropped_values_ = 0;
};

}  // namespace pmlab::crash::exec
