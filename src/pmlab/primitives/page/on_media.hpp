// The page store's bytes in its region (internal to the store and the flushers). Offsets only.
//
//   line 0          Superblock (magic written last by format)
//   line 1 + s      slot s's header: one commit word (page id, page version number), a line per slot so
//                   concurrent flushes never write back each other's header
//   ulogs_offset    per lane: two micro-log buffers used alternately, zero when unused
//   data_offset     slots of page_size bytes, 4 KiB aligned; slots = pages + lanes (one spare per lane
//                   for copy-on-write)
//
// A slot header is one 8-byte word written with one atomic store: no crash splits a page id from its
// version. A micro-log record validates itself by its bit count over a zeroed buffer (as zero logging).
#pragma once

#include <cstdint>
#include <cstring>

#include "pmlab/persist/persister.hpp"
#include "pmlab/primitives/page/dram_page.hpp"

namespace pmlab::primitives::page::on_media {

inline constexpr uint64_t kMagic = 0x5347504241424d50ULL;  // "PMLABPGS"
inline constexpr uint32_t kVersion = 1;
inline constexpr uint64_t kLine = 64;
inline constexpr uint64_t kHeadersOffset = 64;
inline constexpr uint64_t kMaxPages = (uint64_t{1} << 24) - 1;
inline constexpr uint64_t kMaxPvn = (uint64_t{1} << 38) - 1;

struct Superblock {
  uint64_t magic;
  uint32_t version;
  uint32_t page_size;
  uint32_t lanes;
  uint32_t reserved;
  uint64_t pages;
  uint64_t slots;
  uint64_t ulogs_offset;
  uint64_t data_offset;
  uint64_t checksum;  // fnv1a64 of the fields after magic and before checksum
};
static_assert(sizeof(Superblock) == kLine);

// Commit words: valid | pvn << 24 | pid, in slot headers and micro-log records.
inline constexpr uint64_t kValid = uint64_t{1} << 63;
inline constexpr uint64_t commit_word(uint64_t pid, uint64_t pvn) noexcept { return kValid | (pvn << 24) | pid; }
inline constexpr bool valid(uint64_t w) noexcept { return (w & kValid) != 0; }
inline constexpr uint64_t pid_of(uint64_t w) noexcept { return w & kMaxPages; }
inline constexpr uint64_t pvn_of(uint64_t w) noexcept { return (w >> 24) & kMaxPvn; }

// A micro-log record, at the start of its buffer: the page and version it makes, the dirty lines it holds,
// and the set bits of the commit word, the count, the indices and the lines. The buffer is zero before
// the record is written, so a record any part of which did not reach the media reads with fewer bits, and
// a record being zeroed again loses bits too: neither validates.
struct UlogHeader {
  uint64_t commit;
  uint64_t count;
  uint64_t check;
};

// One micro-log buffer: the header, the dirty lines' indices (uint16) right after it, then from a line
// boundary the lines themselves. A record's header and indices share its first lines, so small records
// are one line of metadata; all of it is written and zeroed in whole lines.
struct UlogGeometry {
  static constexpr uint64_t kIndexOffset = sizeof(UlogHeader);  // from the buffer's start
  uint64_t lines_offset;
  uint64_t buffer_bytes;
  uint64_t lane_bytes;  // two buffers, 256-byte aligned

  // Bytes of whole lines holding the header and `count` indices.
  static constexpr uint64_t metadata_bytes(uint64_t count) noexcept {
    return (kIndexOffset + count * sizeof(uint16_t) + kLine - 1) & ~(kLine - 1);
  }
  static UlogGeometry for_page(uint32_t page_size) noexcept {
    const uint64_t lines = page_size / kLine;
    UlogGeometry g{};
    g.lines_offset = metadata_bytes(lines);
    g.buffer_bytes = g.lines_offset + lines * kLine;
    g.lane_bytes = (2 * g.buffer_bytes + 255) & ~uint64_t{255};
    return g;
  }
};
inline constexpr uint64_t kMaxUlogMetadata = UlogGeometry::metadata_bytes(kMaxLinesPerPage);

// Page data is written in whole cache lines to lines that are usually not cached (a spare slot, a page
// written long ago): non-temporal stores write them without reading them first ([PMemIO] §3.2.3: streaming
// stores flush pages fastest; PMDK's pmem_memcpy does the same above 256 bytes). Anything else goes through
// the cache and is written back with the persister's flush instruction. Not fenced.
inline void write_back(const persist::Persister& p, void* dst, const void* src, size_t len) noexcept {
  const bool whole_lines = reinterpret_cast<uintptr_t>(dst) % kLine == 0 && len % kLine == 0;
  if (whole_lines || p.config().flush == persist::FlushInstruction::ntstore) {
    p.copy_nt(dst, src, len);
  } else {
    std::memcpy(dst, src, len);
    p.flush(dst, len);
  }
}

}  // namespace pmlab::primitives::page::on_media
