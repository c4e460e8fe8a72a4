#include "pmlab/pool/header.hpp"

#include <sys/random.h>
#include <time.h>

#include <cstdio>
#include <cstring>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/pool/layout.hpp"

namespace pmlab::pool {

uint64_t header_checksum(const Header& h) noexcept { return fnv1a64(&h, offsetof(Header, checksum)); }

Header make_header(std::string_view layout, uint32_t layout_version, uint64_t pool_size) {
  Header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.header_version = kHeaderVersion;
  h.header_size = static_cast<uint32_t>(kHeaderSize);
  std::memcpy(h.layout, layout.data(), std::min(layout.size(), kLayoutNameMax));
  h.layout_version = layout_version;
  h.pool_size = pool_size;
  h.data_offset = kHeaderSize;
  if (getrandom(h.uuid, sizeof h.uuid, 0) != static_cast<ssize_t>(sizeof h.uuid)) {
    // No entropy source: fall back to time and address bits; uniqueness, not secrecy, is what matters.
    uint64_t t = static_cast<uint64_t>(time(nullptr)) ^ reinterpret_cast<uintptr_t>(&h);
    std::memcpy(h.uuid, &t, 8);
  }
  h.uuid[6] = static_cast<uint8_t>((h.uuid[6] & 0x0f) | 0x40);  // RFC 4122 version 4
  h.uuid[8] = static_cast<uint8_t>((h.uuid[8] & 0x3f) | 0x80);
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  h.created_unix_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
  h.checksum = header_checksum(h);
  return h;
}

std::string uuid_string(const Header& h) {
  char buf[37];
  const uint8_t* u = h.uuid;
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

std::string layout_name(const Header& h) { return std::string(h.layout, strnlen(h.layout, sizeof h.layout)); }

Status validate(const Header& h, uint64_t file_size, const std::string& path) {
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    return error(Errc::not_a_pool, path + " is not a pmlab pool (no pool header)");
  if (header_checksum(h) != h.checksum)
    return error(Errc::corrupted, path + ": pool header is corrupted (checksum mismatch)");
  if (h.header_version != kHeaderVersion)
    return error(Errc::unsupported, path + ": pool header version " + std::to_string(h.header_version) +
                                        " is not supported (this pmlab reads version " +
                                        std::to_string(kHeaderVersion) + ")");
  if (h.header_size != kHeaderSize || h.data_offset < kHeaderSize || h.data_offset > h.pool_size ||
      h.layout[sizeof h.layout - 1] != '\0')
    return error(Errc::corrupted, path + ": pool header is corrupted (inconsistent fields)");
  if (h.pool_size < kMinPoolSize || h.pool_size % kHeaderSize != 0)
    return error(Errc::corrupted, path + ": pool header is corrupted (pool size " + std::to_string(h.pool_size) +
                                      " is below 1M or not a multiple of 4K)");
  if (file_size < h.pool_size)
    return error(Errc::corrupted, path + " is truncated: the header says " + std::to_string(h.pool_size) +
                                      " bytes, the file has " + std::to_string(file_size));
  // Pools never grow: a longer file was changed behind pmlab's back, and its data area would not be
  // the one the layout formatted.
  if (file_size > h.pool_size)
    return error(Errc::corrupted, path + " does not match its header: the header says " + std::to_string(h.pool_size) +
                                      " bytes, the file has " + std::to_string(file_size));
  // A layout this pmlab knows is read only in the versions it knows; an unknown layout's data is never
  // interpreted, so its version does not matter.
  if (const Layout* layout = LayoutRegistry::instance().find(layout_name(h));
      layout != nullptr && h.layout_version != layout->version)
    return error(Errc::wrong_layout,
                 path + ": layout '" + layout->name + "' version " + std::to_string(h.layout_version) +
                     " is not supported (this pmlab reads version " + std::to_string(layout->version) + ")");
  return Status::success();
}

}  // namespace pmlab::pool
