// What the tracer keeps while a traced program runs: the trace file being written, the persistent
// regions with their shadows, and the one lock every event takes. Internal to the runtime (src/pmlab-trace).
#pragma once

#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pmlab-trace/real.hpp"
#include "pmlab-trace/tracer.hpp"

namespace pmlab_trace::detail {

using trace::kLineBytes;
using trace::kPageBytes;

inline void* raw_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return reinterpret_cast<void*>(raw_syscall(SYS_mmap, addr, len, prot, flags, fd, off));
}
inline bool mmap_failed(void* p) { return p == MAP_FAILED; }  // raw_syscall returns -1 and sets errno

// The runtime is preloaded, so its thread-locals fit the static TLS block the program starts with: each
// access is then one load, where the default model for a shared library calls __tls_get_addr, tens of ns
// on every interposed call and every trace record.
#define PMLAB_TRACE_STATIC_TLS [[gnu::tls_model("initial-exec")]]

// How deep in the runtime's own calls this thread is (Outermost), and its index in the trace.
PMLAB_TRACE_STATIC_TLS extern thread_local int tls_depth;
uint16_t thread_index();
// How many threads have made an event so far.
int threads_seen() noexcept;

// The trace file, appended through a shared mapping that grows a step at a time. Its calls that the runtime
// interposes (open, ftruncate, rename, unlink) are made as system calls: they are the runtime's, not the
// program's.
class TraceFile {
 public:
  bool open(const char* path) {
    fd_ = static_cast<int>(raw_syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (fd_ < 0) return false;
    if (!grow(kGrowBytes)) return false;
    auto* h = header();
    std::memcpy(h->magic, trace::kMagic, sizeof h->magic);
    h->version = trace::kVersion;
    h->header_bytes = sizeof(trace::FileHeader);
    h->pid = static_cast<uint64_t>(getpid());
    return true;
  }
  trace::FileHeader* header() { return reinterpret_cast<trace::FileHeader*>(base_); }

  // Appends a record: header, then the parts' bytes, padded.
  void append(trace::Kind kind, uint8_t flags, const void* a, size_t an, const void* b = nullptr, size_t bn = 0) {
    if (base_ == nullptr) return;
    const uint32_t bytes = trace::padded(sizeof(trace::RecordHeader) + an + bn);
    const uint64_t at = sizeof(trace::FileHeader) + header()->used_bytes;
    if (at + bytes > capacity_ && !grow((at + bytes + kGrowBytes - 1) / kGrowBytes * kGrowBytes)) return;
    trace::RecordHeader rh{static_cast<uint8_t>(kind), flags, thread_index(), bytes};
    std::byte* out = base_ + at;
    std::memcpy(out, &rh, sizeof rh);
    if (an) std::memcpy(out + sizeof rh, a, an);
    if (bn) std::memcpy(out + sizeof rh + an, b, bn);
    std::memset(out + sizeof rh + an + bn, 0, bytes - sizeof rh - an - bn);
    header()->used_bytes += bytes;
  }
  // The trace of a process the program started, created as `path` + ".part", locked, then renamed to `path`:
  // pmlab waits for the lock, which holds until the process exits, and never finds the trace unlocked
  // before its end.
  bool open_locked(const std::string& path) {
    const std::string part = path + ".part";
    if (!open(part.c_str())) return false;
    if (flock(fd_, LOCK_EX) == 0 && raw_syscall(SYS_rename, part.c_str(), path.c_str()) == 0) return true;
    release();
    raw_syscall(SYS_unlink, part.c_str());
    return false;
  }
  // In a forked child: the trace is the parent's, and the child's copy of the descriptor would hold its lock.
  void release() {
    if (base_ != nullptr) raw_syscall(SYS_munmap, base_, capacity_);
    base_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void close() {
    if (base_ == nullptr) return;
    const uint64_t total = sizeof(trace::FileHeader) + header()->used_bytes;
    raw_syscall(SYS_munmap, base_, capacity_);
    base_ = nullptr;
    // A failure leaves the file longer than its records: the header's count still bounds them.
    (void)raw_syscall(SYS_ftruncate, fd_, static_cast<off_t>(total));
    ::close(fd_);
  }

 private:
  // A step of growth. Its pages are populated at once, since a page fault per page of trace would cost
  // more than writing the trace; but each page populated is an allocation (µs on a VM), so the step is
  // small: the part of the last step the trace never fills is all the run spends on pages it does not use.
  static constexpr size_t kGrowBytes = size_t{1} << 20;

  bool grow(size_t bytes) {
    if (raw_syscall(SYS_ftruncate, fd_, static_cast<off_t>(bytes)) != 0) return false;
    void* p = base_ == nullptr
                  ? raw_mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0)
                  : reinterpret_cast<void*>(raw_syscall(SYS_mremap, base_, capacity_, bytes, MREMAP_MAYMOVE));
    if (mmap_failed(p)) return false;
    constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE (Linux 5.14); a hint: without it pages fault in
    if (base_ != nullptr) madvise(static_cast<std::byte*>(p) + capacity_, bytes - capacity_, kPopulateWrite);
    base_ = static_cast<std::byte*>(p);
    capacity_ = bytes;
    return true;
  }
  int fd_ = -1;
  std::byte* base_ = nullptr;
  size_t capacity_ = 0;
};

struct Region {
  uint32_t id = 0;
  uintptr_t begin = 0, end = 0;
  trace::RegionRecord record{};  // as the trace names it; its path follows it there
  std::string path;              // where the runtime reads the file (its /proc name where it has none)
  // The file had no name when the region was declared (O_TMPFILE, or unlinked while open): the trace gives
  // it none, so that a crash image holds it only under a name a link gives it later.
  bool nameless = false;
  std::byte* shadow = nullptr;   // the content last recorded
  bool write_protected = false;  // userfaultfd tracks its written pages; else every page is compared
  // The runtime's own read-only view of a --pool file that the program writes with write(2) and its kin
  // (trace::RegionHow::written): those calls alone change it, each recorded as it returns, so it is never
  // captured or protected, and has none of the per-page state below.
  bool written_by_calls = false;
  // Per page, captures since a store changed it while it is left unprotected (a written page is compared
  // at every capture until it has been quiet for its grace, then protected again).
  std::vector<uint16_t> quiet;
  std::vector<bool> unprotected;  // faults mode: the pages a store made writable, compared at every capture
  std::vector<uintptr_t> hot;     // the same pages, listed
  uint32_t captures = 0;          // of this region so far: the clock the waits below are measured in
  // Per page, the capture at which it was last protected again (0: never), and whether its last store came
  // soon after that, within the longer wait (kReturningQuietFences, kSignalReturningQuietFences): such a
  // page waits the longer wait from then on, any other the short one.
  std::vector<uint32_t> protected_at;
  std::vector<bool> returns_soon;
  // Per page, the C library calls in progress that make the kernel store into it (read into a pool): in
  // signals mode such a page stays unprotected until they return, since a kernel store cannot take a signal.
  std::vector<uint16_t> kernel_stores;
};

// A page the program keeps writing (a log, a lane) would fault at every fence if protected again at each:
// a fault costs more than comparing the page, so a written page stays unprotected while it keeps changing,
// and then for some quiet fences. A page stored to again soon after it was protected again (an allocator's
// header, a node near a tree's root) would have been cheaper to keep comparing: it waits the longer wait
// from then on. A page that comes back only after that long (one node among many, written every few
// hundred fences) would pay its fault anyway: the longer wait would only add comparisons, so it keeps the
// short wait, as pages written once (a log's) do. While more than kMaxHotPages pages are unprotected
// every page waits the short wait, which bounds what each fence spends comparing. The waits follow what a
// fault costs against comparing an unchanged page (a tenth of a µs): in faults mode a switch to the
// runtime's thread and back, tens of µs on a VM; in signals mode a signal on the storing thread, a few µs.
constexpr uint16_t kQuietFences = 64, kReturningQuietFences = 512;
constexpr uint16_t kSignalQuietFences = 12, kSignalReturningQuietFences = 64;
constexpr size_t kMaxHotPages = 128;

struct Tracer {
  std::mutex mutex;
  bool active = false;
  // A process the program started (its shell's command, its test driver's child): traced, into a trace of
  // its own (`trace_path`.<pid>), from its first mapping of persistent memory on.
  bool armed = false;
  std::string trace_path;
  bool eadr = false;
  unsigned stack_depth = 24;
  bool stack_cache = true;  // PMLAB_TRACE_STACK_CACHE=0 unwinds at every fence (the cache's test oracle)
  std::string writes;       // PMLAB_TRACE_WRITES: signals, faults, scan or compare; empty: the first that works
  trace::WriteTracking tracking = trace::WriteTracking::compare;
  bool fault_thread = false;
  // Signals mode: SIGBUS is the runtime's; the program's own action for it is kept here, called for every
  // SIGBUS that is not a write fault, and shown to the program as its own.
  std::atomic<bool> takes_sigbus{false};
  struct sigaction program_sigbus {};
  TraceFile file;
  std::vector<Region> regions;
  uint32_t next_region = 0;
  std::vector<std::pair<uint64_t, uint64_t>> pools;  // (device, inode) of the --pool files
  std::vector<std::string> pool_paths;
  std::vector<std::string> pool_dirs;  // the --pool directories, resolved
  // (device, inode) of every file the program mapped persistent, while mapped or since: what it stored there
  // is in its mappings' records, not in the view of a file it also writes with calls.
  std::vector<std::pair<uint64_t, uint64_t>> mapped_files;
  std::vector<std::string> compared_paths;  // files whose mappings are compared whole, noted once each
  int uffd = -1, pagemap = -1;
  bool uffd_tried = false;
  std::string uffd_problem;
  uintptr_t own_begin = 0, own_end = 0;                           // this library's code, left out of stacks
  std::unordered_map<uint64_t, std::vector<uint32_t>> stack_ids;  // hash -> ids
  std::vector<std::vector<uintptr_t>> stacks;                     // id - 1 -> frames
  bool modules_written = false;
  bool exited = false;
  bool forked_with_regions = false;  // noted once
  bool async_msync = false;          // noted once
  bool private_pool = false;         // noted once
  bool cut_while_mapped = false;     // noted once
  bool arrived_noted = false;        // a file that came into the --pool directories, noted once
  bool pools_viewed = false;         // view_untouched_pools ran
  bool started_traced = false;       // the process pmlab started (not one it started in turn)
  // (device, inode) of the files a write(2) was found not to be a --pool file: a write's test costs a
  // fstat, not the path comparisons of is_pool_file.
  std::vector<std::pair<uint64_t, uint64_t>> not_pools;
};

// Whether a region shows the file (device, inode): the trace knows it.
inline bool traces_file(const Tracer& t, uint64_t device, uint64_t inode) {
  return std::any_of(t.regions.begin(), t.regions.end(),
                     [&](const Region& r) { return r.record.device == device && r.record.inode == inode; });
}

// The runtime's view of the file (device, inode), or null.
inline Region* view_of(Tracer& t, uint64_t device, uint64_t inode) {
  for (Region& r : t.regions)
    if (r.written_by_calls && r.record.device == device && r.record.inode == inode) return &r;
  return nullptr;
}

// The --pool files and directories (pools.cpp).
// The path the file descriptor was opened by ("?" when /proc does not say).
std::string path_of(int fd);
// Reads PMLAB_TRACE_POOLS, paths separated by colons: a directory's files are pools, each anywhere below it.
void read_pools(Tracer& t, const std::string& list);
bool is_pool_file(Tracer& t, int fd);
// `path` (absolute, resolved where it exists) is a --pool file's or lies below a --pool directory.
bool is_pool_path(const Tracer& t, const std::string& path);
// The --pool files' paths, then the regular files now below each --pool directory.
std::vector<std::string> pool_files(const Tracer& t);
// `path` (absolute) lies below one of the --pool directories.
bool below_pool_dir(const Tracer& t, const std::string& path);
// Appends a directory record (`to`: where a move took it); the caller holds the lock, or runs alone.
void append_directory(Tracer& t, trace::DirectoryEvent event, const std::string& path, const std::string& to = {});
// Records each --pool directory and the directories now below it (trace::Kind::directory).
void record_pool_directories(Tracer& t);

// Once the process pmlab started has mapped or written persistent memory, at its next persistence event or
// file call, a view of each --pool file that no region shows yet (the lock held): its content then is where
// the run started, and a crash image holds it also where the run only renames another file over it. Not in
// a process that one started (a shell's program is traced, but which files are its own is not known).
// `now`: whether or not the process has mapped or written persistent memory yet (a file is coming in).
void view_untouched_pools(Tracer& t, bool now = false);

// The file `fd` (`st`), which the program has just renamed or linked into a --pool directory (or to a --pool
// path) from outside, gets a view of its own (the lock held): a region that names no file, its content then
// the starting point, so that the move's record that follows gives it its name. False where the file is none
// of that (not a regular file, traced already, or still outside).
bool view_arrived(Tracer& t, int fd, const struct stat& st);

// At the exit (the lock held): what the program stored through its mappings is recorded; where a file written
// by calls, and never mapped, differs from what those calls recorded, something the runtime does not see
// changed it, and the trace notes how many lines, since the crash images do not hold them.
void capture_at_exit(Tracer& t);

// The addresses [from, to) (page-aligned) are no longer traced (the lock held): each region they overlap is
// captured one last time and ends, and what lies outside them goes on as regions of their own.
void untrace(Tracer& t, uintptr_t from, uintptr_t to);

// The one tracer of the process, never destroyed: events may come from destructors after ours.
Tracer& tracer();
void note(Tracer& t, const std::string& text);

}  // namespace pmlab_trace::detail
