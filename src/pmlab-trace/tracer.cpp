#include "pmlab-trace/tracer.hpp"

#include "pmlab-trace/schedule.hpp"
#include "pmlab-trace/stacks.hpp"
#include "pmlab-trace/state.hpp"
#include "pmlab-trace/write_tracking.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace pmlab_trace {
namespace detail {

PMLAB_TRACE_STATIC_TLS thread_local int tls_depth = 0;
namespace {
PMLAB_TRACE_STATIC_TLS thread_local int tls_thread = -1;
std::atomic<int> next_thread{0};
}  // namespace

uint16_t thread_index() {
  if (tls_thread < 0) tls_thread = next_thread.fetch_add(1, std::memory_order_relaxed);
  return static_cast<uint16_t>(tls_thread);
}
int threads_seen() noexcept { return next_thread.load(std::memory_order_relaxed); }

Tracer& tracer() {
  static Tracer* t = new Tracer;  // never destroyed: events may come from destructors after ours
  return *t;
}

void note(Tracer& t, const std::string& text) { t.file.append(trace::Kind::note, 0, text.data(), text.size()); }

}  // namespace detail

using namespace detail;

namespace {

// A forked child is not the traced program: its events are not ours, and SIGBUS is its own again (its pages
// are not protected: a fork does not carry the userfaultfd over). A child of a process that has mapped no
// persistent memory yet (a shell, a test driver) may be the program, and is traced once it maps some.
void fork_child() {
  Tracer& t = tracer();
  t.started_traced = false;
  if (t.active) {
    t.active = false;
    t.file.release();
    t.armed = t.regions.empty();
  }
  if (t.takes_sigbus.exchange(false)) libc_sigaction(SIGBUS, &t.program_sigbus, nullptr);
}

// The traced process forked while it has persistent memory mapped: the child shares those pages, and its
// stores to them are not traced (the child is not). Said once, in the trace.
void fork_parent() {
  Tracer& t = tracer();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active && !t.regions.empty() && !t.forked_with_regions) {
      t.forked_with_regions = true;
      note(t, "the program forked while it had persistent memory mapped: a child's stores to it are not traced");
    }
  }
  --tls_depth;
}

// Another process of the program maps persistent memory: it is traced from here on, into its own trace.
bool trace_from_here(Tracer& t) {
  t.armed = false;
  const std::string path = t.trace_path + "." + std::to_string(getpid());
  if (!t.file.open_locked(path)) {
    std::fprintf(stderr, "pmlab-trace: cannot write the trace %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  t.active = true;
  if (!traps_note().empty()) note(t, traps_note());
  return true;
}

void read_options(Tracer& t) {
  if (const char* d = getenv("PMLAB_TRACE_DOMAIN")) t.eadr = std::strcmp(d, "eadr") == 0;
  if (const char* s = getenv("PMLAB_TRACE_STACK_DEPTH"))
    t.stack_depth = static_cast<unsigned>(std::strtoul(s, nullptr, 10));
  if (const char* c = getenv("PMLAB_TRACE_STACK_CACHE")) t.stack_cache = std::strcmp(c, "0") != 0;
  if (const char* w = getenv("PMLAB_TRACE_WRITES")) t.writes = w;
  if (const char* pools = getenv("PMLAB_TRACE_POOLS")) read_pools(t, pools);
}

// The process pmlab started is traced from its start; any process it starts, from its first mapping of
// persistent memory (a program run by a shell or a driver).
__attribute__((constructor)) void start() {
  const char* file = getenv("PMLAB_TRACE_FILE");
  const char* pid = getenv("PMLAB_TRACE_PID");
  if (file == nullptr || pid == nullptr) return;
  Tracer& t = tracer();
  read_options(t);
  read_schedule();
  t.trace_path = file;
  dl_iterate_phdr(find_own, &t);
  if (const char* sites = getenv("PMLAB_TRACE_TRAPS")) install_traps(sites);
  pthread_atfork(nullptr, fork_parent, fork_child);
  if (std::strtoll(pid, nullptr, 10) != getpid()) {
    t.armed = true;
    return;
  }
  if (!t.file.open(file)) {
    std::fprintf(stderr, "pmlab-trace: cannot write the trace %s: %s\n", file, std::strerror(errno));
    return;
  }
  t.active = true;
  t.started_traced = true;
  if (!traps_note().empty()) note(t, traps_note());
  record_pool_directories(t);
}

// The C library would write what stdio streams still buffer after this: written first, so the trace holds it.
__attribute__((destructor)) void stop() {
  flush_pool_streams();
  exiting(0);
}

}  // namespace

bool active() noexcept { return tracer().active; }
bool may_trace() noexcept {
  const Tracer& t = tracer();
  return t.active || t.armed;
}
bool eadr() noexcept { return tracer().eadr; }

Outermost::Outermost() noexcept : outermost_(tls_depth++ == 0 && tracer().active) {}
Outermost::~Outermost() { --tls_depth; }

namespace {
// The file as it is now is the durable image the run starts from: the pages of region `r` in [from, from +
// length) that are not all zero go into the shadow and the trace (so the shadow's other pages stay the
// kernel's zero page). A file is read through a bounce buffer: reading the program's mapping instead would
// fault in every page, which costs more here than the copy. A device (device DAX) cannot be read, and has
// no size to go by: it is read through the mapping, which is its extent, before the mapping is protected.
void read_base_pages(Tracer& t, const Region& r, int fd, const struct stat& st, size_t from, size_t length) {
  static const std::byte zeros[kPageBytes] = {};
  auto take = [&](size_t off, const std::byte* page) {
    const trace::BasePageRecord record{r.id, 0, off, changed_lines(page, zeros, kPageBytes / kLineBytes)};
    if (record.lines == 0) return;
    std::memcpy(r.shadow + off, page, kPageBytes);
    std::byte lines[kPageBytes];
    size_t kept = 0;
    for (uint64_t rest = record.lines; rest != 0; rest &= rest - 1, kept += kLineBytes)
      std::memcpy(lines + kept, page + size_t(std::countr_zero(rest)) * kLineBytes, kLineBytes);
    t.file.append(trace::Kind::base_page, 0, &record, sizeof record, lines, kept);
  };
  if (S_ISCHR(st.st_mode)) {
    for (size_t off = from; off < from + length; off += kPageBytes)
      take(off, reinterpret_cast<const std::byte*>(r.begin + off));
    return;
  }
  static std::byte chunk[64 * kPageBytes];  // the caller holds the tracer's lock
  for (size_t at = from; at < from + length; at += sizeof chunk) {
    const size_t want = std::min(sizeof chunk, from + length - at);
    size_t got = 0;
    while (got < want) {  // past the file's end, the image reads zero
      const ssize_t n = pread(fd, chunk + got, want - got, static_cast<off_t>(r.record.file_offset + at + got));
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    std::memset(chunk + got, 0, sizeof chunk - got);
    for (size_t off = 0; off < want; off += kPageBytes) take(at + off, chunk + off);
  }
}
}  // namespace

namespace {
// The region's record in the trace, followed by its file's path (none where the file has no name).
void append_region(Tracer& t, Region& r, trace::RegionHow how) {
  const std::string_view path = r.nameless ? std::string_view() : std::string_view(r.path);
  r.record.path_bytes = static_cast<uint32_t>(path.size());
  t.file.append(trace::Kind::region, static_cast<uint8_t>(how), &r.record, sizeof r.record, path.data(), path.size());
}

// A new region of the file `path` (`st`), `length` bytes of it from `offset` at `begin`, with its shadow:
// given the next id and declared in the trace, after the loaded objects (once), which name its calls.
Region declare(Tracer& t, uintptr_t begin, size_t length, std::byte* shadow, const std::string& path,
               const struct stat& st, uint64_t offset, trace::RegionHow how, bool nameless = false) {
  if (!t.modules_written) {
    dl_iterate_phdr(write_module, &t);
    t.modules_written = true;
  }
  Region r;
  r.id = t.next_region++;
  r.begin = begin;
  r.end = begin + ((length + kPageBytes - 1) & ~size_t{kPageBytes - 1});
  r.shadow = shadow;
  r.path = path;
  r.nameless = nameless || st.st_nlink == 0;
  r.written_by_calls = how == trace::RegionHow::written;
  const std::pair<uint64_t, uint64_t> file{st.st_dev, st.st_ino};
  if (!r.written_by_calls && std::find(t.mapped_files.begin(), t.mapped_files.end(), file) == t.mapped_files.end())
    t.mapped_files.push_back(file);
  r.record =
      trace::RegionRecord{r.id, 0, begin, length, offset, static_cast<uint64_t>(st.st_size), st.st_dev, st.st_ino};
  append_region(t, r, how);
  return r;
}
}  // namespace

void mapped(void* address, size_t length, int fd, off_t offset, bool persistent) noexcept {
  Tracer& t = tracer();
  if ((!t.active && !t.armed) || length == 0) return;
  ++tls_depth;
  std::lock_guard lock(t.mutex);
  if ((!persistent && !is_pool_file(t, fd)) || !(t.active || trace_from_here(t))) {
    --tls_depth;
    return;
  }
  struct stat st {};
  fstat(fd, &st);
  // Not populated: a page of it is allocated when the file's content or a recorded line is copied in, so
  // a mostly empty pool costs its written pages only.
  const size_t bytes = (length + kPageBytes - 1) & ~size_t{kPageBytes - 1};
  void* shadow = raw_mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mmap_failed(shadow)) {
    note(t, "cannot allocate a shadow of " + std::to_string(bytes) + " bytes: the mapping is not traced");
    --tls_depth;
    return;
  }
  Region r = declare(t, reinterpret_cast<uintptr_t>(address), length, static_cast<std::byte*>(shadow), path_of(fd), st,
                     static_cast<uint64_t>(offset), trace::RegionHow::mapped);
  read_base_pages(t, r, fd, st, 0, length);
  r.quiet.assign((r.end - r.begin) / kPageBytes, 0);
  r.unprotected.assign((r.end - r.begin) / kPageBytes, false);
  r.protected_at.assign((r.end - r.begin) / kPageBytes, 0);
  r.returns_soon.assign((r.end - r.begin) / kPageBytes, false);
  r.kernel_stores.assign((r.end - r.begin) / kPageBytes, 0);
  r.hot.reserve((r.end - r.begin) / kPageBytes);
  r.write_protected = protect(t, r);
  t.file.header()->write_tracking =
      static_cast<uint32_t>(r.write_protected ? t.tracking : trace::WriteTracking::compare);
  // Said once a file: a program may map one many times (TDB maps its file again whenever it grows).
  if (!r.write_protected &&
      std::find(t.compared_paths.begin(), t.compared_paths.end(), r.path) == t.compared_paths.end()) {
    t.compared_paths.push_back(r.path);
    note(t, "stores to " + r.path + " found by comparing every page at every fence (" + t.uffd_problem + ")");
  } else if (t.tracking == trace::WriteTracking::scan && !t.uffd_problem.empty() && t.regions.empty())
    note(t, "stores found by scanning write-protected pages at every fence (" + t.uffd_problem + ")");
  // What the program stored between the map and now (nothing, but for another thread) is captured next time.
  t.regions.push_back(std::move(r));  // moved: r.hot keeps the room it reserved
  --tls_depth;
}

void mapped_private(int fd) noexcept {
  Tracer& t = tracer();
  if (!t.active || t.private_pool) return;
  const int saved_errno = errno;
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (!t.private_pool && is_pool_file(t, fd)) {
      t.private_pool = true;
      note(t, path_of(fd) +
                  " is mapped private and writable: stores through that mapping never reach the file, and are not "
                  "traced");
    }
  }
  --tls_depth;
  errno = saved_errno;
}

namespace {
// A --pool file the program writes with write(2) and its kin is traced through a view of the runtime's own:
// the file mapped shared and read-only, from its start, at least this long, and twice as long each time a
// write goes past it. Only lines a write has just put inside the file are read through it, so the view may
// run past the file's end.
constexpr size_t kViewBytes = size_t{64} << 20;

size_t page_up(uint64_t n) { return static_cast<size_t>((n + kPageBytes - 1) & ~uint64_t{kPageBytes - 1}); }

// A file a write(2) goes to is a --pool file; what is not stays not (its device and inode are kept).
bool written_pool(Tracer& t, int fd, const struct stat& st) {
  const std::pair<uint64_t, uint64_t> id{st.st_dev, st.st_ino};
  if (std::find(t.not_pools.begin(), t.not_pools.end(), id) != t.not_pools.end()) return false;
  // One the trace knows is one whatever name the descriptor was opened by (a file linked in from outside).
  if (traces_file(t, st.st_dev, st.st_ino) || is_pool_file(t, fd)) return true;
  t.not_pools.push_back(id);
  return false;
}

// The view of the file `fd` (`st`) as far as byte `end`, made or grown. A new view's pages past the old one's
// are a starting point; the view is a new region (the old one ends), its shadow the old one's, moved. A new
// one `nameless` gives its file no name in the trace (it has one only from a rename or link that follows).
Region* file_view(Tracer& t, int fd, const struct stat& st, uint64_t end, bool nameless = false) {
  Region* old = view_of(t, st.st_dev, st.st_ino);
  if (old != nullptr && end <= old->record.length) return old;
  const size_t old_bytes = old != nullptr ? old->end - old->begin : 0;
  const size_t bytes = std::max({kViewBytes, 2 * old_bytes, page_up(end)});
  const std::string path = path_of(fd);
  // Read through a descriptor of its own: the program's may be write-only (LMDB writes its meta page so).
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const int readable = ::open(link, O_RDONLY | O_CLOEXEC);
  void* view = readable < 0 ? MAP_FAILED : raw_mmap(nullptr, bytes, PROT_READ, MAP_SHARED | MAP_NORESERVE, readable, 0);
  void* shadow =
      mmap_failed(view) ? MAP_FAILED
      : old != nullptr
          ? reinterpret_cast<void*>(raw_syscall(SYS_mremap, old->shadow, old_bytes, bytes, MREMAP_MAYMOVE))
          : raw_mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mmap_failed(shadow)) {
    if (!mmap_failed(view)) raw_syscall(SYS_munmap, view, bytes);
    if (readable >= 0) ::close(readable);
    note(t, "cannot view " + path + " as far as " + std::to_string(end) + " bytes (" + std::strerror(errno) +
                "): what the program writes there with write(2) is not traced");
    return nullptr;
  }
  Region v = declare(t, reinterpret_cast<uintptr_t>(view), bytes, static_cast<std::byte*>(shadow), path, st, 0,
                     trace::RegionHow::written, nameless && old == nullptr);
  if (old != nullptr) {
    const trace::UnmapRecord rec{old->id, 0};
    t.file.append(trace::Kind::unmap, 0, &rec, sizeof rec);
    raw_syscall(SYS_munmap, old->begin, old_bytes);
    t.regions.erase(t.regions.begin() + (old - t.regions.data()));
  }
  const size_t file_bytes = std::min(bytes, page_up(static_cast<uint64_t>(st.st_size)));
  if (file_bytes > old_bytes) read_base_pages(t, v, readable, st, old_bytes, file_bytes - old_bytes);
  ::close(readable);
  if (std::all_of(t.regions.begin(), t.regions.end(), [](const Region& r) { return r.written_by_calls; }))
    t.file.header()->write_tracking = static_cast<uint32_t>(trace::WriteTracking::calls);
  t.regions.push_back(std::move(v));
  return &t.regions.back();
}
}  // namespace

void detail::view_untouched_pools(Tracer& t, bool now) {
  if (t.pools_viewed || !t.active || !t.started_traced || (t.regions.empty() && !now)) return;
  t.pools_viewed = true;
  for (const std::string& p : pool_files(t)) {
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // none yet: one the run makes is traced when it maps or writes it
    struct stat st {};
    const bool untouched =
        fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && !traces_file(t, st.st_dev, st.st_ino);
    if (untouched) file_view(t, fd, st, static_cast<uint64_t>(st.st_size));
    ::close(fd);
  }
}

bool detail::view_arrived(Tracer& t, int fd, const struct stat& st) {
  if (!S_ISREG(st.st_mode) || traces_file(t, st.st_dev, st.st_ino) || !is_pool_file(t, fd)) return false;
  std::erase(t.not_pools, std::pair<uint64_t, uint64_t>{st.st_dev, st.st_ino});
  return file_view(t, fd, st, static_cast<uint64_t>(st.st_size), true) != nullptr;
}

bool written_pool_file(int fd) noexcept {
  Tracer& t = tracer();
  const int saved_errno = errno;
  struct stat st {};
  bool pool = tls_depth == 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (pool) {
    std::lock_guard lock(t.mutex);
    pool = written_pool(t, fd, st);
  }
  errno = saved_errno;
  return pool;
}

bool file_will_write(int fd, std::optional<uint64_t> at, size_t n, FileWrite* write) noexcept {
  Tracer& t = tracer();
  // A process the program started is traced from its first write to a --pool file, as from its first
  // mapping of one; a write the runtime's own calls make is none of the program's.
  if ((!t.active && !t.armed) || n == 0 || tls_depth > 0) return false;
  const int saved_errno = errno;
  bool traced = false;
  ++tls_depth;
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    std::lock_guard lock(t.mutex);
    // A write to any other file stops here, at the cached answer: no fcntl or lseek on it.
    const bool pool = written_pool(t, fd, st);
    const int flags = pool ? fcntl(fd, F_GETFL) : -1;
    // O_APPEND writes at the end, pwrite(2) too (a Linux quirk the man page states).
    const off_t offset = flags < 0            ? -1
                         : (flags & O_APPEND) ? st.st_size
                         : at                 ? static_cast<off_t>(*at)
                                              : lseek(fd, 0, SEEK_CUR);
    if (pool && t.active) view_untouched_pools(t);
    const Region* view = offset >= 0 && (t.active || trace_from_here(t))
                             ? file_view(t, fd, st, static_cast<uint64_t>(offset) + n)
                             : nullptr;
    if (view != nullptr) {
      *write = {st.st_dev, st.st_ino, static_cast<uint64_t>(offset), (flags & O_DSYNC) != 0, view->record.length};
      traced = true;
      // What the program stored through its own mappings of the file is recorded before the write changes
      // what they show.
      for (Region& r : t.regions)
        if (!r.written_by_calls && r.record.device == st.st_dev && r.record.inode == st.st_ino) capture(t, r);
    }
  }
  --tls_depth;
  errno = saved_errno;
  return traced;
}

namespace {
// The part [from, to) of `r`, page-aligned and inside it, as a region of its own: the same file, its shadow,
// its pages' state, a new id, and a region record without base pages (its content continues).
Region piece_of(Tracer& t, const Region& r, uintptr_t from, uintptr_t to) {
  Region p;
  p.id = t.next_region++;
  p.begin = from;
  p.end = to;
  p.record = r.record;
  p.record.id = p.id;
  p.record.address = from;
  p.record.length = to - from;
  p.record.file_offset = r.record.file_offset + (from - r.begin);
  p.path = r.path;
  p.nameless = r.nameless;
  p.shadow = r.shadow + (from - r.begin);
  p.write_protected = r.write_protected;
  p.captures = r.captures;
  const size_t first = (from - r.begin) / kPageBytes, last = (to - r.begin) / kPageBytes;
  auto slice = [&](const auto& v) { return std::decay_t<decltype(v)>(v.begin() + first, v.begin() + last); };
  p.quiet = slice(r.quiet);
  p.unprotected = slice(r.unprotected);
  p.protected_at = slice(r.protected_at);
  p.returns_soon = slice(r.returns_soon);
  p.kernel_stores = slice(r.kernel_stores);
  p.hot.reserve(last - first);  // room for every page: a signal handler allocates nothing
  for (uintptr_t page : r.hot)
    if (page >= from && page < to) p.hot.push_back(page);
  append_region(t, p, trace::RegionHow::mapped);
  return p;
}
}  // namespace

// Before [address, address+length) is unmapped or mapped over: each region it overlaps is captured one last
// time and ends, and what lies outside the range goes on as regions of their own (PMDK maps a poolset's
// first part over the whole pool, then its other parts over the tail).
void unmapping(void* address, size_t length) noexcept {
  Tracer& t = tracer();
  if (!t.active || t.regions.empty() || length == 0) return;
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    const auto from = reinterpret_cast<uintptr_t>(address) & ~uintptr_t{kPageBytes - 1};
    untrace(t, from, (reinterpret_cast<uintptr_t>(address) + length + kPageBytes - 1) & ~uintptr_t{kPageBytes - 1});
  }
  --tls_depth;
}

void detail::untrace(Tracer& t, uintptr_t from, uintptr_t to) {
  std::vector<Region> kept;
  for (size_t i = 0; i < t.regions.size();) {
    Region& r = t.regions[i];
    if (r.end <= from || r.begin >= to) {
      ++i;
      continue;
    }
    capture(t, r);
    trace::UnmapRecord rec{r.id, 0};
    t.file.append(trace::Kind::unmap, 0, &rec, sizeof rec);
    const uintptr_t gone_from = std::max(r.begin, from), gone_to = std::min(r.end, to);
    if (r.write_protected) {
      uffdio_range range{gone_from, gone_to - gone_from};
      ioctl(t.uffd, UFFDIO_UNREGISTER, &range);
    }
    if (r.begin < gone_from) kept.push_back(piece_of(t, r, r.begin, gone_from));
    if (gone_to < r.end) kept.push_back(piece_of(t, r, gone_to, r.end));
    raw_syscall(SYS_munmap, r.shadow + (gone_from - r.begin), gone_to - gone_from);
    t.regions.erase(t.regions.begin() + static_cast<std::ptrdiff_t>(i));
  }
  for (Region& k : kept) t.regions.push_back(std::move(k));
}

bool remapping(void* address, size_t length, MappedFile* file) noexcept {
  Tracer& t = tracer();
  if (!t.active) return false;
  {
    ++tls_depth;
    std::lock_guard lock(t.mutex);
    const auto a = reinterpret_cast<uintptr_t>(address);
    const Region* r = region_of(t, a);
    if (r != nullptr) *file = {r->path, r->record.device, r->record.inode, r->record.file_offset + (a - r->begin)};
    --tls_depth;
    if (r == nullptr) return false;
  }
  unmapping(address, length);
  return true;
}

void remapped(void* address, size_t length, const MappedFile& file) noexcept {
  Tracer& t = tracer();
  if (!t.active) return;
  // The file by its path, or where it was renamed or removed since, through the mapping itself.
  int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != file.device || st.st_ino != file.inode)) {
    ::close(fd);
    fd = -1;
  }
  if (fd < 0) {
    char link[80];
    const auto a = reinterpret_cast<uintptr_t>(address);
    std::snprintf(link, sizeof link, "/proc/self/map_files/%lx-%lx", static_cast<unsigned long>(a),
                  static_cast<unsigned long>(a + ((length + kPageBytes - 1) & ~size_t{kPageBytes - 1})));
    fd = ::open(link, O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) {
    ++tls_depth;
    std::lock_guard lock(t.mutex);
    note(t, "a persistent mapping of " + file.path +
                " moved by mremap cannot be traced again: its stores from here on are not in the trace");
    --tls_depth;
    return;
  }
  mapped(address, length, fd, static_cast<off_t>(file.offset), true);
  ::close(fd);
}

namespace {
// `what` on [p, p+n) under the lock, for a call of the program's in signals mode (the runtime's own reads,
// its pread of a new region, come with its lock held).
void note_kernel_stores(const void* p, size_t n, void (*what)(Tracer&, uintptr_t, uintptr_t)) {
  Tracer& t = tracer();
  if (!t.takes_sigbus.load(std::memory_order_relaxed) || !t.active || n == 0 || tls_depth > 0) return;
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(t.mutex);
  what(t, a, a + n);
}
}  // namespace

void kernel_will_store(const void* p, size_t n) noexcept { note_kernel_stores(p, n, detail::kernel_will_store); }
void kernel_stored(const void* p, size_t n) noexcept { note_kernel_stores(p, n, detail::kernel_stored); }

bool takes_sigbus() noexcept { return tracer().takes_sigbus.load(std::memory_order_relaxed); }

bool program_sigbus(const struct sigaction* act, struct sigaction* old) noexcept {
  Tracer& t = tracer();
  if (!t.takes_sigbus.load()) return false;
  std::lock_guard lock(t.mutex);
  if (old != nullptr) *old = t.program_sigbus;
  if (act != nullptr) t.program_sigbus = *act;
  return true;
}

void exiting(int status) noexcept {
  Tracer& t = tracer();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active && !t.exited) {
      t.exited = true;
      capture_at_exit(t);
      dl_iterate_phdr(write_module, &t);
      if (const std::string said = schedule_note(); !said.empty()) note(t, said);
      if (const std::string said = traps_missed(); !said.empty()) note(t, said);
      trace::ExitRecord rec{status, 0};
      t.file.append(trace::Kind::exit, 0, &rec, sizeof rec);
      t.file.header()->complete = 1;
      t.file.close();
      t.active = false;
    }
  }
  --tls_depth;
}

}  // namespace pmlab_trace
