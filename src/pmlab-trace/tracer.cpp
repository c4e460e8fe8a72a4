#include "pmlab-trace/tracer.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace pmlab_trace {
namespace {

using trace::kLineBytes;
using trace::kPageBytes;

// PAGEMAP_SCAN (Linux 6.7) and the userfaultfd features it needs; older headers lack them.
struct PageRegion {
  uint64_t start, end, categories;
};
struct PmScanArg {
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted, category_mask,
      category_anyof_mask, return_mask;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);
constexpr uint64_t kPageIsWritten = 1u << 1;
constexpr uint64_t kScanWpMatching = 1u << 0, kScanCheckWpAsync = 1u << 1;
constexpr uint64_t kFeatureWpHugetlbfsShmem = 1u << 12, kFeatureWpUnpopulated = 1u << 13, kFeatureWpAsync = 1u << 15;

void* raw_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
}
bool mmap_failed(void* p) { return p == MAP_FAILED; }  // syscall() returns -1 and sets errno

thread_local int tls_depth = 0;
thread_local int tls_thread = -1;
std::atomic<int> next_thread{0};

uint16_t thread_index() {
  if (tls_thread < 0) tls_thread = next_thread.fetch_add(1, std::memory_order_relaxed);
  return static_cast<uint16_t>(tls_thread);
}

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
  // Per page, fences since a store changed it while it is left unprotected (a written page is compared at
  // every fence until it has been quiet for kQuietFences, then protected again).
  std::vector<uint8_t> quiet;
  std::vector<bool> unprotected;  // faults mode: the pages a store made writable, compared at every capture
  std::vector<uintptr_t> hot;     // the same pages, listed
};

// A page the program keeps writing (a log, a lane) would fault at every fence if protected again at each:
// a fault costs more than comparing the page, so it stays unprotected while it keeps changing.
constexpr uint8_t kQuietFences = 64;

struct Tracer {
  std::mutex mutex;
  bool active = false;
  bool eadr = false;
  unsigned stack_depth = 24;
  std::string writes;  // PMLAB_TRACE_WRITES: faults, scan or compare; empty: the first that works
  trace::WriteTracking tracking = trace::WriteTracking::compare;
  bool fault_thread = false;
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

Tracer& tracer() {
  static Tracer* t = new Tracer;  // never destroyed: events may come from destructors after ours
  return *t;
}

void note(Tracer& t, const std::string& text) { t.file.append(trace::Kind::note, 0, text.data(), text.size()); }

// userfaultfd write-protection, reported (faults: the kernel waits for our thread at each first store to a
// protected page, also a store made by a system call) or asynchronous (scan: the kernel marks the page
// written and a scan finds it). Faults cost what is written; a scan walks the region's page tables at every
// capture. Reported faults need a userfaultfd that also takes faults in kernel mode (privileged, or
// vm.unprivileged_userfaultfd = 1); else a kernel write to a protected page would fail with EFAULT.
bool open_uffd(Tracer& t) {
  t.uffd_tried = true;
  if (t.writes == "compare") {
    t.uffd_problem = "PMLAB_TRACE_WRITES=compare";
    return false;
  }
  if (t.writes.empty() || t.writes == "faults") {
    const int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
    uffdio_api api{};
    api.api = UFFD_API;
    api.features = kFeatureWpUnpopulated | kFeatureWpHugetlbfsShmem;
    if (fd >= 0 && ioctl(fd, UFFDIO_API, &api) == 0) {
      t.uffd = fd;
      t.tracking = trace::WriteTracking::faults;
      return true;
    }
    t.uffd_problem = std::string("userfaultfd with kernel-mode faults: ") + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    if (t.writes == "faults") return false;
  }
  int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd < 0) fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
  if (fd < 0) {
    t.uffd_problem = std::string("userfaultfd: ") + std::strerror(errno);
    return false;
  }
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = kFeatureWpAsync | kFeatureWpUnpopulated | kFeatureWpHugetlbfsShmem;
  if (ioctl(fd, UFFDIO_API, &api) != 0) {
    t.uffd_problem = std::string("userfaultfd asynchronous write-protection (Linux 6.7): ") + std::strerror(errno);
    ::close(fd);
    return false;
  }
  const int pm = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pm < 0) {
    t.uffd_problem = std::string("/proc/self/pagemap: ") + std::strerror(errno);
    ::close(fd);
    return false;
  }
  t.uffd = fd;
  t.pagemap = pm;
  t.tracking = trace::WriteTracking::scan;
  return true;
}

bool write_protect(Tracer& t, uintptr_t from, uintptr_t to) {
  uffdio_writeprotect wp{};
  wp.range = {from, to - from};
  wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
  return ioctl(t.uffd, UFFDIO_WRITEPROTECT, &wp) == 0;
}

Region* region_of(Tracer& t, uintptr_t p);

// A store made a protected page writable: from now on it is compared at every capture.
void mark_written(Region& r, uintptr_t page) {
  const size_t index = (page - r.begin) / kPageBytes;
  if (r.unprotected[index]) return;
  r.unprotected[index] = true;
  r.quiet[index] = 0;
  r.hot.push_back(page);
}

// Faults mode: the thread the kernel reports each first store to a protected page to. It notes the page,
// then lifts the protection, which lets the store go on.
void* fault_handler(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the program's signals are not ours to take
  ++tls_depth;
  Tracer& t = tracer();
  pollfd ready{t.uffd, POLLIN, 0};
  for (;;) {
    if (poll(&ready, 1, -1) < 0) {
      if (errno == EINTR) continue;
      return nullptr;
    }
    uffd_msg messages[16];
    const ssize_t n = ::read(t.uffd, messages, sizeof messages);
    if (n <= 0) continue;
    for (ssize_t i = 0; i < n / static_cast<ssize_t>(sizeof(uffd_msg)); ++i) {
      if (messages[i].event != UFFD_EVENT_PAGEFAULT) continue;
      const uintptr_t page = messages[i].arg.pagefault.address & ~uintptr_t{kPageBytes - 1};
      {
        std::lock_guard lock(t.mutex);
        if (Region* r = region_of(t, page)) mark_written(*r, page);
      }
      uffdio_writeprotect lift{};
      lift.range = {page, kPageBytes};
      lift.mode = 0;  // lifts the protection and wakes the thread that stored
      ioctl(t.uffd, UFFDIO_WRITEPROTECT, &lift);
    }
  }
}

bool protect(Tracer& t, Region& r) {
  if (!t.uffd_tried) open_uffd(t);
  if (t.uffd < 0) return false;
  uffdio_register reg{};
  reg.range = {r.begin, r.end - r.begin};
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  if (ioctl(t.uffd, UFFDIO_REGISTER, &reg) != 0) {
    t.uffd_problem = std::string("userfaultfd cannot protect this mapping: ") + std::strerror(errno);
    return false;
  }
  if (!write_protect(t, r.begin, r.end)) {
    t.uffd_problem = std::string("userfaultfd write-protect: ") + std::strerror(errno);
    uffdio_range range{r.begin, r.end - r.begin};
    ioctl(t.uffd, UFFDIO_UNREGISTER, &range);
    return false;
  }
  if (t.tracking == trace::WriteTracking::faults && !t.fault_thread) {
    pthread_t thread;
    if (pthread_create(&thread, nullptr, fault_handler, nullptr) != 0) return false;
    pthread_detach(thread);
    t.fault_thread = true;
  }
  return true;
}

void record_line(Tracer& t, const Region& r, uintptr_t line, trace::LineHow how) {
  trace::LineRecord rec{};
  rec.region = r.id;
  rec.offset = line - r.begin;
  std::memcpy(rec.bytes, reinterpret_cast<const void*>(line), kLineBytes);
  t.file.append(trace::Kind::line, static_cast<uint8_t>(how), &rec, sizeof rec);
  std::memcpy(r.shadow + (line - r.begin), rec.bytes, kLineBytes);
}

// Records the lines of [from, to) (line-aligned, inside r) that changed since last recorded.
void compare_lines(Tracer& t, const Region& r, uintptr_t from, uintptr_t to, trace::LineHow how) {
  for (uintptr_t line = from; line < to; line += kLineBytes)
    if (std::memcmp(reinterpret_cast<const void*>(line), r.shadow + (line - r.begin), kLineBytes) != 0)
      record_line(t, r, line, how);
}

// Records the changed lines of [page, page + n); true when there were any.
bool compare_page(Tracer& t, const Region& r, uintptr_t page, size_t n) {
  if (std::memcmp(reinterpret_cast<const void*>(page), r.shadow + (page - r.begin), n) == 0) return false;
  compare_lines(t, r, page, page + n, trace::LineHow::plain);
  return true;
}

void compare_pages(Tracer& t, const Region& r, uintptr_t from, uintptr_t to) {
  for (uintptr_t page = from; page < to; page += kPageBytes)
    compare_page(t, r, page, std::min<uintptr_t>(kPageBytes, to - page));
}

// Scan mode: the pages written since they were last protected; the quiet ones are listed.
void scan_written(Tracer& t, Region& r, std::vector<uintptr_t>& quiet) {
  PageRegion written[256];
  uint64_t start = r.begin;
  while (start < r.end) {
    PmScanArg arg{};
    arg.size = sizeof arg;
    arg.flags = kScanCheckWpAsync;
    arg.start = start;
    arg.end = r.end;
    arg.vec = reinterpret_cast<uint64_t>(written);
    arg.vec_len = sizeof written / sizeof written[0];
    arg.category_mask = kPageIsWritten;
    arg.return_mask = kPageIsWritten;
    const long n = ioctl(t.pagemap, kPagemapScan, &arg);
    if (n < 0) {  // cannot happen on a registered range; compare it whole rather than miss a store
      compare_pages(t, r, start, r.end);
      return;
    }
    for (long i = 0; i < n; ++i)
      for (uintptr_t page = written[i].start; page < written[i].end; page += kPageBytes) {
        uint8_t& q = r.quiet[(page - r.begin) / kPageBytes];
        if (compare_page(t, r, page, kPageBytes)) q = 0;
        else if (++q >= kQuietFences) quiet.push_back(page);
      }
    if (arg.walk_end <= start) break;
    start = arg.walk_end;
  }
}

// Protects the quiet pages again, then compares them once more for a store that came between.
void protect_quiet(Tracer& t, Region& r, const std::vector<uintptr_t>& quiet) {
  for (size_t i = 0; i < quiet.size();) {
    size_t j = i + 1;
    while (j < quiet.size() && quiet[j] == quiet[j - 1] + kPageBytes) ++j;
    const uintptr_t from = quiet[i], to = quiet[j - 1] + kPageBytes;
    if (write_protect(t, from, to))
      for (uintptr_t page = from; page < to; page += kPageBytes) {
        compare_page(t, r, page, kPageBytes);
        r.quiet[(page - r.begin) / kPageBytes] = 0;
      }
    i = j;
  }
}

// Every store to the region since its last capture becomes line records. The scan reports the pages
// written since they were last protected: the quiet ones among them are protected again, then compared
// once more for a store that came between.
void capture(Tracer& t, Region& r) {
  if (!r.write_protected) {
    compare_pages(t, r, r.begin, r.end);
    return;
  }
  std::vector<uintptr_t> quiet;
  if (t.tracking == trace::WriteTracking::faults) {
    // Only the pages stores made writable can have changed.
    for (size_t i = 0; i < r.hot.size();) {
      const uintptr_t page = r.hot[i];
      const size_t index = (page - r.begin) / kPageBytes;
      if (compare_page(t, r, page, kPageBytes)) r.quiet[index] = 0;
      else if (++r.quiet[index] >= kQuietFences) {
        quiet.push_back(page);
        r.unprotected[index] = false;
        r.hot[i] = r.hot.back();
        r.hot.pop_back();
        continue;
      }
      ++i;
    }
    std::sort(quiet.begin(), quiet.end());
  } else {
    scan_written(t, r, quiet);
  }
  protect_quiet(t, r, quiet);
}

Region* region_of(Tracer& t, uintptr_t p) {
  for (Region& r : t.regions)
    if (p >= r.begin && p < r.end) return &r;
  return nullptr;
}

uint64_t hash_frames(const uintptr_t* frames, int n) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < n; ++i) {
    h ^= frames[i];
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  }
  return h;
}

// The calling thread's stack without this library's frames, as an id (recorded when first seen).
// The calling thread's stack bounds (where return addresses may be read).
struct ThreadStack {
  uintptr_t low = 0, high = 0;
};
thread_local ThreadStack tls_stack;

const ThreadStack& thread_stack() {
  if (tls_stack.high == 0) {
    pthread_attr_t attr;
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &addr, &size);
      pthread_attr_destroy(&attr);
    }
    tls_stack.low = reinterpret_cast<uintptr_t>(addr);
    tls_stack.high = tls_stack.low + size;
  }
  return tls_stack;
}

// A stack unwound before, kept with where its return addresses lay on the stack: a fence called with the
// same stack pointer and the same words at those places has the same call stack, and is not unwound again
// (unwinding costs microseconds a fence; comparing a few words, nanoseconds).
struct KnownStack {
  uintptr_t sp = 0, site = 0;
  uint32_t id = 0;
  uint32_t slots = 0;
  std::array<std::pair<uintptr_t, uintptr_t>, trace::kMaxFrames> slot{};  // (address, return address there)
};
// Per thread, two ways of 512 sets, by (stack pointer, call site): a recursive program fences at many
// depths, each its own stack pointer.
constexpr size_t kKnownSets = 512;
thread_local std::vector<KnownStack>* tls_known = nullptr;

bool still_there(const KnownStack& k) {
  for (uint32_t i = 0; i < k.slots; ++i)
    if (*reinterpret_cast<const uintptr_t*>(k.slot[i].first) != k.slot[i].second) return false;
  return true;
}

uint32_t stack_id(Tracer& t, uintptr_t site) {
  if (t.stack_depth == 0) return trace::kNoStack;
  const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (tls_known == nullptr)
    tls_known = new std::vector<KnownStack>(2 * kKnownSets);  // lives as long as the thread may fence
  const size_t set = ((sp >> 4) ^ (site * 0x9e3779b97f4a7c15ULL >> 20)) % kKnownSets;
  KnownStack* way = &(*tls_known)[2 * set];
  for (int w = 0; w < 2; ++w)
    if (way[w].id != 0 && way[w].sp == sp && way[w].site == site && still_there(way[w])) {
      if (w == 1) std::swap(way[0], way[1]);  // most recently used first
      return way[0].id;
    }
  void* raw[trace::kMaxFrames + 8];
  const int got = backtrace(raw, static_cast<int>(std::min<unsigned>(t.stack_depth, trace::kMaxFrames) + 8));
  uintptr_t frames[trace::kMaxFrames + 8];
  int n = 0;
  for (int i = 0; i < got; ++i) {
    const auto a = reinterpret_cast<uintptr_t>(raw[i]);
    if (n == 0 && a >= t.own_begin && a < t.own_end) continue;
    if (n < static_cast<int>(std::min<unsigned>(t.stack_depth, trace::kMaxFrames))) frames[n++] = a;
  }
  uint32_t id = 0;
  const uint64_t h = hash_frames(frames, n);
  auto& ids = t.stack_ids[h];
  for (uint32_t candidate : ids) {
    const auto& st = t.stacks[candidate - 1];
    if (st.size() == static_cast<size_t>(n) && std::equal(st.begin(), st.end(), frames)) id = candidate;
  }
  if (id == 0) {
    t.stacks.emplace_back(frames, frames + n);
    id = static_cast<uint32_t>(t.stacks.size());
    ids.push_back(id);
    trace::StackRecord rec{id, static_cast<uint32_t>(n)};
    t.file.append(trace::Kind::stack, 0, &rec, sizeof rec, frames, sizeof(uintptr_t) * static_cast<size_t>(n));
  }
  // Where each frame's return address lies (searched upward from here); cached only when all were found
  // (and the outermost frames, whose addresses the unwinder may not have read from the stack, are part of
  // the slots all the same: a stack whose words differ anywhere there is unwound again).
  const ThreadStack& bounds = thread_stack();
  KnownStack fresh;
  fresh.sp = sp;
  fresh.site = site;
  fresh.id = id;
  uintptr_t at = sp;
  for (int i = 0; i < got && fresh.slots < trace::kMaxFrames; ++i) {
    const auto a = reinterpret_cast<uintptr_t>(raw[i]);
    if (i == 0 && a >= t.own_begin && a < t.own_end) continue;
    while (at + sizeof(uintptr_t) <= bounds.high && *reinterpret_cast<const uintptr_t*>(at) != a &&
           at - sp < (64u << 10))
      at += sizeof(uintptr_t);
    if (at + sizeof(uintptr_t) > bounds.high || at - sp >= (64u << 10)) return id;  // not found: not cached
    fresh.slot[fresh.slots++] = {at, a};
    at += sizeof(uintptr_t);
  }
  if (bounds.high != 0) {
    way[1] = way[0];
    way[0] = fresh;
  }
  return id;
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

int write_module(dl_phdr_info* info, size_t, void* data) {
  auto& t = *static_cast<Tracer*>(data);
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty()) path = self_exe();  // only the executable has no name
  if (path.empty() || path.find("linux-vdso") != std::string::npos) return 0;
  std::vector<uint64_t> segments;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    segments.push_back(info->dlpi_addr + ph.p_vaddr);
    segments.push_back(info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  std::vector<std::byte> payload(sizeof(uint64_t) * segments.size() + path.size());
  std::memcpy(payload.data(), segments.data(), sizeof(uint64_t) * segments.size());
  std::memcpy(payload.data() + sizeof(uint64_t) * segments.size(), path.data(), path.size());
  trace::ModuleRecord rec{info->dlpi_addr, static_cast<uint32_t>(segments.size() / 2),
                          static_cast<uint32_t>(path.size())};
  t.file.append(trace::Kind::module, 0, &rec, sizeof rec, payload.data(), payload.size());
  return 0;
}

int find_own(dl_phdr_info* info, size_t, void* data) {
  auto& t = *static_cast<Tracer*>(data);
  const auto probe = reinterpret_cast<uintptr_t>(&find_own);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t b = info->dlpi_addr + ph.p_vaddr, e = b + ph.p_memsz;
    if (probe >= b && probe < e) {
      t.own_begin = b;
      t.own_end = e;
      return 1;
    }
  }
  return 0;
}

bool is_pool_file(Tracer& t, int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  const std::pair<uint64_t, uint64_t> id{st.st_dev, st.st_ino};
  for (auto& p : t.pools)
    if (p == id) return true;
  // A --pool file the program created after it started: compare paths.
  char link[64], target[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  const std::string path(target, static_cast<size_t>(n));
  for (const auto& p : t.pool_paths) {
    char* real = realpath(p.c_str(), nullptr);
    const bool same = real != nullptr && path == real;
    std::free(real);
    if (same) return true;
  }
  return false;
}

void fork_child() { tracer().active = false; }  // the child is not the traced program: its events are not ours

__attribute__((constructor)) void start() {
  const char* file = getenv("PMLAB_TRACE_FILE");
  const char* pid = getenv("PMLAB_TRACE_PID");
  if (file == nullptr || pid == nullptr || std::strtoll(pid, nullptr, 10) != getpid()) return;
  Tracer& t = tracer();
  if (const char* d = getenv("PMLAB_TRACE_DOMAIN")) t.eadr = std::strcmp(d, "eadr") == 0;
  if (const char* s = getenv("PMLAB_TRACE_STACK_DEPTH"))
    t.stack_depth = static_cast<unsigned>(std::strtoul(s, nullptr, 10));
  if (const char* w = getenv("PMLAB_TRACE_WRITES")) t.writes = w;
  if (const char* pools = getenv("PMLAB_TRACE_POOLS")) {
    std::string all = pools;
    size_t from = 0;
    while (from <= all.size()) {
      const size_t colon = all.find(':', from);
      std::string p = all.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
      if (!p.empty()) {
        struct stat st {};
        if (stat(p.c_str(), &st) == 0) t.pools.emplace_back(st.st_dev, st.st_ino);
        t.pool_paths.push_back(p);
      }
      if (colon == std::string::npos) break;
      from = colon + 1;
    }
  }
  if (!t.file.open(file)) {
    std::fprintf(stderr, "pmlab-trace: cannot write the trace %s: %s\n", file, std::strerror(errno));
    return;
  }
  dl_iterate_phdr(find_own, &t);
  void* warm[4];
  backtrace(warm, 4);  // loads the unwinder now, not inside the first fence
  pthread_atfork(nullptr, nullptr, fork_child);
  t.active = true;
}

__attribute__((destructor)) void stop() { exiting(0); }

}  // namespace

bool active() noexcept { return tracer().active; }
bool eadr() noexcept { return tracer().eadr; }

Outermost::Outermost() noexcept : outermost_(tls_depth++ == 0 && tracer().active) {}
Outermost::~Outermost() { --tls_depth; }

void mapped(void* address, size_t length, int fd, off_t offset, bool from_pmdk) noexcept {
  Tracer& t = tracer();
  if (!t.active || length == 0) return;
  ++tls_depth;
  std::lock_guard lock(t.mutex);
  if (!from_pmdk && !is_pool_file(t, fd)) {
    --tls_depth;
    return;
  }
  struct stat st {};
  fstat(fd, &st);
  if (!t.modules_written) {
    dl_iterate_phdr(write_module, &t);
    t.modules_written = true;
  }
  Region r;
  r.id = t.next_region++;
  r.begin = reinterpret_cast<uintptr_t>(address);
  r.end = r.begin + ((length + kPageBytes - 1) & ~size_t{kPageBytes - 1});
  void* shadow =
      raw_mmap(nullptr, r.end - r.begin, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mmap_failed(shadow)) {
    note(t, "cannot allocate a shadow of " + std::to_string(r.end - r.begin) + " bytes: the mapping is not traced");
    --tls_depth;
    return;
  }
  r.shadow = static_cast<std::byte*>(shadow);
  // The file as it is now is the durable image the run starts from.
  size_t done = 0;
  while (done < length) {
    const ssize_t n = pread(fd, r.shadow + done, length - done, offset + static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const std::string path = [&] {
    char link[64], target[4096];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, target, sizeof target - 1);
    return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string("?");
  }();
  trace::RegionRecord rec{r.id,
                          static_cast<uint32_t>(path.size()),
                          r.begin,
                          length,
                          static_cast<uint64_t>(offset),
                          static_cast<uint64_t>(st.st_size),
                          st.st_dev,
                          st.st_ino};
  t.file.append(trace::Kind::region, 0, &rec, sizeof rec, path.data(), path.size());
  static const std::byte zeros[kPageBytes] = {};
  for (size_t off = 0; off < length; off += kPageBytes) {
    const size_t n = std::min<size_t>(kPageBytes, length - off);
    if (std::memcmp(r.shadow + off, zeros, n) == 0) continue;
    trace::BasePageRecord page{r.id, 0, off};
    std::byte content[kPageBytes] = {};
    std::memcpy(content, r.shadow + off, n);
    t.file.append(trace::Kind::base_page, 0, &page, sizeof page, content, sizeof content);
  }
  r.quiet.assign((r.end - r.begin) / kPageBytes, 0);
  r.unprotected.assign((r.end - r.begin) / kPageBytes, false);
  r.write_protected = protect(t, r);
  t.file.header()->write_tracking =
      static_cast<uint32_t>(r.write_protected ? t.tracking : trace::WriteTracking::compare);
  if (!r.write_protected)
    note(t, "stores to " + path + " found by comparing every page at every fence (" + t.uffd_problem + ")");
  else if (t.tracking == trace::WriteTracking::scan && !t.uffd_problem.empty() && t.regions.empty())
    note(t, "stores found by scanning write-protected pages at every fence (" + t.uffd_problem + ")");
  // What the program stored between the map and now (nothing, but for another thread) is captured next time.
  t.regions.push_back(r);
  --tls_depth;
}

void unmapping(void* address, size_t length) noexcept {
  Tracer& t = tracer();
  if (!t.active || t.regions.empty()) return;
  ++tls_depth;
  std::lock_guard lock(t.mutex);
  const auto from = reinterpret_cast<uintptr_t>(address), to = from + length;
  for (size_t i = 0; i < t.regions.size();) {
    Region& r = t.regions[i];
    if (r.end <= from || r.begin >= to) {
      ++i;
      continue;
    }
    capture(t, r);
    trace::UnmapRecord rec{r.id, 0};
    t.file.append(trace::Kind::unmap, 0, &rec, sizeof rec);
    if (r.write_protected) {
      uffdio_range range{r.begin, r.end - r.begin};
      ioctl(t.uffd, UFFDIO_UNREGISTER, &range);
    }
    syscall(SYS_munmap, r.shadow, r.end - r.begin);
    t.regions.erase(t.regions.begin() + static_cast<std::ptrdiff_t>(i));
  }
  --tls_depth;
}

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
void writeback_locked(Tracer& t, const void* p, size_t n, trace::WritebackKind kind, uintptr_t site) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  Region* r = n == 0 ? nullptr : region_of(t, a);
  if (r == nullptr) {
    trace::WritebackRecord rec{trace::kNoRegion, 0, a, n, site};
    t.file.append(trace::Kind::writeback, static_cast<uint8_t>(kind), &rec, sizeof rec);
    return;
  }
  const uintptr_t from = a & ~uintptr_t{kLineBytes - 1};
  const uintptr_t to = std::min<uintptr_t>(r->end, (a + n + kLineBytes - 1) & ~uintptr_t{kLineBytes - 1});
  if (kind == trace::WritebackKind::non_temporal) {
    // Non-temporal stores keep aligned words whole only on whole lines; partial edge lines went through
    // the cache as plain stores.
    for (uintptr_t line = from; line < to; line += kLineBytes) {
      const bool whole = line >= a && line + kLineBytes <= a + n;
      compare_lines(t, *r, line, line + kLineBytes, whole ? trace::LineHow::non_temporal : trace::LineHow::plain);
    }
  } else {
    compare_lines(t, *r, from, to, trace::LineHow::plain);
  }
  trace::WritebackRecord rec{r->id, 0, from - r->begin, to - from, site};
  t.file.append(trace::Kind::writeback, static_cast<uint8_t>(kind), &rec, sizeof rec);
  if (a + n > r->end) writeback_locked(t, reinterpret_cast<const void*>(r->end), a + n - r->end, kind, site);
}

void fence_locked(Tracer& t, uintptr_t site) {
  for (Region& r : t.regions) capture(t, r);
  trace::FenceRecord rec{site, stack_id(t, site), 0};
  t.file.append(trace::Kind::fence, 0, &rec, sizeof rec);
}
}  // namespace

void writeback(const void* p, size_t n, trace::WritebackKind kind, uintptr_t site) noexcept {
  Tracer& t = tracer();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active) writeback_locked(t, p, n, kind, site);
  }
  --tls_depth;
}

void stored_non_temporal(const void* p, size_t n, uintptr_t site) noexcept {
  writeback(p, n, trace::WritebackKind::non_temporal, site);
}

void fence(uintptr_t site) noexcept {
  Tracer& t = tracer();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active) fence_locked(t, site);
  }
  --tls_depth;
}

void persist(const void* p, size_t n, uintptr_t site) noexcept {
  Tracer& t = tracer();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active) {
      writeback_locked(t, p, n, trace::WritebackKind::flush, site);
      fence_locked(t, site);
    }
  }
  --tls_depth;
}

void exiting(int status) noexcept {
  Tracer& t = tracer();
  ++tls_depth;
  {
    std::lock_guard lock(t.mutex);
    if (t.active && !t.exited) {
      t.exited = true;
      for (Region& r : t.regions) capture(t, r);
      dl_iterate_phdr(write_module, &t);
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
