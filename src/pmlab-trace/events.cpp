// The persistence events of tracer.hpp: write-backs, copies, fences, syncs and operation marks, each recorded
// under the tracer's lock as one step of the trace, with what stores it finds first.
#include "pmlab-trace/schedule.hpp"
#include "pmlab-trace/stacks.hpp"
#include "pmlab-trace/state.hpp"
#include "pmlab-trace/tracer.hpp"
#include "pmlab-trace/write_tracking.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <mutex>
#include <optional>
#include <utility>

namespace pmlab_trace {

using namespace detail;

bool persistent(const void* p, size_t n) noexcept {
  Tracer& t = tracer();
  if (!t.active) return false;
  std::lock_guard lock(t.mutex);
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (const Region& r : t.regions)
    if (a < r.end && a + n > r.begin) return true;
  return false;
}

namespace {
// A copy's whole line at `line`, `at` bytes into the copy, is recorded when it differs from the shadow.
void copied_line(Tracer& t, const Region& r, uintptr_t line, size_t at, const CopyContent& content,
                 trace::LineHow how) {
  std::byte bytes[kLineBytes];
  if (content.source != nullptr) std::memcpy(bytes, static_cast<const std::byte*>(content.source) + at, kLineBytes);
  else std::memset(bytes, content.fill, kLineBytes);
  if (std::memcmp(bytes, r.shadow + (line - r.begin), kLineBytes) != 0) record_line(t, r, line, how, bytes);
}

// `content`: what a copy stored there (null: the stores are unknown, and the lines are compared).
void writeback_locked(Tracer& t, const void* p, size_t n, trace::WritebackKind kind, uintptr_t site,
                      const CopyContent* content = nullptr) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  Region* r = n == 0 ? nullptr : region_of(t, a);
  if (r == nullptr) {
    trace::WritebackRecord rec{trace::kNoRegion, 0, a, n, site};
    t.file.append(trace::Kind::writeback, static_cast<uint8_t>(kind), &rec, sizeof rec);
    return;
  }
  const uintptr_t from = a & ~uintptr_t{kLineBytes - 1};
  const uintptr_t to = std::min<uintptr_t>(r->end, (a + n + kLineBytes - 1) & ~uintptr_t{kLineBytes - 1});
  if (kind == trace::WritebackKind::synced) {
    // The kernel writes back what stores left in the dirty pages: the caller's capture of every region found
    // those, in the pages stores made writable, where comparing the range would cost a file's size.
  } else if (kind == trace::WritebackKind::non_temporal || content != nullptr) {
    // Non-temporal stores keep aligned words whole only on whole lines; partial edge lines went through
    // the cache as plain stores.
    for (uintptr_t line = from; line < to; line += kLineBytes) {
      const bool whole = line >= a && line + kLineBytes <= a + n;
      const auto how =
          whole && kind == trace::WritebackKind::non_temporal ? trace::LineHow::non_temporal : trace::LineHow::plain;
      if (whole && content != nullptr) copied_line(t, *r, line, line - a, *content, how);
      else compare_lines(t, *r, line, line + kLineBytes, how);
    }
  } else {
    compare_lines(t, *r, from, to, trace::LineHow::plain);
  }
  // A write(2)'s last line may end the file inside it: how far short of the line it ends is recorded.
  const auto tail = static_cast<uint32_t>(r->written_by_calls && to > a + n ? to - (a + n) : 0);
  trace::WritebackRecord rec{r->id, tail, from - r->begin, to - from, site};
  t.file.append(trace::Kind::writeback, static_cast<uint8_t>(kind), &rec, sizeof rec);
  if (a + n > r->end) {
    CopyContent rest;
    if (content != nullptr) {
      rest = *content;
      if (rest.source != nullptr) rest.source = static_cast<const std::byte*>(rest.source) + (r->end - a);
    }
    writeback_locked(t, reinterpret_cast<const void*>(r->end), a + n - r->end, kind, site,
                     content != nullptr ? &rest : nullptr);
  }
}

// Every region's stores since the last look, recorded now.
void capture_all(Tracer& t) {
  view_untouched_pools(t);
  for (Region& r : t.regions) capture(t, r);
}

// What the sync whose fence follows synced.
void synced_record(Tracer& t, trace::SyncScope scope, uint64_t device, uint64_t inode, const std::string& path = {}) {
  const trace::SyncedRecord rec{device, inode, static_cast<uint32_t>(path.size()), 0};
  t.file.append(trace::Kind::synced, static_cast<uint8_t>(scope), &rec, sizeof rec, path.data(), path.size());
}

void fence_record(Tracer& t, uintptr_t site, trace::FenceCall call) {
  trace::FenceRecord rec{site, stack_id(t, site), 0};
  t.file.append(trace::Kind::fence, static_cast<uint8_t>(call), &rec, sizeof rec);
}

void fence_locked(Tracer& t, uintptr_t site) {
  capture_all(t);
  fence_record(t, site, trace::FenceCall::fence);
}
}  // namespace

void writeback(const void* p, size_t n, trace::WritebackKind kind, uintptr_t site) noexcept {
  Tracer& t = tracer();
  if (t.active) before_event();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active) writeback_locked(t, p, n, kind, site);
  }
  --tls_depth;
}

void copying(const void* dest, size_t n) noexcept {
  Tracer& t = tracer();
  if (!t.active || n == 0) return;
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    const auto a = reinterpret_cast<uintptr_t>(dest);
    if (t.active) will_store(t, a, a + n);
  }
  --tls_depth;
}

void copied(const void* dest, size_t n, const CopyContent& content, trace::WritebackKind kind,
            uintptr_t site) noexcept {
  Tracer& t = tracer();
  if (t.active) before_event();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active) writeback_locked(t, dest, n, kind, site, &content);
  }
  // The copy's non-temporal stores (and flushes, on processors whose write-back evicts) left its lines
  // out of the cache, and the next capture compares its pages: asking for them back now, while the program
  // goes on to its fence, takes that read off the fence's path. Past what a core's cache keeps, no use.
  constexpr size_t kMostRefetched = 16 * kPageBytes;
  const auto first = reinterpret_cast<uintptr_t>(dest) & ~uintptr_t{kLineBytes - 1};
  const uintptr_t last = reinterpret_cast<uintptr_t>(dest) + std::min(n, kMostRefetched);
  for (uintptr_t line = first; line < last; line += kLineBytes) __builtin_prefetch(reinterpret_cast<const void*>(line));
  --tls_depth;
}

void stored_non_temporal(const void* p, size_t n, uintptr_t site) noexcept {
  writeback(p, n, trace::WritebackKind::non_temporal, site);
}

void fence(uintptr_t site) noexcept {
  Tracer& t = tracer();
  if (t.active) before_event();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active) fence_locked(t, site);
  }
  --tls_depth;
}

void persist(const void* p, size_t n, uintptr_t site, trace::FenceCall call) noexcept {
  Tracer& t = tracer();
  if (t.active) before_event();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active) {
      if (call == trace::FenceCall::fence) {
        writeback_locked(t, p, n, trace::WritebackKind::flush, site);
        fence_locked(t, site);
      } else {
        capture_all(t);  // once, for the kernel's write-back and its fence
        writeback_locked(t, p, n, trace::WritebackKind::synced, site);
        if (const Region* r = region_of(t, reinterpret_cast<uintptr_t>(p)))
          synced_record(t, trace::SyncScope::file, r->record.device, r->record.inode);
        fence_record(t, site, call);
      }
    }
  }
  --tls_depth;
}

void msynced_without_sync(const void* p, size_t n) noexcept {
  Tracer& t = tracer();
  if (!t.active || !persistent(p, n)) return;
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active && !t.async_msync) {
      t.async_msync = true;
      note(t,
           "the program called msync without MS_SYNC on persistent memory, which makes nothing durable (Linux does "
           "nothing for MS_ASYNC): no write-back or fence was recorded for it");
    }
  }
  --tls_depth;
}

namespace {
// The addresses of the part of region `r` that `which` syncs, empty when none.
std::pair<uintptr_t, uintptr_t> synced_part(const Region& r, const SyncedFiles& which) {
  using Scope = SyncedFiles::Scope;
  const trace::RegionRecord& f = r.record;
  if ((which.scope == Scope::file && (f.device != which.device || f.inode != which.inode)) ||
      (which.scope == Scope::file_system && f.device != which.device))
    return {0, 0};
  const uint64_t from = std::max(which.from, f.file_offset), to = std::min(which.to, f.file_offset + f.length);
  if (from >= to) return {0, 0};
  return {r.begin + (from - f.file_offset), r.begin + (to - f.file_offset)};
}

bool syncs_any(Tracer& t, const SyncedFiles& which) {
  std::lock_guard lock(t.mutex);
  return std::any_of(t.regions.begin(), t.regions.end(), [&](const Region& r) {
    const auto [from, to] = synced_part(r, which);
    return from != to;
  });
}
}  // namespace

namespace {
// A sync of a file that is none of the persistent files: where changes of the file system wait for a sync
// (--metadata at-sync, a journal's commit), this one commits those the run made, so it is a crash point,
// once the run traces any file.
void other_file_synced(Tracer& t, const SyncedFiles& which, uintptr_t site) {
  before_event();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active && (!t.regions.empty() || !t.pool_dirs.empty())) {
      synced_record(t, which.scope, which.device, which.inode);
      fence_record(t, site, trace::FenceCall::other_file_sync);
    }
  }
  --tls_depth;
}
}  // namespace

void synced(const SyncedFiles& which, uintptr_t site, std::optional<trace::FenceCall> fence) noexcept {
  Tracer& t = tracer();
  if (t.active && which.scope == SyncedFiles::Scope::directory) {
    // What it makes durable (files made, removed, renamed) the trace's own records say: a crash point, once
    // the run traces any file.
    const std::string directory = path_of(which.fd);
    before_event();
    ++tls_depth;
    {
      std::lock_guard lock(t.mutex);
      if (t.active && (!t.regions.empty() || !t.pool_dirs.empty())) {
        synced_record(t, which.scope, which.device, which.inode, directory);
        fence_record(t, site, trace::FenceCall::directory_sync);
      }
    }
    --tls_depth;
    return;
  }
  if (!t.active) return;
  if (!syncs_any(t, which)) {
    if (fence && which.scope == SyncedFiles::Scope::file) other_file_synced(t, which, site);
    return;
  }
  before_event();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active) {
      capture_all(t);  // once, for the kernel's write-backs and its fence
      for (const Region& r : t.regions) {
        const auto [from, to] = synced_part(r, which);
        if (from != to)
          writeback_locked(t, reinterpret_cast<const void*>(from), to - from, trace::WritebackKind::synced, site);
      }
      if (fence) {
        synced_record(t, which.scope, which.device, which.inode);
        fence_record(t, site, *fence);
      }
    }
  }
  --tls_depth;
}

namespace {
// The part of the program's mapping `r` of a file that [from, to) of the file covers, widened to whole lines
// and kept inside `r`, as file offsets; empty when none.
std::pair<uint64_t, uint64_t> mapped_part(const Region& r, const FileWrite& w, uint64_t from, uint64_t to) {
  const trace::RegionRecord& f = r.record;
  if (r.written_by_calls || f.device != w.device || f.inode != w.inode) return {0, 0};
  const uint64_t begin = std::max(from & ~uint64_t{kLineBytes - 1}, f.file_offset);
  const uint64_t end = std::min((to + kLineBytes - 1) & ~uint64_t{kLineBytes - 1}, f.file_offset + (r.end - r.begin));
  return begin < end ? std::pair{begin, end} : std::pair<uint64_t, uint64_t>{0, 0};
}
}  // namespace

void file_wrote(const FileWrite& w, size_t n, uintptr_t site) noexcept {
  Tracer& t = tracer();
  if (!t.active || n == 0) return;
  before_event();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    const Region* view = view_of(t, w.device, w.inode);
    if (t.active && view != nullptr && w.offset + n <= view->record.length) {
      writeback_locked(t, reinterpret_cast<const void*>(view->begin + w.offset), n, trace::WritebackKind::non_temporal,
                       site);
      // A mapping of the program's shows the write too (file_will_write captured what it stored before): its
      // shadow takes the lines the view recorded as the kernel's, so that they are not recorded again as stores.
      for (Region& r : t.regions)
        if (const auto [from, to] = mapped_part(r, w, w.offset, w.offset + n); from != to)
          std::memcpy(r.shadow + (from - r.record.file_offset), view->shadow + from, to - from);
      if (w.synced) {
        capture_all(t);
        synced_record(t, trace::SyncScope::file, w.device, w.inode);
        fence_record(t, site, trace::FenceCall::dsync_write);
      }
    }
  }
  --tls_depth;
}

namespace {
// A persistent file's mappings before it is cut to `length` bytes: what the program stored through them is
// recorded, and their pages past the new end are no longer traced (reading them would be a SIGBUS).
void cutting(Tracer& t, const struct stat& st, uint64_t length) {
  const uint64_t end = (length + kPageBytes - 1) & ~uint64_t{kPageBytes - 1};
  std::vector<std::pair<uintptr_t, uintptr_t>> past_end;
  for (Region& r : t.regions) {
    const trace::RegionRecord& f = r.record;
    if (r.written_by_calls || f.device != st.st_dev || f.inode != st.st_ino) continue;
    if (f.file_offset + (r.end - r.begin) > end)
      past_end.emplace_back(r.begin + (end > f.file_offset ? end - f.file_offset : 0), r.end);
    else capture(t, r);
  }
  for (const auto& [from, to] : past_end) untrace(t, from, to);  // which captures what it ends first
  if (!past_end.empty() && !t.cut_while_mapped) {
    t.cut_while_mapped = true;
    note(t, "the program cut a persistent file to " + std::to_string(length) +
                " bytes while it mapped it further: what it stores there after the file grows again is not traced");
  }
}

// The regular file `fd`, or at `path` of `dirfd` where fd < 0 (stat'ed with `at_flags`): whether it is a
// persistent file, and `file` says which. With `cut_to`, the file is about to be cut to that length
// (cutting(), above). The runtime's own calls (its trace file's growth is an ftruncate, made under the
// lock) are no events.
bool traced_file(int fd, int dirfd, const char* path, int at_flags, std::optional<uint64_t> cut_to, TracedFile* file) {
  Tracer& t = tracer();
  if (!t.active || (fd < 0 && path == nullptr) || tls_depth > 0) return false;
  const int saved_errno = errno;
  struct stat st {};
  const bool exists = (fd >= 0 ? fstat(fd, &st) : fstatat(dirfd, path, &st, at_flags)) == 0 && S_ISREG(st.st_mode);
  errno = saved_errno;
  if (!exists) return false;
  ++tls_depth;
  bool traced = false;
  {
    std::lock_guard lock(t.mutex);
    view_untouched_pools(t);
    traced = t.active && traces_file(t, st.st_dev, st.st_ino);
    if (traced && cut_to) cutting(t, st, *cut_to);
  }
  --tls_depth;
  errno = saved_errno;
  *file = {st.st_dev, st.st_ino, {}};
  return traced;
}
}  // namespace

bool file_will_resize(int fd, int dirfd, const char* path, uint64_t length, TracedFile* file) noexcept {
  return traced_file(fd, dirfd, path, 0, length, file);
}

namespace {
// The absolute path of `path` at `dirfd`, resolved (the file is there): "" when it cannot be told.
std::string absolute_path(int dirfd, const char* path) {
  std::string full = path;
  if (path[0] != '/') {
    char dir[4096];
    ssize_t n = -1;
    if (dirfd == AT_FDCWD) n = getcwd(dir, sizeof dir) != nullptr ? static_cast<ssize_t>(std::strlen(dir)) : -1;
    else {
      char link[64];
      std::snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      n = readlink(link, dir, sizeof dir - 1);
    }
    if (n <= 0) return "";
    full = std::string(dir, static_cast<size_t>(n)) + "/" + path;
  }
  char* real = realpath(full.c_str(), nullptr);
  if (real == nullptr) return full;
  std::string resolved = real;
  std::free(real);
  return resolved;
}
}  // namespace

bool traced_file_at(int dirfd, const char* path, TracedFile* file, int at_flags) noexcept {
  if (!traced_file(-1, dirfd, path, at_flags, std::nullopt, file)) return false;
  const int saved_errno = errno;
  ++tls_depth;
  file->path = absolute_path(dirfd, path);
  --tls_depth;
  errno = saved_errno;
  return true;
}

void arriving(int to_dir, const char* to) noexcept {
  Tracer& t = tracer();
  if (!t.active || tls_depth > 0 || to == nullptr || t.pools_viewed) return;
  const int saved_errno = errno;
  ++tls_depth;
  const std::string full = absolute_path(to_dir, to);
  {
    std::lock_guard lock(t.mutex);
    if (t.active && is_pool_path(t, full)) view_untouched_pools(t, true);
  }
  --tls_depth;
  errno = saved_errno;
}

bool file_arrived(int from_dir, const char* from, int to_dir, const char* to, TracedFile* file) noexcept {
  Tracer& t = tracer();
  if (!t.active || tls_depth > 0 || to == nullptr || (t.pool_dirs.empty() && t.pool_paths.empty())) return false;
  const int saved_errno = errno;
  ++tls_depth;
  bool arrived = false;
  const int fd = ::openat(to_dir, to, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st {};
  if (fd >= 0 && fstat(fd, &st) == 0) {
    std::lock_guard lock(t.mutex);
    arrived = t.active && view_arrived(t, fd, st);
    if (arrived && !t.arrived_noted) {
      t.arrived_noted = true;
      note(t, absolute_path(to_dir, to) +
                  " came into the --pool files from outside them: what was written to it before is taken as "
                  "durable when it came (writes outside the --pool files are not traced)");
    }
  }
  if (fd >= 0) ::close(fd);
  if (arrived) *file = {st.st_dev, st.st_ino, from != nullptr ? absolute_path(from_dir, from) : std::string()};
  --tls_depth;
  errno = saved_errno;
  return arrived;
}

std::string directory_path(int dirfd, const char* path) noexcept {
  Tracer& t = tracer();
  if (!t.active || tls_depth > 0 || path == nullptr || t.pool_dirs.empty()) return "";
  const int saved_errno = errno;
  ++tls_depth;
  std::string full = absolute_path(dirfd, path);
  --tls_depth;
  errno = saved_errno;
  return below_pool_dir(t, full) ? full : "";
}

void directory_changed(const std::string& full, bool made) noexcept {
  Tracer& t = tracer();
  if (full.empty() || !t.active) return;
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active) append_directory(t, made ? trace::DirectoryEvent::made : trace::DirectoryEvent::removed, full);
  }
  --tls_depth;
}

std::string directory_renaming(int dirfd, const char* path) noexcept {
  Tracer& t = tracer();
  if (!t.active || tls_depth > 0 || path == nullptr || t.pool_dirs.empty()) return "";
  const int saved_errno = errno;
  struct stat st {};
  std::string full;
  if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) full = directory_path(dirfd, path);
  errno = saved_errno;
  return full;
}

void directory_renamed(const std::string& from, int to_dir, const char* to) noexcept {
  Tracer& t = tracer();
  if (from.empty() || !t.active || tls_depth > 0) return;
  const int saved_errno = errno;
  ++tls_depth;
  const std::string moved_to = absolute_path(to_dir, to);
  {
    std::lock_guard lock(t.mutex);
    if (t.active) append_directory(t, trace::DirectoryEvent::moved, from, moved_to);
  }
  --tls_depth;
  errno = saved_errno;
}

void file_gone(const TracedFile& file, trace::GoneCall call, uintptr_t site, int to_dir, const char* to) noexcept {
  Tracer& t = tracer();
  if (!t.active || tls_depth > 0) return;
  ++tls_depth;
  const std::string moved_to = to != nullptr ? absolute_path(to_dir, to) : "";
  // A link keeps the name it was made from; the other calls take it away.
  const std::string paths = moved_to + (call == trace::GoneCall::link ? "" : file.path);
  {
    std::lock_guard lock(t.mutex);
    const trace::GoneRecord rec{site, file.device, file.inode, static_cast<uint32_t>(moved_to.size()),
                                static_cast<uint32_t>(paths.size() - moved_to.size())};
    if (t.active)
      t.file.append(trace::Kind::gone, static_cast<uint8_t>(call), &rec, sizeof rec, paths.data(), paths.size());
  }
  --tls_depth;
}

void file_resized(const TracedFile& file, uint64_t length, uintptr_t site) noexcept {
  Tracer& t = tracer();
  if (!t.active || tls_depth > 0) return;
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    const trace::ResizeRecord rec{site, file.device, file.inode, length};
    if (t.active) t.file.append(trace::Kind::resize, 0, &rec, sizeof rec);
    // Each region's shadow reads zero past the end, as the file does (a mapping's pages past it are no
    // longer traced: cutting()).
    for (Region& r : t.regions) {
      const trace::RegionRecord& f = r.record;
      const uint64_t bytes = r.end - r.begin;
      if (f.device != file.device || f.inode != file.inode || length >= f.file_offset + bytes) continue;
      const uint64_t from = length > f.file_offset ? length - f.file_offset : 0;
      const uint64_t whole = std::min(bytes, (from + kPageBytes - 1) & ~uint64_t{kPageBytes - 1});
      std::memset(r.shadow + from, 0, whole - from);
      if (whole < bytes) madvise(r.shadow + whole, bytes - whole, MADV_DONTNEED);
    }
  }
  --tls_depth;
}

namespace {
// How many lines of the file `view` shows differ from what the runtime recorded of it; none where the
// program ever mapped the file (its stores through the mapping are recorded there, not in the view).
size_t unseen_lines(const Tracer& t, const Region& view) {
  const std::pair<uint64_t, uint64_t> file{view.record.device, view.record.inode};
  if (std::find(t.mapped_files.begin(), t.mapped_files.end(), file) != t.mapped_files.end()) return 0;
  const off_t size = file_size_now(view);
  if (size <= 0) return 0;
  const size_t bytes = std::min<size_t>(view.end - view.begin, static_cast<size_t>(size));
  size_t unseen = 0;
  for (size_t page = 0; page < bytes; page += kPageBytes) {
    const size_t lines = (std::min<size_t>(bytes - page, kPageBytes) + kLineBytes - 1) / kLineBytes;
    const auto* seen = reinterpret_cast<const std::byte*>(view.begin + page);
    unseen += static_cast<size_t>(std::popcount(changed_lines(seen, view.shadow + page, lines)));
  }
  return unseen;
}
}  // namespace

void detail::capture_at_exit(Tracer& t) {
  for (Region& r : t.regions) capture(t, r);
  for (const Region& view : t.regions) {
    if (!view.written_by_calls) continue;
    if (const size_t n = unseen_lines(t, view); n > 0)
      note(t, std::to_string(n) + " lines of " + view.path +
                  " changed in ways the runtime does not see (a system call made without the C library, "
                  "io_uring, fallocate moving bytes, another process): the crash images do not hold what they "
                  "wrote");
  }
}

void operation(trace::OperationMark mark, uintptr_t site) noexcept {
  Tracer& t = tracer();
  if (t.active) before_event();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    const trace::OperationRecord rec{site};
    if (t.active) t.file.append(trace::Kind::operation, static_cast<uint8_t>(mark), &rec, sizeof rec);
  }
  --tls_depth;
}

}  // namespace pmlab_trace
