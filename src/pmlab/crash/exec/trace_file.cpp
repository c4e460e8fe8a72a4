#include "pmlab/crash/exec/trace_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "pmlab/common/files.hpp"

namespace pmlab::crash::exec {
namespace {

Status bad(size_t offset, const std::string& what) {
  return error(Errc::corrupted, "trace record at byte " + std::to_string(offset) + ": " + what);
}

// The fixed part of each kind's payload; a variable part may follow.
size_t fixed_bytes(trace::Kind kind) {
  switch (kind) {
    case trace::Kind::region: return sizeof(trace::RegionRecord);
    case trace::Kind::base_page: return sizeof(trace::BasePageRecord) + trace::kPageBytes;
    case trace::Kind::line: return sizeof(trace::LineRecord);
    case trace::Kind::writeback: return sizeof(trace::WritebackRecord);
    case trace::Kind::fence: return sizeof(trace::FenceRecord);
    case trace::Kind::stack: return sizeof(trace::StackRecord);
    case trace::Kind::module: return sizeof(trace::ModuleRecord);
    case trace::Kind::unmap: return sizeof(trace::UnmapRecord);
    case trace::Kind::note: return 0;
    case trace::Kind::exit: return sizeof(trace::ExitRecord);
  }
  return SIZE_MAX;
}

}  // namespace

Result<TraceFile> TraceFile::open(const std::string& path) {
  auto fd = open_regular_file(path, O_RDONLY, "trace file");
  if (!fd) return fd.status();
  struct stat st {};
  if (fstat(fd->get(), &st) != 0) return errno_status(errno, "cannot read the trace file " + path);
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd->get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_status(errno, "cannot read the trace file " + path);
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  auto t = parse(std::move(bytes));
  if (!t) return error(t.status().code(), path + ": " + t.status().message());
  return t;
}

Result<TraceFile> TraceFile::parse(std::string bytes) {
  TraceFile t;
  t.bytes_ = std::move(bytes);
  if (Status s = t.check(); !s) return s;
  return t;
}

const trace::FileHeader& TraceFile::header() const noexcept {
  return *reinterpret_cast<const trace::FileHeader*>(bytes_.data());
}

const std::vector<uint64_t>& TraceFile::stack(uint32_t id) const {
  static const std::vector<uint64_t> none;
  return id == trace::kNoStack || id > stacks_.size() ? none : stacks_[id - 1];
}

Status TraceFile::check() {
  if (bytes_.size() < sizeof(trace::FileHeader) || std::memcmp(bytes_.data(), trace::kMagic, sizeof trace::kMagic) != 0)
    return error(Errc::corrupted, "not a pmlab trace (no trace header)");
  trace::FileHeader h;
  std::memcpy(&h, bytes_.data(), sizeof h);
  if (h.version != trace::kVersion)
    return error(Errc::corrupted, "trace version " + std::to_string(h.version) + " (this pmlab reads " +
                                      std::to_string(trace::kVersion) + ")");
  if (h.header_bytes != sizeof h || h.used_bytes > bytes_.size() - sizeof h)
    return error(Errc::corrupted, "the trace header counts more bytes than the file holds (truncated)");
  const size_t end = sizeof h + h.used_bytes;
  std::vector<bool> thread_seen;
  for (size_t at = sizeof h; at < end;) {
    if (end - at < sizeof(trace::RecordHeader)) return bad(at, "truncated record header");
    trace::RecordHeader rh;
    std::memcpy(&rh, data() + at, sizeof rh);
    if (rh.bytes < sizeof rh || rh.bytes % 8 != 0 || rh.bytes > end - at)
      return bad(at, "bad record length " + std::to_string(rh.bytes));
    const auto kind = static_cast<trace::Kind>(rh.kind);
    const size_t fixed = fixed_bytes(kind);
    const size_t payload = rh.bytes - sizeof rh;
    if (fixed == SIZE_MAX) return bad(at, "unknown record kind " + std::to_string(rh.kind));
    if (payload < fixed) return bad(at, "record shorter than its kind");
    const std::byte* p = data() + at + sizeof rh;
    const size_t extra = payload - fixed;
    auto region_exists = [&](uint32_t id) { return regions_.count(id) != 0; };
    switch (kind) {
      case trace::Kind::region: {
        trace::RegionRecord r;
        std::memcpy(&r, p, sizeof r);
        if (r.path_bytes > extra) return bad(at, "region path runs past its record");
        if (regions_.count(r.id)) return bad(at, "region " + std::to_string(r.id) + " declared twice");
        if (r.length == 0 || r.length > (uint64_t{1} << 46) || r.file_offset > (uint64_t{1} << 46) ||
            r.file_size > (uint64_t{1} << 46) || r.file_offset % trace::kPageBytes != 0)
          return bad(at, "region of impossible size or offset");
        regions_[r.id] = {r.id,          std::string(reinterpret_cast<const char*>(p + fixed), r.path_bytes),
                          r.address,     r.length,
                          r.file_offset, r.file_size,
                          r.device,      r.inode};
        break;
      }
      case trace::Kind::base_page: {
        trace::BasePageRecord r;
        std::memcpy(&r, p, sizeof r);
        if (!region_exists(r.region) || r.offset % trace::kPageBytes != 0 || r.offset >= regions_[r.region].length)
          return bad(at, "base page outside its region");
        break;
      }
      case trace::Kind::line: {
        trace::LineRecord r;
        std::memcpy(&r, p, sizeof r);
        if (!region_exists(r.region) || r.offset % trace::kLineBytes != 0 ||
            r.offset >= regions_[r.region].length + trace::kPageBytes)
          return bad(at, "line outside its region");
        if (rh.flags > 1) return bad(at, "unknown line kind");
        break;
      }
      case trace::Kind::writeback: {
        trace::WritebackRecord r;
        std::memcpy(&r, p, sizeof r);
        if (r.region != trace::kNoRegion &&
            (!region_exists(r.region) || r.offset > regions_[r.region].length + trace::kPageBytes ||
             r.length > regions_[r.region].length + trace::kPageBytes - r.offset))
          return bad(at, "write-back outside its region");
        if (rh.flags > 1) return bad(at, "unknown write-back kind");
        break;
      }
      case trace::Kind::fence: {
        trace::FenceRecord r;
        std::memcpy(&r, p, sizeof r);
        if (r.stack > stacks_.size()) return bad(at, "fence names an unknown stack");
        ++fences_;
        break;
      }
      case trace::Kind::stack: {
        trace::StackRecord r;
        std::memcpy(&r, p, sizeof r);
        if (r.id != stacks_.size() + 1 || r.depth > trace::kMaxFrames || extra < r.depth * sizeof(uint64_t))
          return bad(at, "bad stack record");
        std::vector<uint64_t> frames(r.depth);
        std::memcpy(frames.data(), p + fixed, r.depth * sizeof(uint64_t));
        stacks_.push_back(std::move(frames));
        break;
      }
      case trace::Kind::module: {
        trace::ModuleRecord r;
        std::memcpy(&r, p, sizeof r);
        const uint64_t need = uint64_t{r.segments} * 16 + r.path_bytes;
        if (need > extra) return bad(at, "module record runs past its end");
        TraceModule m;
        m.bias = r.bias;
        for (uint32_t s = 0; s < r.segments; ++s) {
          uint64_t b, e;
          std::memcpy(&b, p + fixed + s * 16, 8);
          std::memcpy(&e, p + fixed + s * 16 + 8, 8);
          m.segments.emplace_back(b, e);
        }
        m.path.assign(reinterpret_cast<const char*>(p + fixed + r.segments * 16), r.path_bytes);
        modules_.push_back(std::move(m));
        break;
      }
      case trace::Kind::unmap: {
        trace::UnmapRecord r;
        std::memcpy(&r, p, sizeof r);
        if (!region_exists(r.region)) return bad(at, "unmap of an unknown region");
        break;
      }
      case trace::Kind::note: {
        std::string text(reinterpret_cast<const char*>(p), payload);
        while (!text.empty() && text.back() == '\0') text.pop_back();
        notes_.push_back(std::move(text));
        break;
      }
      case trace::Kind::exit: break;
    }
    if (rh.thread >= thread_seen.size()) thread_seen.resize(rh.thread + 1u, false);
    thread_seen[rh.thread] = true;
    records_.push_back({kind, rh.flags, rh.thread, rh.bytes, at});
    at += rh.bytes;
  }
  threads_ = static_cast<uint64_t>(std::count(thread_seen.begin(), thread_seen.end(), true));
  return {};
}

Status TraceFile::replay(const std::function<Status(const TraceRecord&)>& f) const {
  for (const Entry& e : records_) {
    const TraceRecord r{e.kind,
                        e.flags,
                        e.thread,
                        data() + e.offset + sizeof(trace::RecordHeader),
                        e.bytes - sizeof(trace::RecordHeader),
                        e.offset};
    if (Status s = f(r); !s) return s;
  }
  return {};
}

}  // namespace pmlab::crash::exec
