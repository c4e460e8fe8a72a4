// Classic logging ([PMemIO] §3.3.1): header and payload, barrier, then a footer, barrier.
//
// The footer is the entry's tag (log id, LSN, size, position mixed into one word), written with one
// atomic store after the entry is durable: recovery trusts an entry only when its footer matches, so a
// torn entry — or stale bytes from an earlier log or epoch — ends the lane. Without the first barrier the
// footer could reach the media before the payload ([PMemIO]: "due to the flushes being reordered").
#include <cstring>

#include "pmlab/primitives/log/on_media.hpp"
#include "pmlab/primitives/log/writers.hpp"

namespace pmlab::primitives::log {
namespace {
namespace om = on_media;

class ClassicLog final : public Log {
 public:
  using Log::Log;

  Result<uint64_t> append(uint32_t lane, const void* payload, size_t len) noexcept override {
    auto entry = reserve(lane, Kind::classic, len);
    if (!entry) return entry.status();
    const uint64_t offset = lanes_[lane].tail;
    store_entry(lane, entry->at, om::header_words(static_cast<uint32_t>(len), 0, entry->lsn), payload, len);
    persister_.fence();
    auto* footer = reinterpret_cast<uint64_t*>(entry->at + om::classic_footer_offset(options_.padded, len));
    store_entry_word(lane, footer, om::classic_tag(log_id(), entry->lsn, len, offset));
    persister_.fence();
    finish_append(lane, *entry);
    return entry->lsn;
  }

 protected:
  // The lane's entries in LSN order: a prefix below the watermark (a partial truncation's, skipped by
  // iteration), then the live ones. A lane with none live is free from its start.
  Status recover_lane(uint32_t lane, bool) override {
    LaneState& s = lanes_[lane];
    const std::byte* data = lane_data(lane);
    const uint64_t floor = first_lsn();
    uint64_t offset = 0, live = 0;
    while (lane_bytes_ - offset >= entry_bytes(Kind::classic, options_.padded, 0)) {
      om::EntryHeader h;
      std::memcpy(&h, data + offset, sizeof h);
      const uint64_t bytes = entry_bytes(Kind::classic, options_.padded, h.size);
      const bool plausible = h.lsn > s.last_lsn && h.size <= om::kMaxPayload && bytes <= lane_bytes_ - offset;
      if (!plausible) break;
      uint64_t footer;
      std::memcpy(&footer, data + offset + om::classic_footer_offset(options_.padded, h.size), sizeof footer);
      if (footer != om::classic_tag(log_id(), h.lsn, h.size, offset)) {
        if (h.lsn >= floor) ++recovery_.torn_tails;  // a header newer than every kept entry, without its footer
        break;
      }
      offset += bytes;
      s.last_lsn = h.lsn;
      if (h.lsn >= floor) ++live;
    }
    if (live == 0) {
      offset = 0;
      s.last_lsn = 0;
    }
    recovery_.entries += live;
    s.tail = offset;
    // Nothing to repair: the next append overwrites the bytes past the tail. A torn entry's footer never
    // reached the media, so no stale word there can equal the tag of the entry that replaces it.
    return Status::success();
  }

  // The watermark alone discards a classic lane's entries: their LSNs are below it.
  void reset_lane(uint32_t) override {}
  bool rewrites_lanes() const noexcept override { return false; }
};

}  // namespace

std::unique_ptr<Log> make_classic_log(std::span<std::byte> region, const persist::Persister& persister,
                                      const Options& options, const Geometry& geometry) {
  return std::make_unique<ClassicLog>(region, persister, options, geometry);
}

}  // namespace pmlab::primitives::log
