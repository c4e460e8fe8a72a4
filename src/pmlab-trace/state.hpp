// What the tracer keeps while a traced program runs: the trace file being written, the persistent
// regions with their shadows, and the one lock every event takes. Internal to the runtime (src/pmlab-trace).
#pragma once

#include <signal.h>
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

#include "pmlab-trace/tracer.hpp"

namespace pmlab_trace::detail {

using trace::kLineBytes;
using trace::kPageBytes;

inline void* raw_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
}
inline bool mmap_failed(void* p) { return p == MAP_FAILED; }  // syscall() returns -1 and sets errno

// How deep in the runtime's own calls this thread is (Outermost), and its index in the trace.
extern thread_local int tls_depth;
uint16_t thread_index();

// The trace file, appended through a shared mapping that grows by doubling.
class TraceFile {
 public:
  bool open(const char* path) {
    fd_ = ::open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) return false;
    if (!grow(8u << 20)) return false;
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
    if (at + bytes > capacity_ && !grow(std::max<size_t>(capacity_ * 2, at + bytes))) return;
    trace::RecordHeader rh{static_cast<uint8_t>(kind), flags, thread_index(), bytes};
    std::byte* out = base_ + at;
    std::memcpy(out, &rh, sizeof rh);
    if (an) std::memcpy(out + sizeof rh, a, an);
    if (bn) std::memcpy(out + sizeof rh + an, b, bn);
    std::memset(out + sizeof rh + an + bn, 0, bytes - sizeof rh - an - bn);
    header()->used_bytes += bytes;
  }
  void close() {
    if (base_ == nullptr) return;
    const uint64_t total = sizeof(trace::FileHeader) + header()->used_bytes;
    syscall(SYS_munmap, base_, capacity_);
    base_ = nullptr;
    if (ftruncate(fd_, static_cast<off_t>(total)) != 0) { /* the header's count still bounds the records */
    }
    ::close(fd_);
  }

 private:
  bool grow(size_t bytes) {
    if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0) return false;
    // Populated at once: a page fault per page of trace would cost more than writing the trace.
    void* p = base_ == nullptr ? raw_mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0)
                               : reinterpret_cast<void*>(syscall(SYS_mremap, base_, capacity_, bytes, MREMAP_MAYMOVE));
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
  std::byte* shadow = nullptr;   // the content last recorded
  bool write_protected = false;  // userfaultfd tracks its written pages; else every page is compared
  // Per page, captures since a store changed it while it is left unprotected (a written page is compared
  // at every capture until it has been quiet for its grace, then protected again).
  std::vector<uint16_t> quiet;
  std::vector<bool> unprotected;  // faults mode: the pages a store made writable, compared at every capture
  std::vector<uintptr_t> hot;     // the same pages, listed
  // Per page, whether it has been protected again since the region was registered: a hot page that has is
  // one stored to again, which waits the longer wait (kReturningQuietFences, kSignalReturningQuietFences).
  std::vector<bool> protected_again;
  // Per page, the C library calls in progress that make the kernel store into it (read into a pool): in
  // signals mode such a page stays unprotected until they return, since a kernel store cannot take a signal.
  std::vector<uint16_t> kernel_stores;
};

// A page the program keeps writing (a log, a lane) would fault at every fence if protected again at each:
// a fault costs more than comparing the page, so a written page stays unprotected while it keeps changing,
// and then for some quiet fences. A page written again after it was protected again (a tree node on the
// path of many inserts, an allocator's header) waits longer from then on. Pages written once (a log's) keep
// the short wait, and while more than kMaxHotPages pages are unprotected every page does, which bounds what
// each fence spends comparing. The waits follow what a fault costs against comparing an unchanged page (a
// fraction of a µs): in faults mode a switch to the runtime's thread and back, tens of µs on a VM; in
// signals mode a signal on the storing thread, a few µs.
constexpr uint16_t kQuietFences = 64, kReturningQuietFences = 512;
constexpr uint16_t kSignalQuietFences = 8, kSignalReturningQuietFences = 32;
constexpr size_t kMaxHotPages = 128;

struct Tracer {
  std::mutex mutex;
  bool active = false;
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
  int uffd = -1, pagemap = -1;
  bool uffd_tried = false;
  std::string uffd_problem;
  uintptr_t own_begin = 0, own_end = 0;                           // this library's code, left out of stacks
  std::unordered_map<uint64_t, std::vector<uint32_t>> stack_ids;  // hash -> ids
  std::vector<std::vector<uintptr_t>> stacks;                     // id - 1 -> frames
  bool modules_written = false;
  bool exited = false;
};

// The one tracer of the process, never destroyed: events may come from destructors after ours.
Tracer& tracer();
void note(Tracer& t, const std::string& text);

}  // namespace pmlab_trace::detail
