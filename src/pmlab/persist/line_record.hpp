// A record that is stored as whole cache lines (Persister::store_record_nt). It has four parts, in this
// order:
//   1. the bytes its first line already holds before it,
//   2. up to two words given by value,
//   3. a byte range,
//   4. zeros to the end of the last line.
// A log entry is one: the lane's tail bytes, the entry's header, its payload.
//
// The words are given by value, not as bytes in memory. A header the caller has just stored would sit in
// the store queue behind the previous fence's drain, and a vector load across it cannot be forwarded:
// it would wait for the drain.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmlab::persist {

struct LineRecord {
  const void* prefix;   // the first line's bytes before the record, as the media holds them
  uint32_t prefix_len;  // < 64, a multiple of 8
  uint32_t word_count;  // 0, 1 or 2
  uint64_t words[2];
  const void* body;
  size_t body_len;

  uint64_t end() const noexcept { return prefix_len + 8 * uint64_t{word_count} + body_len; }
  // The whole lines the record is stored as.
  uint64_t line_bytes() const noexcept { return (end() + 63) & ~uint64_t{63}; }
};

// A record kernel's arguments, all in registers but the last (a LineRecord in memory would be seven
// more stores per record, which wait for the previous fence's drain like every other store).
// `shape` packs prefix_len (bits 0-7), word_count (8-15) and body_len (16-63).
inline constexpr uint64_t record_shape(const LineRecord& r) noexcept {
  return uint64_t{r.prefix_len} | uint64_t{r.word_count} << 8 | uint64_t{r.body_len} << 16;
}
// The record a kernel's arguments describe.
inline constexpr LineRecord unpack_record(const void* prefix, uint64_t word0, uint64_t word1, const void* body,
                                          uint64_t shape) noexcept {
  return {.prefix = prefix,
          .prefix_len = static_cast<uint32_t>(shape & 0xff),
          .word_count = static_cast<uint32_t>((shape >> 8) & 0xff),
          .words = {word0, word1},
          .body = body,
          .body_len = shape >> 16};
}

}  // namespace pmlab::persist
