#include "pmlab/primitives/log/size_field_log.hpp"

#include "pmlab/primitives/log/on_media.hpp"
#include "pmlab/primitives/log/writers.hpp"

namespace pmlab::primitives::log {
namespace om = on_media;

Result<uint64_t> SizeFieldLog::append(uint32_t lane, const void* payload, size_t len) noexcept {
  auto entry = reserve(lane, options_.kind, len);
  if (!entry) return entry.status();
  store_entry(lane, entry->at, om::header_words(static_cast<uint32_t>(len), 0, entry->lsn), payload, len);
  persister_.fence();
  publish(lane, lanes_[lane].tail + entry->bytes);
  persister_.fence();
  finish_append(lane, *entry);
  return entry->lsn;
}

Status SizeFieldLog::recover_lane(uint32_t lane, bool repair) {
  LaneState& s = lanes_[lane];
  const uint64_t tail = published_tail(lane);
  const std::string where = "log lane " + std::to_string(lane) + ": ";
  if (tail > lane_bytes_ || tail % 8 != 0)
    return error(Errc::corrupted, where + "its size field says " + std::to_string(tail) + " bytes, the lane has " +
                                      std::to_string(lane_bytes_));
  const uint64_t floor = first_lsn();
  uint64_t entries = 0, stale = 0, last = 0;
  bool ordered = true;
  const bool parsed = walk(lane, tail, [&](uint64_t, const Entry& e) {
    if (e.lsn < floor) ++stale;
    ordered = ordered && e.lsn > last;
    last = e.lsn;
    ++entries;
  });
  if (!parsed) return error(Errc::corrupted, where + "its entries do not end where its size field says");
  if (stale > 0 && stale == entries) {
    // A truncation the crash interrupted: the watermark is durable, this lane's size was not reset yet.
    ++recovery_.stale_lanes;
    if (repair) {
      reset_lane(lane);
      recovery_wrote_ = true;
    }
    return Status::success();
  }
  // Increasing LSNs put the entries below the watermark first: a partial truncation's, skipped by iteration.
  if (!ordered) return error(Errc::corrupted, where + "its entries' LSNs do not increase");
  s.tail = tail;
  s.last_lsn = last;
  recovery_.entries += entries - stale;
  return Status::success();
}

void SizeFieldLog::reset_lane(uint32_t lane) {
  for (uint32_t slot = 0; slot < geometry_.slots_per_lane; ++slot) { store_size_field(size_slot(lane, slot), 0); }
}

}  // namespace pmlab::primitives::log
