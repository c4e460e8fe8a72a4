// Zero logging ([PMemIO] §3.3.1): the log is zeroed before use, and each entry carries the number of set
// bits in its size, LSN and payload. Header, count and payload are written back together under one
// barrier. Bits only ever go from 0 to 1 in a zeroed lane, so any part of the entry that did not reach
// the media lowers the count it would have: a torn entry never validates, at any tear granularity.
//
// The price is that space must be zero before it is appended to: format zeroes the lanes, truncate
// zeroes what was used, and recovery zeroes a torn tail (and whatever an interrupted truncation left).
#include <algorithm>
#include <cstring>

#include "pmlab/primitives/log/on_media.hpp"
#include "pmlab/primitives/log/writers.hpp"

namespace pmlab::primitives::log {
namespace {
namespace om = on_media;

class ZeroLog final : public Log {
 public:
  using Log::Log;

  Result<uint64_t> append(uint32_t lane, const void* payload, size_t len) noexcept override {
    auto entry = reserve(lane, Kind::zero, len);
    if (!entry) return entry.status();
    const auto size = static_cast<uint32_t>(len);
    const uint32_t check = om::zero_check(size, entry->lsn, payload, len);
    store_entry(lane, entry->at, om::header_words(size, check, entry->lsn), payload, len);
    persister_.fence();
    finish_append(lane, *entry);
    return entry->lsn;
  }

 protected:
  // The lane's valid entries in LSN order: a prefix below the watermark (a partial truncation's, skipped
  // by iteration), then the live ones. A lane with none live is what a truncation the crash cut short
  // left, or one that emptied it: it is zeroed whole.
  Status recover_lane(uint32_t lane, bool repair) override {
    LaneState& s = lanes_[lane];
    std::byte* data = lane_data(lane);
    const uint64_t floor = first_lsn();
    uint64_t offset = 0, live = 0;
    bool torn = false, stale = false;
    while (lane_bytes_ - offset >= sizeof(om::EntryHeader)) {
      om::EntryHeader h;
      std::memcpy(&h, data + offset, sizeof h);
      if (h.check == 0) {  // never written, or written without its count reaching the media
        torn = h.size != 0 || h.lsn != 0;
        break;
      }
      const uint64_t bytes = entry_bytes(Kind::zero, options_.padded, h.size);
      const bool valid = h.size <= om::kMaxPayload && bytes <= lane_bytes_ - offset && h.lsn > s.last_lsn &&
                         h.check == om::zero_check(h.size, h.lsn, data + offset + sizeof h, h.size);
      if (!valid) {
        (live == 0 && h.lsn < floor ? stale : torn) = true;
        break;
      }
      offset += bytes;
      s.last_lsn = h.lsn;
      if (h.lsn >= floor) ++live;
    }
    if (live == 0 && offset > 0) stale = true;
    if (stale) {
      ++recovery_.stale_lanes;
      offset = 0;
      s.last_lsn = 0;
    } else if (torn) {
      ++recovery_.torn_tails;
    }
    recovery_.entries += live;
    s.tail = offset;
    if (repair && zero_from(lane, offset)) recovery_wrote_ = true;
    return Status::success();
  }

  // Truncation: the watermark already discarded the entries; zero what the lane used.
  void reset_lane(uint32_t lane) override {
    const uint64_t used = lanes_[lane].tail;
    if (used > 0) write_zeros(lane_data(lane), used);
  }

  // A new pool's lanes are zero already: they are only read.
  bool prepare_format() override {
    bool wrote = false;
    for (uint32_t lane = 0; lane < options_.lanes; ++lane) wrote = zero_from(lane, 0) || wrote;
    return wrote;
  }

 private:
  // Zeroes (and writes back) every non-zero line of the lane from `offset` on: a torn entry, and bytes
  // an interrupted truncation did not reach. Lines already zero are only read.
  //
  // The torn entry's count is cleared first, in one store: zeroing takes bits away, and a count torn
  // byte by byte on its way to zero could match what is left of the payload. Whole, it is the old count
  // (more bits than are left) or zero (recovery stops at this entry), whatever else persisted.
  // Whether it wrote anything (a lane already zero past `offset` is left as it is).
  bool zero_from(uint32_t lane, uint64_t offset) {
    std::byte* data = lane_data(lane);
    bool wrote = false;
    if (offset + sizeof(om::EntryHeader) <= lane_bytes_) {
      auto* size_and_check = reinterpret_cast<uint64_t*>(data + offset);
      if (*size_and_check != 0) {
        persister_.store8(size_and_check, 0);
        persister_.flush(size_and_check, 8);
        wrote = true;
      }
    }
    return persister_.zero_changed(data + offset, lane_bytes_ - offset) > 0 || wrote;
  }

  // Zeroes and writes back (no fence) the way appends will store: a streaming append costs more when its
  // line is still in the cache (the non-temporal store must evict it first), a cached one less.
  void write_zeros(std::byte* at, uint64_t n) const noexcept {
    if (options_.stores == Stores::cached) {
      std::memset(at, 0, n);
      persister_.flush(at, n);
      return;
    }
    persister_.zero_nt(at, n);
  }
};

}  // namespace

std::unique_ptr<Log> make_zero_log(std::span<std::byte> region, const persist::Persister& persister,
                                   const Options& options, const Geometry& geometry) {
  return std::make_unique<ZeroLog>(region, persister, options, geometry);
}

}  // namespace pmlab::primitives::log
