// The log's bytes in its region (internal to the writers). Offsets only, little-endian x86_64.
//
//   line 0            Superblock (magic written last by format, so a half-formatted region is refused)
//   line 1            truncation watermark: entries with a smaller LSN were truncated
//   slots_offset      header kinds: per lane, its size fields, each on a cache line of its own
//   data_offset       lanes of lane_bytes each, 4 KiB aligned; entries back to back from offset 0
//
// An entry starts with an EntryHeader; entries are 8-byte aligned (so the header words are atomic
// stores), or 64-byte aligned when padded.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pmlab/primitives/log/log.hpp"
#include "pmlab/primitives/log/popcount.hpp"

namespace pmlab::primitives::log::on_media {

inline constexpr uint64_t kMagic = 0x474f4c42414c4d50ULL;  // "PMLABLOG"
inline constexpr uint32_t kVersion = 1;
inline constexpr uint64_t kLine = 64;
inline constexpr uint64_t kWatermarkOffset = 64;
inline constexpr uint64_t kSlotsOffset = 128;
inline constexpr uint64_t kMinLaneBytes = 4096;
inline constexpr uint32_t kMaxLanes = 1024;
inline constexpr uint32_t kMaxDancingSlots = 1024;
// Larger entries would overflow the zero log's 32-bit bit count.
inline constexpr uint64_t kMaxPayload = uint64_t{1} << 28;

struct Superblock {
  uint64_t magic;
  uint32_t version;
  uint8_t kind;
  uint8_t padded;
  uint16_t reserved;
  uint32_t lanes;
  uint32_t slots_per_lane;  // size fields per lane: 1 for header, N for header-dancing, 0 otherwise
  uint64_t lane_bytes;
  uint64_t data_offset;
  uint64_t log_id;        // random per format: classic footers of an earlier log never validate
  uint64_t region_bytes;  // bytes the geometry needs; the region may be larger
  uint64_t checksum;      // fnv1a64 of every field before it, magic excluded
};
static_assert(sizeof(Superblock) <= kLine);

struct EntryHeader {
  uint32_t size;   // payload bytes
  uint32_t check;  // zero: popcount of size, lsn and payload (never 0); other kinds: 0
  uint64_t lsn;
};
static_assert(sizeof(EntryHeader) == 16);

// An EntryHeader as the two words appends store (given by value, see persist::LineRecord): size and
// check, then the LSN.
inline constexpr HeaderWords header_words(uint32_t size, uint32_t check, uint64_t lsn) noexcept {
  return {size | uint64_t{check} << 32, lsn};
}
static_assert(std::bit_cast<EntryHeader>(header_words(7, 9, 11)).size == 7 &&
              std::bit_cast<EntryHeader>(header_words(7, 9, 11)).check == 9 &&
              std::bit_cast<EntryHeader>(header_words(7, 9, 11)).lsn == 11);

inline constexpr uint64_t align_up(uint64_t v, uint64_t a) noexcept { return (v + a - 1) & ~(a - 1); }
inline constexpr uint64_t entry_align(bool padded) noexcept { return padded ? kLine : 8; }

// Classic: where the footer of an entry with `payload` bytes sits, from the entry's start. Padded
// entries give the footer a line of its own, so the second barrier writes back only that line.
inline constexpr uint64_t classic_footer_offset(bool padded, uint64_t payload) noexcept {
  return align_up(sizeof(EntryHeader) + payload, entry_align(padded));
}

// Bytes one entry of `payload` bytes occupies in a lane (Log::entry_bytes).
inline constexpr uint64_t entry_footprint(Kind kind, bool padded, uint64_t payload) noexcept {
  if (kind == Kind::classic) return classic_footer_offset(padded, payload) + (padded ? kLine : 8);
  return align_up(sizeof(EntryHeader) + payload, entry_align(padded));
}

// Classic's footer value: the entry's identity mixed into one word. Stale bytes under a torn footer
// are older footers (another LSN, position or log) or payload; they match with probability 2^-64.
inline uint64_t classic_tag(uint64_t log_id, uint64_t lsn, uint64_t size, uint64_t offset) noexcept {
  uint64_t z = log_id ^ (lsn * 0x9e3779b97f4a7c15ULL) ^ (size << 32 | size >> 32) ^ (offset * 0xd6e8feb86659fd93ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (z ^ (z >> 31)) | 1;
}

// Zero: the count over the header words (size and lsn) and the payload. An lsn is never 0, so the count
// is never 0, and a header never written reads as "no entry".
inline uint32_t zero_check(uint32_t size, uint64_t lsn, const void* payload, size_t len) noexcept {
  // One call for all of it (the header words too: std::popcount is a libgcc call on baseline x86_64).
  return static_cast<uint32_t>(popcount_bytes(size, lsn, payload, len));
}

}  // namespace pmlab::primitives::log::on_media
