#include "pmlab-trace/write_tracking.hpp"

#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>

#include <cerrno>

namespace pmlab_trace::detail {
namespace {

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

}  // namespace

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

namespace {

void record_line(Tracer& t, const Region& r, uintptr_t line, trace::LineHow how) {
  trace::LineRecord rec{};
  rec.region = r.id;
  rec.offset = line - r.begin;
  std::memcpy(rec.bytes, reinterpret_cast<const void*>(line), kLineBytes);
  t.file.append(trace::Kind::line, static_cast<uint8_t>(how), &rec, sizeof rec);
  std::memcpy(r.shadow + (line - r.begin), rec.bytes, kLineBytes);
}

}  // namespace

void compare_lines(Tracer& t, const Region& r, uintptr_t from, uintptr_t to, trace::LineHow how) {
  for (uintptr_t line = from; line < to; line += kLineBytes)
    if (std::memcmp(reinterpret_cast<const void*>(line), r.shadow + (line - r.begin), kLineBytes) != 0)
      record_line(t, r, line, how);
}

namespace {

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
        uint16_t& q = r.quiet[(page - r.begin) / kPageBytes];
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
        r.protected_again[(page - r.begin) / kPageBytes] = true;
      }
    i = j;
  }
}

}  // namespace

// The scan reports the pages written since they were last protected: the quiet ones among them are
// protected again, then compared once more for a store that came between.
void capture(Tracer& t, Region& r) {
  if (!r.write_protected) {
    compare_pages(t, r, r.begin, r.end);
    return;
  }
  std::vector<uintptr_t> quiet;
  if (t.tracking == trace::WriteTracking::faults) {
    // Only the pages stores made writable can have changed.
    const bool crowded = r.hot.size() > kMaxHotPages;
    for (size_t i = 0; i < r.hot.size();) {
      const uintptr_t page = r.hot[i];
      const size_t index = (page - r.begin) / kPageBytes;
      if (compare_page(t, r, page, kPageBytes)) r.quiet[index] = 0;
      else if (++r.quiet[index] >= (!crowded && r.protected_again[index] ? kReturningQuietFences : kQuietFences)) {
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

}  // namespace pmlab_trace::detail
