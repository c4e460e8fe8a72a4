#include "pmlab/crash/exec/trace_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <tuple>

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
    case trace::Kind::base_page: return sizeof(trace::BasePageRecord);
    case trace::Kind::line: return sizeof(trace::LineRecord);
    case trace::Kind::writeback: return sizeof(trace::WritebackRecord);
    case trace::Kind::fence: return sizeof(trace::FenceRecord);
    case trace::Kind::stack: return sizeof(trace::StackRecord);
    case trace::Kind::module: return sizeof(trace::ModuleRecord);
    case trace::Kind::unmap: return sizeof(trace::UnmapRecord);
    case trace::Kind::note: return 0;
    case trace::Kind::exit: return sizeof(trace::ExitRecord);
    case trace::Kind::operation: return sizeof(trace::OperationRecord);
    case trace::Kind::gone: return sizeof(trace::GoneRecord);
    case trace::Kind::resize: return sizeof(trace::ResizeRecord);
    case trace::Kind::synced: return sizeof(trace::SyncedRecord);
    case trace::Kind::directory: return sizeof(trace::DirectoryRecord);
  }
  return SIZE_MAX;
}

}  // namespace

Reach reach_of(trace::Kind kind, uint8_t flags, const std::byte* payload) {
  if (kind == trace::Kind::base_page) {
    trace::BasePageRecord r;
    std::memcpy(&r, payload, sizeof r);
    return {r.region, r.offset + trace::kPageBytes, false};
  }
  if (kind == trace::Kind::line) {
    trace::LineRecord r;
    std::memcpy(&r, payload, sizeof r);
    return {r.region, r.offset + trace::kLineBytes, false};
  }
  if (kind == trace::Kind::writeback && flags != static_cast<uint8_t>(trace::WritebackKind::synced)) {
    trace::WritebackRecord r;
    std::memcpy(&r, payload, sizeof r);
    return {r.region, r.offset + r.length - std::min<uint64_t>(r.unwritten_tail, r.length), true};
  }
  return {};
}

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
  int last_thread = -1;  // of the last persistence event
  std::vector<bool> persisting;
  for (size_t at = sizeof h; at < end;) {
    if (end - at < sizeof(trace::RecordHeader)) return bad(at, "truncated record header");
    trace::RecordHeader rh;
    std::memcpy(&rh, data() + at, sizeof rh);
    if (rh.bytes < sizeof rh || rh.bytes % 8 != 0 || rh.bytes > end - at)
      return bad(at, "bad record length " + std::to_string(rh.bytes));
    const auto kind = static_cast<trace::Kind>(rh.kind);
    const size_t fixed = fixed_bytes(kind);
    if (fixed == SIZE_MAX) return bad(at, "unknown record kind " + std::to_string(rh.kind));
    if (rh.bytes - sizeof rh < fixed) return bad(at, "record shorter than its kind");
    if (Status s = check_record(at, rh); !s) return s;
    if (rh.thread >= thread_seen.size()) thread_seen.resize(rh.thread + 1u, false);
    thread_seen[rh.thread] = true;
    if (kind == trace::Kind::writeback || kind == trace::Kind::fence || kind == trace::Kind::operation) {
      if (last_thread >= 0 && last_thread != rh.thread) ++thread_switches_;
      last_thread = rh.thread;
      if (rh.thread >= persisting.size()) persisting.resize(rh.thread + 1u, false);
      persisting[rh.thread] = true;
    }
    records_.push_back({kind, rh.flags, rh.thread, rh.bytes, at});
    at += rh.bytes;
  }
  threads_ = static_cast<uint64_t>(std::count(thread_seen.begin(), thread_seen.end(), true));
  persisting_threads_ = static_cast<uint64_t>(std::count(persisting.begin(), persisting.end(), true));
  return {};
}

// One record at `at`, whose header and length are checked: its fields, and what it declares (regions,
// stacks, modules, notes) kept.
Status TraceFile::check_record(size_t at, const trace::RecordHeader& rh) {
  const auto kind = static_cast<trace::Kind>(rh.kind);
  const std::byte* p = data() + at + sizeof rh;
  const size_t payload = rh.bytes - sizeof rh, extra = payload - fixed_bytes(kind);
  auto within = [&](uint32_t region, uint64_t offset) {
    return regions_.count(region) != 0 && offset < regions_[region].length + trace::kPageBytes;
  };
  switch (kind) {
    case trace::Kind::region: return read_region(at, rh.flags, p, extra);
    case trace::Kind::base_page: {
      trace::BasePageRecord r;
      std::memcpy(&r, p, sizeof r);
      if (!within(r.region, r.offset) || r.offset % trace::kPageBytes != 0 || r.offset >= regions_[r.region].length)
        return bad(at, "base page outside its region");
      if (extra != trace::base_page_bytes(r.lines)) return bad(at, "base page with other than its lines");
      break;
    }
    case trace::Kind::line: {
      trace::LineRecord r;
      std::memcpy(&r, p, sizeof r);
      if (!within(r.region, r.offset) || r.offset % trace::kLineBytes != 0) return bad(at, "line outside its region");
      if (rh.flags > 1) return bad(at, "unknown line kind");
      break;
    }
    case trace::Kind::writeback: {
      trace::WritebackRecord r;
      std::memcpy(&r, p, sizeof r);
      if (r.region != trace::kNoRegion &&
          (!within(r.region, 0) || r.offset > regions_[r.region].length + trace::kPageBytes ||
           r.length > regions_[r.region].length + trace::kPageBytes - r.offset))
        return bad(at, "write-back outside its region");
      if (rh.flags > 2) return bad(at, "unknown write-back kind");
      break;
    }
    case trace::Kind::fence: {
      trace::FenceRecord r;
      std::memcpy(&r, p, sizeof r);
      if (r.stack > stacks_.size()) return bad(at, "fence names an unknown stack");
      if (rh.flags > static_cast<uint8_t>(trace::kLastFenceCall)) return bad(at, "unknown fence call");
      ++fences_;
      ++fences_by_call_[rh.flags];
      return {};
    }
    case trace::Kind::stack: return read_stack(at, p, extra);
    case trace::Kind::module: return read_module(at, p, extra);
    case trace::Kind::unmap: {
      trace::UnmapRecord r;
      std::memcpy(&r, p, sizeof r);
      if (regions_.count(r.region) == 0) return bad(at, "unmap of an unknown region");
      return {};
    }
    case trace::Kind::note: {
      std::string text(reinterpret_cast<const char*>(p), payload);
      while (!text.empty() && text.back() == '\0') text.pop_back();
      notes_.push_back(std::move(text));
      return {};
    }
    case trace::Kind::exit: return {};
    case trace::Kind::operation: return rh.flags > 1 ? bad(at, "unknown operation mark") : Status{};
    case trace::Kind::gone: return read_gone(at, rh.flags, p, extra);
    case trace::Kind::resize: return read_resize(at, p);
    case trace::Kind::synced: return read_synced(at, rh.flags, p, extra);
    case trace::Kind::directory: return read_directory(at, static_cast<trace::DirectoryEvent>(rh.flags), p, extra);
  }
  // A checked base page, line or write-back: its region's file reaches as far as it shows.
  if (const Reach reach = reach_of(kind, rh.flags, p); reach.region != trace::kNoRegion) {
    TraceRegion& r = regions_[reach.region];
    if (r.written == reach.by_write) r.content_end = std::max(r.content_end, reach.end);
  }
  return {};
}

Status TraceFile::read_region(size_t at, uint8_t how, const std::byte* p, size_t extra) {
  trace::RegionRecord r;
  std::memcpy(&r, p, sizeof r);
  if (how > static_cast<uint8_t>(trace::RegionHow::written)) return bad(at, "unknown region kind");
  if (r.path_bytes > extra) return bad(at, "region path runs past its record");
  if (regions_.count(r.id)) return bad(at, "region " + std::to_string(r.id) + " declared twice");
  if (r.length == 0 || r.length > (uint64_t{1} << 46) || r.file_offset > (uint64_t{1} << 46) ||
      r.file_size > (uint64_t{1} << 46) || r.file_offset % trace::kPageBytes != 0)
    return bad(at, "region of impossible size or offset");
  const std::string path(reinterpret_cast<const char*>(p + fixed_bytes(trace::Kind::region)), r.path_bytes);
  regions_[r.id] = {r.id,         path,     r.address, r.length, r.file_offset,
                    r.file_size,  r.device, r.inode,   0,        how == static_cast<uint8_t>(trace::RegionHow::written),
                    path.empty(), {}};
  if (path.empty()) unnamed_[{r.device, r.inode}].push_back(r.id);
  return {};
}

std::string directory_of(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

bool path_below(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && (dir == "/" || path[dir.size()] == '/');
}

bool moved_along(std::string& path, const std::string& from, const std::string& to) {
  if (path != from && !path_below(path, from)) return false;
  path = to + path.substr(from.size());
  return true;
}

namespace {
// The root `path` lies below (the deepest, where roots nest), or none.
const std::string* root_of(const std::vector<std::string>& roots, const std::string& path) {
  const std::string* found = nullptr;
  for (const std::string& r : roots)
    if (path_below(path, r) && (found == nullptr || r.size() > found->size())) found = &r;
  return found;
}
}  // namespace

Status TraceFile::read_gone(size_t at, uint8_t call, const std::byte* p, size_t extra) {
  trace::GoneRecord r;
  std::memcpy(&r, p, sizeof r);
  if (call > static_cast<uint8_t>(trace::kLastGoneCall)) return bad(at, "unknown call that named a file");
  const bool names =
      call == static_cast<uint8_t>(trace::GoneCall::link) || call == static_cast<uint8_t>(trace::GoneCall::exchange);
  if (names && r.path_bytes == 0) return bad(at, "a link or an exchange with no new name");
  if (r.path_bytes > extra || r.from_bytes > extra - r.path_bytes) return bad(at, "a file's path runs past its record");
  // A file without a name is known by the first a link gives it, or a rename that brings it in from outside
  // the --pool files.
  const bool gives_a_name =
      call == static_cast<uint8_t>(trace::GoneCall::link) || call == static_cast<uint8_t>(trace::GoneCall::rename);
  const auto unnamed = unnamed_.find({r.device, r.inode});
  if (r.path_bytes == 0 || !gives_a_name || unnamed == unnamed_.end()) return {};
  for (uint32_t id : unnamed->second) {
    TraceRegion& region = regions_[id];
    std::tie(region.path, region.came_from) = gone_paths(p);
    if (call == static_cast<uint8_t>(trace::GoneCall::link)) region.came_from.clear();
  }
  unnamed_.erase(unnamed);
  return {};
}

Status TraceFile::read_synced(size_t at, uint8_t scope, const std::byte* p, size_t extra) {
  trace::SyncedRecord r;
  std::memcpy(&r, p, sizeof r);
  if (scope > static_cast<uint8_t>(trace::kLastSyncScope)) return bad(at, "unknown scope of a sync");
  return r.path_bytes > extra ? bad(at, "a synced directory's path runs past its record") : Status{};
}

std::pair<std::string, std::string> TraceFile::gone_paths(const std::byte* payload) {
  trace::GoneRecord r;
  std::memcpy(&r, payload, sizeof r);
  const char* paths = reinterpret_cast<const char*>(payload + sizeof r);
  return {std::string(paths, r.path_bytes), std::string(paths + r.path_bytes, r.from_bytes)};
}

std::string TraceFile::directory_path(const std::byte* payload, bool to) {
  trace::DirectoryRecord r;
  std::memcpy(&r, payload, sizeof r);
  std::string path(reinterpret_cast<const char*>(payload + sizeof r + (to ? r.path_bytes : 0)),
                   to ? r.to_bytes : r.path_bytes);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Status TraceFile::read_directory(size_t at, trace::DirectoryEvent event, const std::byte* p, size_t extra) {
  trace::DirectoryRecord r;
  std::memcpy(&r, p, sizeof r);
  if (event > trace::kLastDirectoryEvent) return bad(at, "unknown kind of directory");
  const bool moved = event == trace::DirectoryEvent::moved;
  if (r.path_bytes > extra || (moved && r.to_bytes > extra - r.path_bytes))
    return bad(at, "a directory's path runs past its record");
  std::string path = directory_path(p);
  const std::string to = moved ? directory_path(p, true) : "/";
  if (path.empty() || path[0] != '/' || to.empty() || to[0] != '/')
    return bad(at, "a directory's path is not absolute");
  if (moved) moves_.emplace_back(path, to);
  if (event == trace::DirectoryEvent::root) {
    if (std::find(roots_.begin(), roots_.end(), path) == roots_.end()) roots_.push_back(std::move(path));
    return {};
  }
  if (root_of(roots_, path) == nullptr) return bad(at, "a directory below no --pool directory");
  // Each record names the entry of the directory at its path then: a directory made where another was
  // moved or removed from is an entry of its own.
  auto live = live_directories_.find(path);
  if (live == live_directories_.end()) {
    directories_.emplace_back(path, event != trace::DirectoryEvent::made);
    live = live_directories_.emplace(path, directories_.size() - 1).first;
  }
  entry_of_record_[at] = live->second;
  if (event == trace::DirectoryEvent::removed) live_directories_.erase(live);
  if (!moved) return {};
  std::map<std::string, size_t> moved_to;
  for (auto it = live_directories_.begin(); it != live_directories_.end();)
    if (std::string now = it->first; moved_along(now, path, to)) {
      moved_to[now] = it->second;
      it = live_directories_.erase(it);
    } else {
      ++it;
    }
  for (auto& [moved_path, entry] : moved_to) live_directories_.insert_or_assign(moved_path, entry);
  return {};
}

size_t TraceFile::directory_entry(size_t record_offset) const {
  const auto it = entry_of_record_.find(record_offset);
  return it == entry_of_record_.end() ? SIZE_MAX : it->second;
}

bool TraceFile::below_a_pool_directory(const std::string& path) const { return root_of(roots_, path) != nullptr; }

bool TraceFile::outside_name(const std::string& name, const std::string& first) const {
  return !name.empty() && !below_a_pool_directory(name) && below_a_pool_directory(first);
}

std::string TraceFile::image_name(const std::string& path) const {
  if (const std::string* root = root_of(roots_, path)) return path.substr(root->size() + (*root == "/" ? 0 : 1));
  return std::filesystem::path(path).filename().string();
}

Status TraceFile::read_resize(size_t at, const std::byte* p) {
  trace::ResizeRecord r;
  std::memcpy(&r, p, sizeof r);
  if (r.length > (uint64_t{1} << 46)) return bad(at, "a file resized to an impossible length");
  uint64_t& longest = longest_resize_[{r.device, r.inode}];
  longest = std::max(longest, r.length);
  return {};
}

Status TraceFile::read_stack(size_t at, const std::byte* p, size_t extra) {
  trace::StackRecord r;
  std::memcpy(&r, p, sizeof r);
  if (r.id != stacks_.size() + 1 || r.depth > trace::kMaxFrames || extra < r.depth * sizeof(uint64_t))
    return bad(at, "bad stack record");
  std::vector<uint64_t> frames(r.depth);
  if (r.depth != 0) std::memcpy(frames.data(), p + fixed_bytes(trace::Kind::stack), r.depth * sizeof(uint64_t));
  stacks_.push_back(std::move(frames));
  return {};
}

Status TraceFile::read_module(size_t at, const std::byte* p, size_t extra) {
  trace::ModuleRecord r;
  std::memcpy(&r, p, sizeof r);
  const uint64_t need = uint64_t{r.segments} * 16 + r.path_bytes;
  if (need > extra) return bad(at, "module record runs past its end");
  const std::byte* variable = p + fixed_bytes(trace::Kind::module);
  TraceModule m;
  m.bias = r.bias;
  for (uint32_t s = 0; s < r.segments; ++s) {
    uint64_t b, e;
    std::memcpy(&b, variable + s * 16, 8);
    std::memcpy(&e, variable + s * 16 + 8, 8);
    m.segments.emplace_back(b, e);
  }
  m.path.assign(reinterpret_cast<const char*>(variable + r.segments * 16), r.path_bytes);
  modules_.push_back(std::move(m));
  return {};
}

std::vector<std::pair<std::string, uint64_t>> TraceFile::fences_by_call() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (size_t c = 0; c < fences_by_call_.size(); ++c)
    if (fences_by_call_[c] > 0)
      out.emplace_back(trace::to_string(static_cast<trace::FenceCall>(c)), fences_by_call_[c]);
  return out;
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
