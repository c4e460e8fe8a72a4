#include "pmlab-trace/tracer.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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
    if (!grow(64u << 20)) return false;
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
    if (ftruncate(fd_, static_cast<off_t>(total)) != 0) { /* the header's count still bounds the records */ }
    ::close(fd_);
  }

 private:
  bool grow(size_t bytes) {
    if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0) return false;
    void* p = base_ == nullptr ? raw_mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0)
                               : reinterpret_cast<void*>(syscall(SYS_mremap, base_, capacity_, bytes, MREMAP_MAYMOVE));
    if (mmap_failed(p)) return false;
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
  std::byte* shadow = nullptr;  // the content last recorded
  bool write_protected = false;  // userfaultfd tracks its written pages; else every page is compared
};

struct Tracer {
  std::mutex mutex;
  bool active = false;
  bool eadr = false;
  unsigned stack_depth = 24;
  bool force_compare = false;
  TraceFile file;
  std::vector<Region> regions;
  uint32_t next_region = 0;
  std::vector<std::pair<uint64_t, uint64_t>> pools;  // (device, inode) of the --pool files
  std::vector<std::string> pool_paths;
  int uffd = -1, pagemap = -1;
  bool uffd_tried = false;
  std::string uffd_problem;
  uintptr_t own_begin = 0, own_end = 0;  // this library's code, left out of stacks
  std::unordered_map<uint64_t, std::vector<uint32_t>> stack_ids;  // hash -> ids
  std::vector<std::vector<uintptr_t>> stacks;                      // id - 1 -> frames
  bool modules_written = false;
  bool exited = false;
};

Tracer& tracer() {
  static Tracer* t = new Tracer;  // never destroyed: events may come from destructors after ours
  return *t;
}

void note(Tracer& t, const std::string& text) { t.file.append(trace::Kind::note, 0, text.data(), text.size()); }

// userfaultfd with asynchronous write-protection: no thread handles faults, the kernel only marks pages.
bool open_uffd(Tracer& t) {
  t.uffd_tried = true;
  if (t.force_compare) {
    t.uffd_problem = "PMLAB_TRACE_WRITES=compare";
    return false;
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
  return true;
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
  uffdio_writeprotect wp{};
  wp.range = {r.begin, r.end - r.begin};
  wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
  if (ioctl(t.uffd, UFFDIO_WRITEPROTECT, &wp) != 0) {
    t.uffd_problem = std::string("userfaultfd write-protect: ") + std::strerror(errno);
    uffdio_range range{r.begin, r.end - r.begin};
    ioctl(t.uffd, UFFDIO_UNREGISTER, &range);
    return false;
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

void compare_pages(Tracer& t, const Region& r, uintptr_t from, uintptr_t to) {
  for (uintptr_t page = from; page < to; page += kPageBytes) {
    const size_t n = std::min<uintptr_t>(kPageBytes, to - page);
    if (std::memcmp(reinterpret_cast<const void*>(page), r.shadow + (page - r.begin), n) != 0)
      compare_lines(t, r, page, page + n, trace::LineHow::plain);
  }
}

// Every store to the region since its last capture becomes line records.
void capture(Tracer& t, const Region& r) {
  if (!r.write_protected) {
    compare_pages(t, r, r.begin, r.end);
    return;
  }
  PageRegion written[256];
  uint64_t start = r.begin;
  while (start < r.end) {
    PmScanArg arg{};
    arg.size = sizeof arg;
    arg.flags = kScanWpMatching | kScanCheckWpAsync;
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
    for (long i = 0; i < n; ++i) compare_pages(t, r, written[i].start, written[i].end);
    if (arg.walk_end <= start) break;
    start = arg.walk_end;
  }
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
uint32_t stack_id(Tracer& t) {
  if (t.stack_depth == 0) return trace::kNoStack;
  void* raw[trace::kMaxFrames + 8];
  const int got = backtrace(raw, static_cast<int>(std::min<unsigned>(t.stack_depth, trace::kMaxFrames) + 8));
  uintptr_t frames[trace::kMaxFrames + 8];
  int n = 0;
  for (int i = 0; i < got; ++i) {
    const auto a = reinterpret_cast<uintptr_t>(raw[i]);
    if (n == 0 && a >= t.own_begin && a < t.own_end) continue;
    if (n < static_cast<int>(std::min<unsigned>(t.stack_depth, trace::kMaxFrames))) frames[n++] = a;
  }
  const uint64_t h = hash_frames(frames, n);
  auto& ids = t.stack_ids[h];
  for (uint32_t id : ids) {
    const auto& s = t.stacks[id - 1];
    if (s.size() == static_cast<size_t>(n) && std::equal(s.begin(), s.end(), frames)) return id;
  }
  t.stacks.emplace_back(frames, frames + n);
  const auto id = static_cast<uint32_t>(t.stacks.size());
  ids.push_back(id);
  trace::StackRecord rec{id, static_cast<uint32_t>(n)};
  t.file.append(trace::Kind::stack, 0, &rec, sizeof rec, frames, sizeof(uintptr_t) * static_cast<size_t>(n));
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
  trace::ModuleRecord rec{info->dlpi_addr, static_cast<uint32_t>(segments.size() / 2), static_cast<uint32_t>(path.size())};
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
  struct stat st{};
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
  if (const char* s = getenv("PMLAB_TRACE_STACK_DEPTH")) t.stack_depth = static_cast<unsigned>(std::strtoul(s, nullptr, 10));
  if (const char* w = getenv("PMLAB_TRACE_WRITES")) t.force_compare = std::strcmp(w, "compare") == 0;
  if (const char* pools = getenv("PMLAB_TRACE_POOLS")) {
    std::string all = pools;
    size_t from = 0;
    while (from <= all.size()) {
      const size_t colon = all.find(':', from);
      std::string p = all.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
      if (!p.empty()) {
        struct stat st{};
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
  struct stat st{};
  fstat(fd, &st);
  if (!t.modules_written) {
    dl_iterate_phdr(write_module, &t);
    t.modules_written = true;
  }
  Region r;
  r.id = t.next_region++;
  r.begin = reinterpret_cast<uintptr_t>(address);
  r.end = r.begin + ((length + kPageBytes - 1) & ~size_t{kPageBytes - 1});
  void* shadow = raw_mmap(nullptr, r.end - r.begin, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
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
  trace::RegionRecord rec{r.id, static_cast<uint32_t>(path.size()), r.begin, length, static_cast<uint64_t>(offset),
                          static_cast<uint64_t>(st.st_size), st.st_dev, st.st_ino};
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
  r.write_protected = protect(t, r);
  if (!r.write_protected) t.file.header()->write_tracking = static_cast<uint32_t>(trace::WriteTracking::compare);
  if (!r.write_protected)
    note(t, "stores to " + path + " found by comparing every page at every fence (" + t.uffd_problem + ")");
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
  for (const Region& r : t.regions) capture(t, r);
  trace::FenceRecord rec{site, stack_id(t), 0};
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
      for (const Region& r : t.regions) capture(t, r);
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
