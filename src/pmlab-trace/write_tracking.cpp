#include "pmlab-trace/write_tracking.hpp"

#include "pmlab-trace/line_compare.hpp"
#include "pmlab-trace/real.hpp"

#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <bit>
#include <cerrno>
#include <cstdio>

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

// userfaultfd write-protection, in the first of these ways that works (or the one PMLAB_TRACE_WRITES names):
//  - signals: each first store to a protected page is a SIGBUS to the thread that stored, whose handler
//    (the runtime's) notes the page and lifts the protection. No thread switch, no privilege. A store the
//    kernel makes (read into a pool) cannot take a signal and would fail with EFAULT: the C library calls
//    that make one are interposed to lift the protection first (kernel_will_store).
//  - faults: the kernel reports each first store, also one a system call makes, to a thread of the runtime
//    and waits for it. Needs a userfaultfd that takes kernel-mode faults (privileged, or
//    vm.unprivileged_userfaultfd = 1), and each fault is a switch to that thread and back.
//  - scan: the kernel marks a page written and a scan finds it at every capture, walking the region's page
//    tables (asynchronous write-protection, Linux 6.7).
bool open_reported(Tracer& t, bool as_signals) {
  int fd =
      static_cast<int>(raw_syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | (as_signals ? UFFD_USER_MODE_ONLY : 0)));
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = kFeatureWpUnpopulated | kFeatureWpHugetlbfsShmem | (as_signals ? UFFD_FEATURE_SIGBUS : 0);
  if (fd >= 0 && ioctl(fd, UFFDIO_API, &api) == 0) {
    t.uffd = fd;
    t.tracking = as_signals ? trace::WriteTracking::signals : trace::WriteTracking::faults;
    return true;
  }
  t.uffd_problem =
      std::string(as_signals ? "userfaultfd with faults as signals: " : "userfaultfd with kernel-mode faults: ") +
      std::strerror(errno);
  if (fd >= 0) ::close(fd);
  return false;
}

bool open_scanned(Tracer& t) {
  int fd = static_cast<int>(raw_syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd < 0) fd = static_cast<int>(raw_syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
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

bool open_uffd(Tracer& t) {
  t.uffd_tried = true;
  const std::string& w = t.writes;
  if (w == "compare") {
    t.uffd_problem = "PMLAB_TRACE_WRITES=compare";
    return false;
  }
  if (w.empty() || w == "signals") {
    if (open_reported(t, true)) return true;
    if (!w.empty()) return false;
  }
  if (w.empty() || w == "faults") {
    if (open_reported(t, false)) return true;
    if (!w.empty()) return false;
  }
  return open_scanned(t);
}

bool write_protect(Tracer& t, uintptr_t from, uintptr_t to) {
  uffdio_writeprotect wp{};
  wp.range = {from, to - from};
  wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
  return ioctl(t.uffd, UFFDIO_WRITEPROTECT, &wp) == 0;
}

// How many quiet captures a written page stays unprotected for (state.hpp says why).
uint16_t quiet_fences(const Tracer& t, bool crowded, bool returns_soon) {
  if (t.tracking == trace::WriteTracking::signals)
    return crowded || !returns_soon ? kSignalQuietFences : kSignalReturningQuietFences;
  return crowded || !returns_soon ? kQuietFences : kReturningQuietFences;
}

// A store made a protected page writable: from now on it is compared at every capture. (r.hot has room for
// every page of the region: a signal handler allocates nothing.)
void mark_written(const Tracer& t, Region& r, uintptr_t page) {
  const size_t index = (page - r.begin) / kPageBytes;
  if (r.unprotected[index]) return;
  r.unprotected[index] = true;
  r.quiet[index] = 0;
  r.hot.push_back(page);
  if (r.protected_at[index] != 0)
    r.returns_soon[index] = r.captures - r.protected_at[index] < quiet_fences(t, false, true);
}

// Lets a store to `page` go on (and wakes the thread the kernel holds for it, in faults mode).
void lift(const Tracer& t, uintptr_t page, size_t bytes = kPageBytes) {
  uffdio_writeprotect lift{};
  lift.range = {page, bytes};
  lift.mode = 0;
  ioctl(t.uffd, UFFDIO_WRITEPROTECT, &lift);
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
        if (Region* r = region_of(t, page)) mark_written(t, *r, page);
      }
      lift(t, page);
    }
  }
}

}  // namespace

int libc_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  static const auto libc = real<int (*)(int, const struct sigaction*, struct sigaction*)>("sigaction", nullptr);
  if (libc == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return libc(sig, act, old);
}

void forward_signal(struct sigaction& own, int sig, siginfo_t* info, void* context) {
  if (own.sa_flags & SA_SIGINFO) {
    const auto handler = own.sa_sigaction;
    if (own.sa_flags & SA_RESETHAND) own.sa_handler = SIG_DFL;
    if (handler != nullptr) handler(sig, info, context);
    return;
  }
  const auto handler = own.sa_handler;
  if (handler == SIG_IGN && info->si_code <= 0) return;  // sent, and ignored
  if (handler == SIG_DFL || handler == SIG_IGN) {
    // A fault or a trap comes again when the handler returns, a sent signal is raised again: either way the
    // default action, as without the runtime (a fault the program ignores kills it all the same).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    libc_sigaction(sig, &dfl, nullptr);
    if (info->si_code <= 0 || sig == SIGTRAP) raise(sig);
    return;
  }
  if (own.sa_flags & SA_RESETHAND) own.sa_handler = SIG_DFL;
  handler(sig);
}

namespace {

// Signals mode: the kernel turns a store to a protected page into a SIGBUS at the storing instruction. The
// page is noted and the protection lifted; returning runs the store again. A SIGBUS at a page the runtime
// does not protect (past a file's end, a sent one) is the program's. A page another thread lifted between
// this thread's fault and its handler is stored to again on return; a page that faults twice in a row on
// one thread while unprotected, with no protection of it in between, is not a write fault. (The protection
// counts: a thread that loses that race on a page twice, the page protected again in between, faults
// twice in a row while it is unprotected, and both are write faults.)
// Set while the runtime reads a persistent mapping under its lock: a SIGBUS then is its own read past a
// file's end, which it cannot take (the lock is held), so the program stops with a message, not a hang.
PMLAB_TRACE_STATIC_TLS thread_local bool tls_reading = false;
PMLAB_TRACE_STATIC_TLS thread_local uintptr_t tls_refaulted = 0;
PMLAB_TRACE_STATIC_TLS thread_local uint32_t tls_refaulted_protection = 0;
void on_sigbus(int sig, siginfo_t* info, void* context) {
  if (tls_reading) {
    static const char said[] = "pmlab-trace: the runtime read a persistent mapping past its file's end\n";
    (void)!::write(2, said, sizeof said - 1);
    _exit(70);
  }
  const int saved_errno = errno;
  Tracer& t = tracer();
  const uintptr_t page = reinterpret_cast<uintptr_t>(info->si_addr) & ~uintptr_t{kPageBytes - 1};
  bool ours = false;
  if (info->si_code == BUS_ADRERR) {
    std::lock_guard lock(t.mutex);
    if (Region* r = region_of(t, page); r != nullptr && r->write_protected) {
      const size_t index = (page - r->begin) / kPageBytes;
      const bool lifted = r->unprotected[index];
      const uint32_t protection = r->protected_at[index];
      ours = !lifted || tls_refaulted != page || tls_refaulted_protection != protection;
      tls_refaulted = lifted ? page : 0;
      tls_refaulted_protection = protection;
      mark_written(t, *r, page);
    }
  }
  if (ours) lift(t, page);
  errno = saved_errno;
  if (!ours) forward_signal(tracer().program_sigbus, sig, info, context);
}

}  // namespace

namespace {

// Starts what takes the faults of protected pages (the runtime's thread, or its SIGBUS handler), before any
// page is protected: a store to a page protected with nothing to take its fault would wait forever, or die.
bool take_faults(Tracer& t) {
  if (t.tracking == trace::WriteTracking::faults && !t.fault_thread) {
    pthread_t thread;
    if (const int rc = pthread_create(&thread, nullptr, fault_handler, nullptr); rc != 0) {
      t.uffd_problem = std::string("the runtime's fault thread: ") + std::strerror(rc);
      return false;
    }
    pthread_detach(thread);
    t.fault_thread = true;
  }
  if (t.tracking == trace::WriteTracking::signals && !t.takes_sigbus.load()) {
    struct sigaction mine {};
    mine.sa_sigaction = on_sigbus;
    mine.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&mine.sa_mask);
    if (libc_sigaction(SIGBUS, &mine, &t.program_sigbus) != 0) {
      t.uffd_problem = std::string("SIGBUS handler: ") + std::strerror(errno);
      return false;
    }
    t.takes_sigbus.store(true);
  }
  return true;
}

}  // namespace

bool protect(Tracer& t, Region& r) {
  if (!t.uffd_tried) open_uffd(t);
  if (t.uffd < 0 || !take_faults(t)) return false;
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
  return true;
}

namespace {

// Calls f(region, page index) for each page of [from, to) in a write-protected region.
template <class F>
void each_protected_page(Tracer& t, uintptr_t from, uintptr_t to, F&& f) {
  for (Region& r : t.regions) {
    if (!r.write_protected || to <= r.begin || from >= r.end) continue;
    for (uintptr_t page = std::max(from, r.begin) & ~uintptr_t{kPageBytes - 1}; page < std::min(to, r.end);
         page += kPageBytes)
      f(r, (page - r.begin) / kPageBytes);
  }
}

}  // namespace

void will_store(Tracer& t, uintptr_t from, uintptr_t to) {
  if (t.tracking != trace::WriteTracking::signals && t.tracking != trace::WriteTracking::faults) return;
  uintptr_t run = 0, run_end = 0;  // the protected pages met so far, not lifted yet
  each_protected_page(t, from, to, [&](Region& r, size_t index) {
    if (r.unprotected[index]) return;
    const uintptr_t page = r.begin + index * kPageBytes;
    mark_written(t, r, page);
    if (page != run_end) {
      if (run != run_end) lift(t, run, run_end - run);
      run = page;
    }
    run_end = page + kPageBytes;
  });
  if (run != run_end) lift(t, run, run_end - run);
}

void kernel_will_store(Tracer& t, uintptr_t from, uintptr_t to) {
  each_protected_page(t, from, to, [](Region& r, size_t index) { ++r.kernel_stores[index]; });
  will_store(t, from, to);
}

void kernel_stored(Tracer& t, uintptr_t from, uintptr_t to) {
  each_protected_page(t, from, to, [](Region& r, size_t index) {
    if (r.kernel_stores[index] > 0) --r.kernel_stores[index];
  });
}

void record_line(Tracer& t, const Region& r, uintptr_t line, trace::LineHow how, const std::byte* bytes) {
  trace::LineRecord rec{};
  rec.region = r.id;
  rec.offset = line - r.begin;
  std::memcpy(rec.bytes, bytes != nullptr ? bytes : reinterpret_cast<const std::byte*>(line), kLineBytes);
  t.file.append(trace::Kind::line, static_cast<uint8_t>(how), &rec, sizeof rec);
  std::memcpy(r.shadow + (line - r.begin), rec.bytes, kLineBytes);
}

uint64_t changed_lines(const std::byte* a, const std::byte* b, size_t lines) {
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return avx2 ? changed_lines_avx2(a, b, lines) : changed_lines_memcmp(a, b, lines);
}

namespace {

// Records the changed lines among the `lines` (at most 64) from `from`; true when there were any.
bool record_changed(Tracer& t, const Region& r, uintptr_t from, size_t lines, trace::LineHow how) {
  const uint64_t changed = changed_lines(reinterpret_cast<const std::byte*>(from), r.shadow + (from - r.begin), lines);
  for (uint64_t rest = changed; rest != 0; rest &= rest - 1)
    record_line(t, r, from + static_cast<uintptr_t>(std::countr_zero(rest)) * kLineBytes, how);
  return changed != 0;
}

}  // namespace

void compare_lines(Tracer& t, const Region& r, uintptr_t from, uintptr_t to, trace::LineHow how) {
  constexpr uintptr_t kChunk = 64 * kLineBytes;
  for (uintptr_t at = from; at < to; at += kChunk)
    record_changed(t, r, at, (std::min(to - at, kChunk)) / kLineBytes, how);
}

off_t file_size_now(const Region& r) {
  struct stat st {};
  if (stat(r.path.c_str(), &st) != 0 || st.st_dev != r.record.device || st.st_ino != r.record.inode) {
    char link[80];
    std::snprintf(link, sizeof link, "/proc/self/map_files/%lx-%lx", static_cast<unsigned long>(r.begin),
                  static_cast<unsigned long>(r.end));
    if (stat(link, &st) != 0) return -1;
  }
  return S_ISREG(st.st_mode) ? st.st_size : -1;
}

namespace {

// Records the changed lines of [page, page + n); true when there were any.
bool compare_page(Tracer& t, const Region& r, uintptr_t page, size_t n) {
  tls_reading = true;
  const bool changed = record_changed(t, r, page, n / kLineBytes, trace::LineHow::plain);
  tls_reading = false;
  return changed;
}

// Where the file `r` maps ends now, as an address inside r: a mapping may reach past its file's end (TDB maps
// ahead of growing its file), and a read there is a SIGBUS.
uintptr_t file_end_in(const Region& r) {
  const off_t size = file_size_now(r);
  if (size < 0) return r.end;
  const uint64_t offset = r.record.file_offset, in_file = static_cast<uint64_t>(size) > offset
                                                              ? static_cast<uint64_t>(size) - offset + kPageBytes - 1
                                                              : 0;
  return r.begin + std::min<uint64_t>(r.end - r.begin, in_file / kPageBytes * kPageBytes);
}

void compare_pages(Tracer& t, const Region& r, uintptr_t from, uintptr_t to) {
  to = std::min(to, file_end_in(r));
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
        r.protected_at[(page - r.begin) / kPageBytes] = r.captures;
      }
    i = j;
  }
}

}  // namespace

// The scan reports the pages written since they were last protected: the quiet ones among them are
// protected again, then compared once more for a store that came between.
void capture(Tracer& t, Region& r) {
  if (r.written_by_calls) return;
  ++r.captures;
  if (!r.write_protected) {
    compare_pages(t, r, r.begin, r.end);
    return;
  }
  std::vector<uintptr_t> quiet;
  if (t.tracking == trace::WriteTracking::faults || t.tracking == trace::WriteTracking::signals) {
    // Only the pages stores made writable can have changed.
    const bool crowded = r.hot.size() > kMaxHotPages;
    for (size_t i = 0; i < r.hot.size();) {
      const uintptr_t page = r.hot[i];
      const size_t index = (page - r.begin) / kPageBytes;
      if (compare_page(t, r, page, kPageBytes) || r.kernel_stores[index] > 0) r.quiet[index] = 0;
      else if (++r.quiet[index] >= quiet_fences(t, crowded, r.returns_soon[index])) {
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
