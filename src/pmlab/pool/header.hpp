// The on-media pool header: the first 4 KiB of every pool file.
#pragma once

#include <cstdint>
#include <string>

#include "pmlab/common/status.hpp"

namespace pmlab::pool {

inline constexpr char kMagic[8] = {'P', 'M', 'L', 'A', 'B', 'P', 'O', 'L'};
inline constexpr uint32_t kHeaderVersion = 1;
inline constexpr uint64_t kHeaderSize = 4096;
inline constexpr uint64_t kMinPoolSize = 1ULL << 20;
inline constexpr size_t kLayoutNameMax = 31;

struct Header {
  char magic[8];
  uint32_t header_version;
  uint32_t header_size;
  char layout[32];  // NUL-terminated
  uint32_t layout_version;
  uint32_t flags;
  uint64_t pool_size;    // the file's size when created
  uint64_t data_offset;  // where the layout's data begins
  uint8_t uuid[16];
  uint64_t created_unix_ns;
  uint8_t reserved[kHeaderSize - 8 - 4 - 4 - 32 - 4 - 4 - 8 - 8 - 16 - 8 - 8];
  uint64_t checksum;  // FNV-1a 64 of every byte before it
};
static_assert(sizeof(Header) == kHeaderSize);

Header make_header(std::string_view layout, uint32_t layout_version, uint64_t pool_size);
uint64_t header_checksum(const Header& h) noexcept;
std::string uuid_string(const Header& h);
std::string layout_name(const Header& h);

// Validates a header read from `path` whose file has `file_size` bytes. The error says what is wrong:
// not a pool (magic), an unknown header version, a corrupted header (checksum), or a truncated file.
Status validate(const Header& h, uint64_t file_size, const std::string& path);

}  // namespace pmlab::pool
