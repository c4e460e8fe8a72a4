// The C library's writes to files, interposed by preloading like the calls in interpose.cpp: a program may
// keep its pool in a file it changes with write(2) and pwrite(2) (LMDB does, by default) instead of stores
// to a mapping. Each forwards to the real function; a write to a --pool file is then recorded as a DAX file
// system carries it out (tracer.hpp's file_wrote). A write to any other file costs a fstat.
//
// Writes the C library makes by itself are not seen: stdio's buffered fwrite, and the kernel's own copies
// (copy_file_range, sendfile, io_uring), which the runtime does not interpose.
#undef _FORTIFY_SOURCE  // the fortified pwrite is an inline wrapper, not a symbol to define
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "pmlab-trace/real.hpp"
#include "pmlab-trace/tracer.hpp"

namespace {

size_t total(const iovec* v, int count) {
  size_t n = 0;
  for (int i = 0; i < count; ++i) n += v[i].iov_len;
  return n;
}

// `write` (the real call) of `n` bytes to `fd` at `at` (none: the file position), reported from `ra`;
// `flags`: pwritev2's, whose RWF_DSYNC and RWF_SYNC make this one call durable when it returns.
template <class Write>
ssize_t traced_write(void* ra, int fd, std::optional<uint64_t> at, size_t n, Write&& write, int flags = 0) {
  pmlab_trace::FileWrite w;
  const bool traced = pmlab_trace::file_will_write(fd, at, n, &w);
  if (flags & (RWF_DSYNC | RWF_SYNC)) w.synced = true;
  const ssize_t r = write();
  if (traced && r > 0) {
    const int saved_errno = errno;
    pmlab_trace::file_wrote(w, static_cast<size_t>(r), reinterpret_cast<uintptr_t>(ra));
    errno = saved_errno;
  }
  return r;
}

std::optional<uint64_t> at_offset(off64_t at) {
  return at >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(at)) : std::nullopt;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) ssize_t write(int fd, const void* buf, size_t n) {
  PMLAB_REAL(write, nullptr);
  return traced_write(__builtin_return_address(0), fd, std::nullopt, n, [&] { return real_fn(fd, buf, n); });
}
__attribute__((visibility("default"))) ssize_t pwrite(int fd, const void* buf, size_t n, off_t at) {
  PMLAB_REAL(pwrite, nullptr);
  return traced_write(__builtin_return_address(0), fd, at_offset(at), n, [&] { return real_fn(fd, buf, n, at); });
}
__attribute__((visibility("default"))) ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t at) {
  PMLAB_REAL(pwrite64, nullptr);
  return traced_write(__builtin_return_address(0), fd, at_offset(at), n, [&] { return real_fn(fd, buf, n, at); });
}
__attribute__((visibility("default"))) ssize_t writev(int fd, const iovec* v, int count) {
  PMLAB_REAL(writev, nullptr);
  return traced_write(__builtin_return_address(0), fd, std::nullopt, total(v, count),
                      [&] { return real_fn(fd, v, count); });
}
__attribute__((visibility("default"))) ssize_t pwritev(int fd, const iovec* v, int count, off_t at) {
  PMLAB_REAL(pwritev, nullptr);
  return traced_write(__builtin_return_address(0), fd, at_offset(at), total(v, count),
                      [&] { return real_fn(fd, v, count, at); });
}
__attribute__((visibility("default"))) ssize_t pwritev64(int fd, const iovec* v, int count, off64_t at) {
  PMLAB_REAL(pwritev64, nullptr);
  return traced_write(__builtin_return_address(0), fd, at_offset(at), total(v, count),
                      [&] { return real_fn(fd, v, count, at); });
}
// pwritev2 at -1 writes at the file position.
__attribute__((visibility("default"))) ssize_t pwritev2(int fd, const iovec* v, int count, off_t at, int flags) {
  PMLAB_REAL(pwritev2, nullptr);
  return traced_write(
      __builtin_return_address(0), fd, at_offset(at), total(v, count), [&] { return real_fn(fd, v, count, at, flags); },
      flags);
}
__attribute__((visibility("default"))) ssize_t pwritev64v2(int fd, const iovec* v, int count, off64_t at, int flags) {
  PMLAB_REAL(pwritev64v2, nullptr);
  return traced_write(
      __builtin_return_address(0), fd, at_offset(at), total(v, count), [&] { return real_fn(fd, v, count, at, flags); },
      flags);
}

}  // extern "C"
