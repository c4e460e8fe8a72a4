// The writers behind Log (internal): one file each, created by Log's factory.
#pragma once

#include <cassert>
#include <memory>
#include <span>

#include "pmlab/primitives/log/log.hpp"
#include "pmlab/primitives/log/on_media.hpp"

namespace pmlab::primitives::log {

using WriterMaker = std::unique_ptr<Log> (*)(std::span<std::byte> region, const persist::Persister& persister,
                                             const Options& options, const Geometry& geometry);

std::unique_ptr<Log> make_classic_log(std::span<std::byte>, const persist::Persister&, const Options&, const Geometry&);
std::unique_ptr<Log> make_header_log(std::span<std::byte>, const persist::Persister&, const Options&, const Geometry&);
std::unique_ptr<Log> make_dancing_header_log(std::span<std::byte>, const persist::Persister&, const Options&,
                                             const Geometry&);
std::unique_ptr<Log> make_zero_log(std::span<std::byte>, const persist::Persister&, const Options&, const Geometry&);

// The append path every writer shares (declared in log.hpp; inline for the reason given there).

inline std::byte* Log::lane_data(uint32_t lane) const noexcept {
  return region_.data() + geometry_.data_offset + static_cast<uint64_t>(lane) * lane_bytes_;
}

inline Result<Log::Reservation> Log::reserve(uint32_t lane, Kind kind, size_t len) noexcept {
  if (lane >= options_.lanes) [[unlikely]]
    return no_such_lane(lane);
  const LaneState& s = lanes_[lane];
  const uint64_t bytes = on_media::entry_footprint(kind, options_.padded, len);
  if (len > on_media::kMaxPayload || s.tail + bytes > lane_bytes_) [[unlikely]]
    return no_room(lane, kind, len);
  return Reservation{lane_data(lane) + s.tail, bytes, next_lsn()};
}

inline void Log::finish_append(uint32_t lane, const Reservation& entry) noexcept {
  LaneState& s = lanes_[lane];
  s.tail += entry.bytes;
  s.last_lsn = entry.lsn;
  ++s.appends;
}

inline void Log::store_entry(uint32_t lane, std::byte* dst, const HeaderWords& head, const void* body,
                             size_t body_len) noexcept {
  if (options_.stores == Stores::cached) {
    store_entry_cached(dst, head, body, body_len);
    return;
  }
  stream_entry(lane, dst, head.data(), 2, body, body_len);
}

inline void Log::stream_entry(uint32_t lane, std::byte* dst, const uint64_t* words, uint32_t word_count,
                              const void* body, size_t body_len) noexcept {
  LaneState& s = lanes_[lane];
  std::byte* data = lane_data(lane);
  const auto begin = static_cast<uint64_t>(dst - data);
  const uint64_t first = begin & ~(on_media::kLine - 1);
  // Entries start on 8-byte boundaries, so the lane's bytes before one are whole words.
  assert(begin % 8 == 0 && word_count <= 2);
  // Appends follow the tail, so the line before the entry is the remembered one; reading the media is
  // only the fallback (and slow: a streamed line is not in the cache).
  const persist::LineRecord record{
      .prefix = first == s.tail_line_offset ? static_cast<const void*>(s.tail_line.data()) : data + first,
      .prefix_len = static_cast<uint32_t>(begin - first),
      .word_count = word_count,
      .words = {words[0], word_count > 1 ? words[1] : 0},
      .body = body,
      .body_len = body_len};
  // The next entry starts in the last line when it is partial: it is kept (zeros when there is none).
  persister_.store_record_nt(data + first, record, s.tail_line.data());
  s.tail_line_offset = (begin + 8 * uint64_t{word_count} + body_len) & ~(on_media::kLine - 1);
}

}  // namespace pmlab::primitives::log
