// The calls a traced program makes that the tracer must see, interposed by preloading: the C library's
// mappings (which files are persistent memory), libpmem's and libpmem2's persistence (write-backs, fences,
// persisting copies), and the entry points of pmlab/trace.h for programs with their own flush macros.
//
// Each forwards to the real function, so the program behaves as without the tracer, and reports after it;
// but a write-back is reported before the real flush, which may evict the lines the report compares, and a
// copy names its destination before it runs, so that its stores find their pages writable.
// libpmemobj, libpmemlog and libpmemblk persist through libpmem's exported functions (their dynamic
// symbol tables import pmem_flush, pmem_drain, pmem_memcpy, …), so interposing libpmem covers them.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <optional>

#include "pmlab-trace/real.hpp"
#include "pmlab-trace/tracer.hpp"

namespace {

using pmlab_trace::Outermost;
using pmlab_trace::SyncedFiles;
using pmlab_trace::detail::raw_syscall;
namespace trace = pmlab_trace::trace;

constexpr unsigned kNoDrain = 1u << 0, kNonTemporal = 1u << 1, kWc = 1u << 3, kNoFlush = 1u << 5;

uintptr_t caller(void* ra) { return reinterpret_cast<uintptr_t>(ra); }

// What a copy under PMEM_F_MEM_* flags (libpmem and libpmem2 share them) did to [dest, dest+len).
void copied(void* dest, size_t len, unsigned flags, const pmlab_trace::CopyContent& content, uintptr_t site) {
  if (flags & kNoFlush) return;  // plain stores: found at the next capture
  const auto kind = (flags & (kNonTemporal | kWc)) ? trace::WritebackKind::non_temporal : trace::WritebackKind::flush;
  pmlab_trace::copied(dest, len, content, kind, site);
  if (!(flags & kNoDrain)) pmlab_trace::fence(site);
}

// What a copy from `src` stores: those bytes, read after the copy, unless the copy overlapped them (a
// memmove), when the destination itself is read.
pmlab_trace::CopyContent from_source(const void* dest, const void* src, size_t len) {
  const auto d = reinterpret_cast<uintptr_t>(dest), s = reinterpret_cast<uintptr_t>(src);
  const bool apart = s + len <= d || d + len <= s;
  return {apart ? src : dest, 0};
}
pmlab_trace::CopyContent filled(int c) { return {nullptr, static_cast<unsigned char>(c)}; }

// A copy that `copy` makes into [dest, dest+len) under `flags`, storing `content`, reported from `ra` when it
// is the outermost interposed call (a copy's own flush is not an event of its own).
template <class Copy>
void* traced_copy(void* ra, void* dest, size_t len, unsigned flags, const pmlab_trace::CopyContent& content,
                  Copy&& copy) {
  Outermost o;
  if (o) pmlab_trace::copying(dest, len);
  void* r = copy();
  if (o) copied(dest, len, flags, content, caller(ra));
  return r;
}

// What a persistence call does to [p, p+n), reported around the real call when it is the outermost
// interposed one: a write-back, reported before the real flush (which may evict the lines the report
// compares), and a fence, reported after the call returns.
enum Persistence : unsigned { kWritesBack = 1u << 0, kFences = 1u << 1 };

class FenceOnReturn {
 public:
  FenceOnReturn(bool report, void* ra) noexcept : report_(report), site_(caller(ra)) {}
  ~FenceOnReturn() {
    if (report_) pmlab_trace::fence(site_);
  }
  FenceOnReturn(const FenceOnReturn&) = delete;
  FenceOnReturn& operator=(const FenceOnReturn&) = delete;

 private:
  bool report_;
  uintptr_t site_;
};

template <class Call>
decltype(auto) traced_persistence(void* ra, unsigned does, const void* p, size_t n, Call&& call) {
  Outermost o;
  if (o && (does & kWritesBack)) pmlab_trace::writeback(p, n, trace::WritebackKind::flush, caller(ra));
  const FenceOnReturn fence(o && (does & kFences), ra);  // destroyed before `o`, after the call
  return call();
}

bool shared_writable_file(int prot, int flags, int fd) {
  const int type = flags & MAP_TYPE;
  return fd >= 0 && (prot & PROT_WRITE) && (type == MAP_SHARED || type == 0x03 /* MAP_SHARED_VALIDATE */);
}

// PMDK maps pools only: a shared file mapping made from its code is persistent memory.
bool made_by_pmdk(void* ra) {
  Dl_info info{};
  return dladdr(ra, &info) != 0 && info.dli_fname != nullptr && std::strstr(info.dli_fname, "libpmem") != nullptr;
}

void* traced_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off, void* ra) {
  // A fixed mapping replaces what was mapped there: a persistent region it covers ends there first.
  if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) == MAP_FIXED) pmlab_trace::unmapping(addr, len);
  void* p = reinterpret_cast<void*>(raw_syscall(SYS_mmap, addr, len, prot, flags, fd, off));
  if (p == MAP_FAILED) return p;  // raw_syscall set errno
  if (pmlab_trace::may_trace() && shared_writable_file(prot, flags, fd))
    pmlab_trace::mapped(p, len, fd, off, made_by_pmdk(ra));
  else if (fd >= 0 && (prot & PROT_WRITE) && (flags & MAP_TYPE) == MAP_PRIVATE && pmlab_trace::active())
    pmlab_trace::mapped_private(fd);
  return p;
}

// libpmem2's map-time functions, wrapped so that calls through the pointers a program got are seen.
struct Pmem2Fns {
  void (*flush)(const void*, size_t) = nullptr;
  void (*drain)() = nullptr;
  void (*persist)(const void*, size_t) = nullptr;
  void* (*memcpy_fn)(void*, const void*, size_t, unsigned) = nullptr;
  void* (*memmove_fn)(void*, const void*, size_t, unsigned) = nullptr;
  void* (*memset_fn)(void*, int, size_t, unsigned) = nullptr;
} pmem2_real;

void pmem2_flush_traced(const void* p, size_t n) {
  traced_persistence(__builtin_return_address(0), kWritesBack, p, n, [&] { pmem2_real.flush(p, n); });
}
void pmem2_drain_traced() {
  traced_persistence(__builtin_return_address(0), kFences, nullptr, 0, [] { pmem2_real.drain(); });
}
void pmem2_persist_traced(const void* p, size_t n) {
  traced_persistence(__builtin_return_address(0), kWritesBack | kFences, p, n, [&] { pmem2_real.persist(p, n); });
}
void* pmem2_memcpy_traced(void* d, const void* s, size_t n, unsigned flags) {
  return traced_copy(__builtin_return_address(0), d, n, flags, from_source(d, s, n),
                     [&] { return pmem2_real.memcpy_fn(d, s, n, flags); });
}
void* pmem2_memmove_traced(void* d, const void* s, size_t n, unsigned flags) {
  return traced_copy(__builtin_return_address(0), d, n, flags, from_source(d, s, n),
                     [&] { return pmem2_real.memmove_fn(d, s, n, flags); });
}
void* pmem2_memset_traced(void* d, int c, size_t n, unsigned flags) {
  return traced_copy(__builtin_return_address(0), d, n, flags, filled(c),
                     [&] { return pmem2_real.memset_fn(d, c, n, flags); });
}

// The file `fd` names, all of it (a directory's entries, where it is one).
bool file_of(int fd, SyncedFiles::Scope scope, SyncedFiles* which) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  if (S_ISDIR(st.st_mode) && scope == SyncedFiles::Scope::file) scope = SyncedFiles::Scope::directory;
  *which = {scope, st.st_dev, st.st_ino, 0, UINT64_MAX, fd};
  return true;
}

// `sync` (the real call) synced `which` (or nothing, when it failed), made durable by `fence`.
template <class Sync, class Which>
int traced_sync(void* ra, Sync&& sync, std::optional<trace::FenceCall> fence, Which&& which) {
  Outermost o;
  const int r = sync();
  SyncedFiles files;
  if (o && r == 0 && pmlab_trace::active()) {
    const int saved_errno = errno;
    if (which(&files)) pmlab_trace::synced(files, caller(ra), fence);
    errno = saved_errno;
  }
  return r;
}

}  // namespace

struct pmem2_map;

extern "C" {

// --- the C library ------------------------------------------------------------------------------------

__attribute__((visibility("default"))) void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return traced_mmap(addr, len, prot, flags, fd, off, PMLAB_CALLER());
}
__attribute__((visibility("default"))) void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return traced_mmap(addr, len, prot, flags, fd, off, PMLAB_CALLER());
}

// A persistent mapping moved or resized ends at its old place and is traced again at its new one.
__attribute__((visibility("default"))) void* mremap(void* old, size_t old_len, size_t new_len, int flags, ...) {
  void* fixed_at = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list args;
    va_start(args, flags);
    fixed_at = va_arg(args, void*);
    va_end(args);
  }
  pmlab_trace::MappedFile file;
  const bool persistent = pmlab_trace::remapping(old, old_len, &file);
  void* p = reinterpret_cast<void*>(raw_syscall(SYS_mremap, old, old_len, new_len, flags, fixed_at));
  if (persistent) {
    const int saved_errno = errno;
    if (p != MAP_FAILED) pmlab_trace::remapped(p, new_len, file);
    else pmlab_trace::remapped(old, old_len, file);  // still mapped where it was
    errno = saved_errno;
  }
  return p;
}

__attribute__((visibility("default"))) int munmap(void* addr, size_t len) {
  pmlab_trace::unmapping(addr, len);
  return static_cast<int>(raw_syscall(SYS_munmap, addr, len));
}

// A program that maps a file itself persists it with msync(MS_SYNC): a write-back and a fence.
__attribute__((visibility("default"))) int msync(void* addr, size_t len, int flags) {
  void* ra = PMLAB_CALLER();
  Outermost o;
  const int r = static_cast<int>(raw_syscall(SYS_msync, addr, len, flags));
  if (!o || r != 0) return r;
  if (!(flags & MS_SYNC)) pmlab_trace::msynced_without_sync(addr, len);
  else if (pmlab_trace::persistent(addr, len)) pmlab_trace::persist(addr, len, caller(ra), trace::FenceCall::msync);
  return r;
}

// Or it syncs the file: every mapping of it is written back and made durable (on a DAX file system the
// kernel flushes the mapped pages' lines; elsewhere it writes the pages to the device).
__attribute__((visibility("default"))) int fsync(int fd) {
  PMLAB_REAL(fsync, nullptr);
  return traced_sync(
      PMLAB_CALLER(), [&] { return real_fn(fd); }, trace::FenceCall::fsync,
      [&](SyncedFiles* w) { return file_of(fd, SyncedFiles::Scope::file, w); });
}
__attribute__((visibility("default"))) int fdatasync(int fd) {
  PMLAB_REAL(fdatasync, nullptr);
  return traced_sync(
      PMLAB_CALLER(), [&] { return real_fn(fd); }, trace::FenceCall::fdatasync,
      [&](SyncedFiles* w) { return file_of(fd, SyncedFiles::Scope::file, w); });
}
__attribute__((visibility("default"))) int syncfs(int fd) {
  PMLAB_REAL(syncfs, nullptr);
  return traced_sync(
      PMLAB_CALLER(), [&] { return real_fn(fd); }, trace::FenceCall::syncfs,
      [&](SyncedFiles* w) { return file_of(fd, SyncedFiles::Scope::file_system, w); });
}
__attribute__((visibility("default"))) void sync(void) {
  PMLAB_REAL(sync, nullptr);
  traced_sync(
      PMLAB_CALLER(),
      [&] {
        real_fn();
        return 0;
      },
      trace::FenceCall::sync,
      [](SyncedFiles* w) {
        *w = SyncedFiles{};  // every file
        return true;
      });
}
// Writes a part of a file back, and promises nothing of durability (sync_file_range(2)): a write-back and
// no fence, which the program's next fence or sync completes.
__attribute__((visibility("default"))) int sync_file_range(int fd, off64_t offset, off64_t nbytes, unsigned flags) {
  PMLAB_REAL(sync_file_range, nullptr);
  return traced_sync(
      PMLAB_CALLER(), [&] { return real_fn(fd, offset, nbytes, flags); }, std::nullopt,
      [&](SyncedFiles* w) {
        if (!(flags & SYNC_FILE_RANGE_WRITE) || !file_of(fd, SyncedFiles::Scope::file, w)) return false;
        w->from = static_cast<uint64_t>(offset);
        if (nbytes != 0) w->to = w->from + static_cast<uint64_t>(nbytes);
        return true;
      });
}

__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  pmlab_trace::exiting(status);
  raw_syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
__attribute__((visibility("default"), noreturn)) void _Exit(int status) { _exit(status); }

// --- libpmem ------------------------------------------------------------------------------------------

// The body of libpmem's f(p, n) that does `does` to [p, p+n).
#define PMLAB_PERSISTENCE(name, does)     \
  void* ra = __builtin_return_address(0); \
  PMLAB_REAL(name, "LIBPMEM_1.0");        \
  return traced_persistence(ra, (does), p, n, [&] { return real_fn(p, n); })

__attribute__((visibility("default"))) void pmem_flush(const void* p, size_t n) {
  PMLAB_PERSISTENCE(pmem_flush, kWritesBack);
}
__attribute__((visibility("default"))) void pmem_deep_flush(const void* p, size_t n) {
  PMLAB_PERSISTENCE(pmem_deep_flush, kWritesBack);
}
__attribute__((visibility("default"))) void pmem_drain(void) {
  void* ra = __builtin_return_address(0);
  PMLAB_REAL(pmem_drain, "LIBPMEM_1.0");
  traced_persistence(ra, kFences, nullptr, 0, [] { real_fn(); });
}
__attribute__((visibility("default"))) int pmem_deep_drain(const void* p, size_t n) {
  PMLAB_PERSISTENCE(pmem_deep_drain, kFences);
}
__attribute__((visibility("default"))) void pmem_persist(const void* p, size_t n) {
  PMLAB_PERSISTENCE(pmem_persist, kWritesBack | kFences);
}
__attribute__((visibility("default"))) int pmem_deep_persist(const void* p, size_t n) {
  PMLAB_PERSISTENCE(pmem_deep_persist, kWritesBack | kFences);
}
__attribute__((visibility("default"))) int pmem_msync(const void* p, size_t n) {
  void* ra = __builtin_return_address(0);
  PMLAB_REAL(pmem_msync, "LIBPMEM_1.0");
  Outermost o;
  const int r = real_fn(p, n);
  if (o && r == 0) pmlab_trace::persist(p, n, caller(ra), trace::FenceCall::msync);
  return r;
}
// The domain under test decides: a program that skips flushes under eADR is tested under eADR.
__attribute__((visibility("default"))) int pmem_has_auto_flush(void) {
  PMLAB_REAL(pmem_has_auto_flush, "LIBPMEM_1.0");
  if (pmlab_trace::may_trace()) return pmlab_trace::eadr() ? 1 : 0;
  return real_fn();
}

#define PMLAB_COPY(name, flags_expr, content, ...) \
  void* ra = __builtin_return_address(0);          \
  PMLAB_REAL(name, "LIBPMEM_1.0");                 \
  return traced_copy(ra, dest, len, (flags_expr), (content), [&] { return real_fn(__VA_ARGS__); })

__attribute__((visibility("default"))) void* pmem_memcpy(void* dest, const void* src, size_t len, unsigned flags) {
  PMLAB_COPY(pmem_memcpy, flags, from_source(dest, src, len), dest, src, len, flags);
}
__attribute__((visibility("default"))) void* pmem_memmove(void* dest, const void* src, size_t len, unsigned flags) {
  PMLAB_COPY(pmem_memmove, flags, from_source(dest, src, len), dest, src, len, flags);
}
__attribute__((visibility("default"))) void* pmem_memset(void* dest, int c, size_t len, unsigned flags) {
  PMLAB_COPY(pmem_memset, flags, filled(c), dest, c, len, flags);
}
__attribute__((visibility("default"))) void* pmem_memcpy_persist(void* dest, const void* src, size_t len) {
  PMLAB_COPY(pmem_memcpy_persist, 0u, from_source(dest, src, len), dest, src, len);
}
__attribute__((visibility("default"))) void* pmem_memmove_persist(void* dest, const void* src, size_t len) {
  PMLAB_COPY(pmem_memmove_persist, 0u, from_source(dest, src, len), dest, src, len);
}
__attribute__((visibility("default"))) void* pmem_memset_persist(void* dest, int c, size_t len) {
  PMLAB_COPY(pmem_memset_persist, 0u, filled(c), dest, c, len);
}
__attribute__((visibility("default"))) void* pmem_memcpy_nodrain(void* dest, const void* src, size_t len) {
  PMLAB_COPY(pmem_memcpy_nodrain, kNoDrain, from_source(dest, src, len), dest, src, len);
}
__attribute__((visibility("default"))) void* pmem_memmove_nodrain(void* dest, const void* src, size_t len) {
  PMLAB_COPY(pmem_memmove_nodrain, kNoDrain, from_source(dest, src, len), dest, src, len);
}
__attribute__((visibility("default"))) void* pmem_memset_nodrain(void* dest, int c, size_t len) {
  PMLAB_COPY(pmem_memset_nodrain, kNoDrain, filled(c), dest, c, len);
}

// --- libpmem2 -----------------------------------------------------------------------------------------

#define PMLAB_PMEM2_GETTER(getter, field, wrapper)                                           \
  __attribute__((visibility("default"))) decltype(pmem2_real.field) getter(pmem2_map* map) { \
    PMLAB_REAL(getter, "LIBPMEM2_1.0");                                                      \
    auto fn = reinterpret_cast<decltype(pmem2_real.field)>(real_fn(map));                    \
    if (!pmlab_trace::active() || fn == nullptr) return fn;                                  \
    pmem2_real.field = fn;                                                                   \
    return wrapper;                                                                          \
  }

decltype(pmem2_real.flush) pmem2_get_flush_fn(pmem2_map* map);
decltype(pmem2_real.drain) pmem2_get_drain_fn(pmem2_map* map);
decltype(pmem2_real.persist) pmem2_get_persist_fn(pmem2_map* map);
decltype(pmem2_real.memcpy_fn) pmem2_get_memcpy_fn(pmem2_map* map);
decltype(pmem2_real.memmove_fn) pmem2_get_memmove_fn(pmem2_map* map);
decltype(pmem2_real.memset_fn) pmem2_get_memset_fn(pmem2_map* map);
PMLAB_PMEM2_GETTER(pmem2_get_flush_fn, flush, pmem2_flush_traced)
PMLAB_PMEM2_GETTER(pmem2_get_drain_fn, drain, pmem2_drain_traced)
PMLAB_PMEM2_GETTER(pmem2_get_persist_fn, persist, pmem2_persist_traced)
PMLAB_PMEM2_GETTER(pmem2_get_memcpy_fn, memcpy_fn, pmem2_memcpy_traced)
PMLAB_PMEM2_GETTER(pmem2_get_memmove_fn, memmove_fn, pmem2_memmove_traced)
PMLAB_PMEM2_GETTER(pmem2_get_memset_fn, memset_fn, pmem2_memset_traced)

__attribute__((visibility("default"))) int pmem2_deep_flush(pmem2_map* map, void* p, size_t n) {
  void* ra = __builtin_return_address(0);
  PMLAB_REAL(pmem2_deep_flush, "LIBPMEM2_1.0");
  Outermost o;
  const int r = real_fn(map, p, n);
  if (o) pmlab_trace::writeback(p, n, trace::WritebackKind::flush, caller(ra));
  return r;
}

// --- pmlab/trace.h ------------------------------------------------------------------------------------

// A report from a function whose instructions are trapped is dropped: its trap reported the same.
__attribute__((visibility("default"))) void pmlab_trace_flush(const void* p, size_t n) {
  const uintptr_t site = caller(__builtin_return_address(0));
  if (!pmlab_trace::reported_by_traps(site)) pmlab_trace::writeback(p, n, trace::WritebackKind::flush, site);
}
__attribute__((visibility("default"))) void pmlab_trace_fence(void) {
  const uintptr_t site = caller(__builtin_return_address(0));
  if (!pmlab_trace::reported_by_traps(site)) pmlab_trace::fence(site);
}
__attribute__((visibility("default"))) void pmlab_trace_persist(const void* p, size_t n) {
  const uintptr_t site = caller(__builtin_return_address(0));
  if (!pmlab_trace::reported_by_traps(site)) pmlab_trace::persist(p, n, site);
}
__attribute__((visibility("default"))) void pmlab_trace_nt_store(const void* p, size_t n) {
  const uintptr_t site = caller(__builtin_return_address(0));
  if (!pmlab_trace::reported_by_traps(site)) pmlab_trace::stored_non_temporal(p, n, site);
}
__attribute__((visibility("default"))) int pmlab_trace_active(void) { return pmlab_trace::may_trace() ? 1 : 0; }
__attribute__((visibility("default"))) void pmlab_trace_op_begin(void) {
  pmlab_trace::operation(trace::OperationMark::begin, caller(__builtin_return_address(0)));
}
__attribute__((visibility("default"))) void pmlab_trace_op_end(void) {
  pmlab_trace::operation(trace::OperationMark::end, caller(__builtin_return_address(0)));
}

// For a library that reports on behalf of its caller (pmlab's own Persister): `site` is the call site to
// name, the library's caller rather than the library.
__attribute__((visibility("default"))) void pmlab_trace_flush_from(const void* p, size_t n, const void* site) {
  pmlab_trace::writeback(p, n, trace::WritebackKind::flush, reinterpret_cast<uintptr_t>(site));
}
__attribute__((visibility("default"))) void pmlab_trace_fence_from(const void* site) {
  pmlab_trace::fence(reinterpret_cast<uintptr_t>(site));
}
__attribute__((visibility("default"))) void pmlab_trace_nt_store_from(const void* p, size_t n, const void* site) {
  pmlab_trace::stored_non_temporal(p, n, reinterpret_cast<uintptr_t>(site));
}

}  // extern "C"
