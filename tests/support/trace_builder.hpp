// Traces written record by record as the runtime (src/pmlab-trace) writes them, for tests of what reads them.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include "pmlab/crash/exec/trace_format.hpp"

namespace pmlab::testing {

namespace trace = crash::exec::trace;

class TraceBuilder {
 public:
  TraceBuilder() {
    trace::FileHeader h{};
    std::memcpy(h.magic, trace::kMagic, sizeof h.magic);
    h.version = trace::kVersion;
    h.header_bytes = sizeof h;
    h.complete = 1;
    bytes_.assign(reinterpret_cast<const char*>(&h), sizeof h);
  }
  template <class T>
  TraceBuilder& add(trace::Kind kind, const T& payload, std::string extra = {}, uint16_t thread = 0,
                    uint8_t flags = 0) {
    const uint32_t n = trace::padded(sizeof(trace::RecordHeader) + sizeof payload + extra.size());
    trace::RecordHeader rh{static_cast<uint8_t>(kind), flags, thread, n};
    std::string rec(n, '\0');
    std::memcpy(rec.data(), &rh, sizeof rh);
    std::memcpy(rec.data() + sizeof rh, &payload, sizeof payload);
    std::memcpy(rec.data() + sizeof rh + sizeof payload, extra.data(), extra.size());
    bytes_ += rec;
    return *this;
  }
  TraceBuilder& region(uint32_t id, uint64_t length, uint64_t inode = 7) {
    return region(id, length, "/dev/shm/pool", length, 1, inode);
  }
  // A mapping of `length` bytes from the start of the file at `path`, of `file_size` bytes when mapped.
  TraceBuilder& region(uint32_t id, uint64_t length, const std::string& path, uint64_t file_size, uint64_t device,
                       uint64_t inode) {
    return add(
        trace::Kind::region,
        trace::RegionRecord{id, static_cast<uint32_t>(path.size()), 0x10000, length, 0, file_size, device, inode},
        path);
  }
  // The runtime's view of a file written with write(2): `length` bytes reserved, the file `file_size` bytes.
  TraceBuilder& written_view(uint32_t id, uint64_t length, uint64_t file_size) {
    const std::string path = "/dev/shm/pool";
    return add(trace::Kind::region,
               trace::RegionRecord{id, static_cast<uint32_t>(path.size()), 0x10000, length, 0, file_size, 1, 7}, path,
               0, static_cast<uint8_t>(trace::RegionHow::written));
  }
  TraceBuilder& base_page(uint32_t region, uint64_t offset, char fill) {
    return add(trace::Kind::base_page, trace::BasePageRecord{region, 0, offset, ~uint64_t{0}},
               std::string(trace::kPageBytes, fill));
  }
  // A base page of which only the lines in `lines` are not zero; line k holds 'A' + k.
  TraceBuilder& sparse_base_page(uint32_t region, uint64_t offset, uint64_t lines) {
    std::string kept;
    for (int k = 0; k < 64; ++k)
      if (lines >> k & 1) kept += std::string(trace::kLineBytes, static_cast<char>('A' + k));
    return add(trace::Kind::base_page, trace::BasePageRecord{region, 0, offset, lines}, kept);
  }
  TraceBuilder& line(uint32_t region, uint64_t offset, char fill, uint16_t thread = 0) {
    trace::LineRecord r{region, 0, offset, {}};
    std::memset(r.bytes, fill, sizeof r.bytes);
    return add(trace::Kind::line, r, {}, thread);
  }
  TraceBuilder& writeback(uint32_t region, uint64_t offset, uint64_t length, uint64_t site = 0x42, uint16_t thread = 0,
                          trace::WritebackKind kind = trace::WritebackKind::flush) {
    return add(trace::Kind::writeback, trace::WritebackRecord{region, 0, offset, length, site}, {}, thread,
               static_cast<uint8_t>(kind));
  }
  TraceBuilder& fence(uint64_t site = 0x99, uint16_t thread = 0) {
    return add(trace::Kind::fence, trace::FenceRecord{site, trace::kNoStack, 0}, {}, thread);
  }
  // A sync by `call` of what `scope` names (a synced record, then the sync's fence).
  TraceBuilder& sync(trace::FenceCall call, trace::SyncScope scope, uint64_t device, uint64_t inode,
                     const std::string& directory = {}) {
    add(trace::Kind::synced, trace::SyncedRecord{device, inode, static_cast<uint32_t>(directory.size()), 0}, directory,
        0, static_cast<uint8_t>(scope));
    return add(trace::Kind::fence, trace::FenceRecord{0x99, trace::kNoStack, 0}, {}, 0, static_cast<uint8_t>(call));
  }
  TraceBuilder& exit() { return add(trace::Kind::exit, trace::ExitRecord{0, 0}); }
  std::string bytes() const {
    std::string b = bytes_;
    const uint64_t used = b.size() - sizeof(trace::FileHeader);
    std::memcpy(b.data() + offsetof(trace::FileHeader, used_bytes), &used, sizeof used);
    return b;
  }

 private:
  std::string bytes_;
};

}  // namespace pmlab::testing
