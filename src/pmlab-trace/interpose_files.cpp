// The C library's calls that change files, interposed by preloading like the calls in interpose.cpp. A
// program may keep its pool in a file it changes with write(2) and pwrite(2) (LMDB does, by default) instead
// of stores to a mapping: a write to a --pool file is recorded as a DAX file system carries it out
// (tracer.hpp's file_wrote); a write to any other file costs a fstat. A program may also remove a
// persistent file while it runs (SQLite's journal_mode=delete commits so): unlink and rename record that
// its path no longer leads to it; or cut it short (journal_mode=truncate): ftruncate and truncate record its
// new length. Each forwards to the real function.
//
// The kernel's copies into a file (copy_file_range, sendfile, splice) and fallocate's zeros are recorded as
// writes of what they left, dprintf as a write. Calls the C library makes by itself are not seen (stdio's
// writes are watched from outside, in interpose_stdio.cpp; remove(3) is interposed itself), nor io_uring's
// writes or system calls made without the C library (those made through syscall(): interpose_syscall.cpp).
#undef _FORTIFY_SOURCE  // the fortified pwrite is an inline wrapper, not a symbol to define
#include <fcntl.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <optional>

#include "pmlab-trace/real.hpp"
#include "pmlab-trace/traced_resize.hpp"
#include "pmlab-trace/tracer.hpp"

namespace trace = pmlab_trace::trace;
using pmlab_trace::detail::traced_resize;

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

// `allocate` (the real call, fallocate's `mode`) makes [at, at + n) of the file `fd` zero where it held nothing,
// or where it held anything (a hole punched, a range zeroed); it returns 0, or an error.
template <class Allocate>
int traced_allocation(void* ra, int fd, int mode, off_t at, off_t n, Allocate&& allocate) {
  if ((mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE)) != 0 || at < 0 || n <= 0) return allocate();
  struct stat st {};
  const int saved_errno = errno;
  if (fstat(fd, &st) != 0) return allocate();
  errno = saved_errno;
  const uint64_t from = static_cast<uint64_t>(at), to = from + static_cast<uint64_t>(n);
  // Keeping its size, the file changes only up to its old end; growing, it is zero past that.
  const uint64_t end = (mode & FALLOC_FL_KEEP_SIZE) != 0 ? std::min(to, static_cast<uint64_t>(st.st_size)) : to;
  const bool zeroes = (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) != 0;
  if (end <= from || (!zeroes && end <= static_cast<uint64_t>(st.st_size))) return allocate();
  int result = 0;
  traced_write(ra, fd, from, end - from, [&]() -> ssize_t {
    result = allocate();
    return result == 0 ? static_cast<ssize_t>(end - from) : -1;
  });
  return result;
}

// `remove` (the real call) takes away the path `path` at `dirfd` (and a rename's target `over` at `over_dir`):
// a persistent file either named is gone from it once the call succeeded.
template <class Remove>
int traced_removal(void* ra, int dirfd, const char* path, int over_dir, const char* over, trace::GoneCall call,
                   Remove&& remove, bool exchange = false) {
  pmlab_trace::TracedFile named, replaced;
  const std::string moved = call == trace::GoneCall::rename ? pmlab_trace::directory_renaming(dirfd, path) : "";
  const bool was_named = pmlab_trace::traced_file_at(dirfd, path, &named);
  if (!was_named && over != nullptr) pmlab_trace::arriving(over_dir, over);
  const bool was_replaced = over != nullptr && pmlab_trace::traced_file_at(over_dir, over, &replaced);
  const int r = remove();
  if (r == 0 && !moved.empty()) pmlab_trace::directory_renamed(moved, over_dir, over);
  // A file renamed in from outside is seen from here on, before the file it replaced goes: one change.
  const bool arrived = r == 0 && !was_named && moved.empty() && call == trace::GoneCall::rename && !exchange &&
                       pmlab_trace::file_arrived(dirfd, path, over_dir, over, &named);
  if (r == 0 && (was_named || arrived || was_replaced)) {
    const int saved_errno = errno;
    // The replaced file first: the renamed one then takes its path. Exchanged, it is at the source now.
    if (was_replaced && exchange)
      pmlab_trace::file_gone(replaced, trace::GoneCall::exchange, reinterpret_cast<uintptr_t>(ra), dirfd, path);
    else if (was_replaced) pmlab_trace::file_gone(replaced, call, reinterpret_cast<uintptr_t>(ra));
    if ((was_named || arrived) && call == trace::GoneCall::rename)
      pmlab_trace::file_gone(named, call, reinterpret_cast<uintptr_t>(ra), over_dir, over);
    else if (was_named) pmlab_trace::file_gone(named, call, reinterpret_cast<uintptr_t>(ra));
    errno = saved_errno;
  }
  return r;
}

// `link` (the real call) gives the file at `path` (at `dirfd`, found as fstatat finds it with `at_flags`) the
// new name `to` at `to_dir`: a persistent file keeps the names it had and has this one too.
template <class Link>
int traced_link(void* ra, int dirfd, const char* path, int to_dir, const char* to, int at_flags, Link&& link) {
  pmlab_trace::TracedFile named;
  const bool was_named = pmlab_trace::traced_file_at(dirfd, path, &named, at_flags);
  if (!was_named) pmlab_trace::arriving(to_dir, to);
  const int r = link();
  if (r == 0 && (was_named || pmlab_trace::file_arrived(dirfd, path, to_dir, to, &named))) {
    const int saved_errno = errno;
    pmlab_trace::file_gone(named, trace::GoneCall::link, reinterpret_cast<uintptr_t>(ra), to_dir, to);
    errno = saved_errno;
  }
  return r;
}

// `call` (the real one) makes (`made`) or removes the directory `path` at `dirfd`; a removal's path is read
// before the call, while it still resolves.
template <class Call>
int traced_directory(int dirfd, const char* path, bool made, Call&& call) {
  const std::string removed = made ? std::string() : pmlab_trace::directory_path(dirfd, path);
  const int r = call();
  if (r == 0) {
    const int saved_errno = errno;
    pmlab_trace::directory_changed(made ? pmlab_trace::directory_path(dirfd, path) : removed, made);
    errno = saved_errno;
  }
  return r;
}

// `open` (the real call) opens `path` at `dirfd` with `flags`: O_TRUNC cuts an existing file to nothing.
template <class Open>
int traced_open(void* ra, int dirfd, const char* path, int flags, Open&& open) {
  return flags & O_TRUNC ? traced_resize(ra, -1, dirfd, path, 0, open) : open();
}

// The mode an open's `flags` say follows them.
#define PMLAB_OPEN_MODE(flags)                                      \
  mode_t mode = 0;                                                  \
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) { \
    va_list rest;                                                   \
    va_start(rest, flags);                                          \
    mode = static_cast<mode_t>(va_arg(rest, int));                  \
    va_end(rest);                                                   \
  }

std::optional<uint64_t> at_offset(off64_t at) {
  return at >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(at)) : std::nullopt;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) ssize_t write(int fd, const void* buf, size_t n) {
  PMLAB_REAL(write, nullptr);
  return traced_write(PMLAB_CALLER(), fd, std::nullopt, n, [&] { return real_fn(fd, buf, n); });
}
__attribute__((visibility("default"))) ssize_t pwrite(int fd, const void* buf, size_t n, off_t at) {
  PMLAB_REAL(pwrite, nullptr);
  return traced_write(PMLAB_CALLER(), fd, at_offset(at), n, [&] { return real_fn(fd, buf, n, at); });
}
__attribute__((visibility("default"))) ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t at) {
  PMLAB_REAL(pwrite64, nullptr);
  return traced_write(PMLAB_CALLER(), fd, at_offset(at), n, [&] { return real_fn(fd, buf, n, at); });
}
__attribute__((visibility("default"))) ssize_t writev(int fd, const iovec* v, int count) {
  PMLAB_REAL(writev, nullptr);
  return traced_write(PMLAB_CALLER(), fd, std::nullopt, total(v, count), [&] { return real_fn(fd, v, count); });
}
__attribute__((visibility("default"))) ssize_t pwritev(int fd, const iovec* v, int count, off_t at) {
  PMLAB_REAL(pwritev, nullptr);
  return traced_write(PMLAB_CALLER(), fd, at_offset(at), total(v, count), [&] { return real_fn(fd, v, count, at); });
}
__attribute__((visibility("default"))) ssize_t pwritev64(int fd, const iovec* v, int count, off64_t at) {
  PMLAB_REAL(pwritev64, nullptr);
  return traced_write(PMLAB_CALLER(), fd, at_offset(at), total(v, count), [&] { return real_fn(fd, v, count, at); });
}
// pwritev2 at -1 writes at the file position.
__attribute__((visibility("default"))) ssize_t pwritev2(int fd, const iovec* v, int count, off_t at, int flags) {
  PMLAB_REAL(pwritev2, nullptr);
  return traced_write(
      PMLAB_CALLER(), fd, at_offset(at), total(v, count), [&] { return real_fn(fd, v, count, at, flags); }, flags);
}
__attribute__((visibility("default"))) ssize_t pwritev64v2(int fd, const iovec* v, int count, off64_t at, int flags) {
  PMLAB_REAL(pwritev64v2, nullptr);
  return traced_write(
      PMLAB_CALLER(), fd, at_offset(at), total(v, count), [&] { return real_fn(fd, v, count, at, flags); }, flags);
}

// dprintf formats into a stream of the C library's own over the descriptor and writes it with the library's
// own write: one write of what it returns, at the file position.
__attribute__((visibility("default"))) int vdprintf(int fd, const char* format, va_list args) {
  PMLAB_REAL(vdprintf, nullptr);
  return static_cast<int>(traced_write(PMLAB_CALLER(), fd, std::nullopt, 1, [&] { return real_fn(fd, format, args); }));
}
__attribute__((visibility("default"))) int dprintf(int fd, const char* format, ...) {
  PMLAB_REAL(vdprintf, nullptr);
  va_list args;
  va_start(args, format);
  const int r =
      static_cast<int>(traced_write(PMLAB_CALLER(), fd, std::nullopt, 1, [&] { return real_fn(fd, format, args); }));
  va_end(args);
  return r;
}
// The fortified C library's forms (_FORTIFY_SOURCE), declared here: this file is compiled without it.
int __vdprintf_chk(int fd, int flag, const char* format, va_list args);
__attribute__((visibility("default"))) int __vdprintf_chk(int fd, int flag, const char* format, va_list args) {
  PMLAB_REAL(__vdprintf_chk, nullptr);
  return static_cast<int>(
      traced_write(PMLAB_CALLER(), fd, std::nullopt, 1, [&] { return real_fn(fd, flag, format, args); }));
}
__attribute__((visibility("default"))) int __dprintf_chk(int fd, int flag, const char* format, ...) {
  PMLAB_REAL(__vdprintf_chk, nullptr);
  va_list args;
  va_start(args, format);
  const int r = static_cast<int>(
      traced_write(PMLAB_CALLER(), fd, std::nullopt, 1, [&] { return real_fn(fd, flag, format, args); }));
  va_end(args);
  return r;
}

// The kernel's own copies into a file: what they wrote is recorded as a write of it (read through the
// runtime's view), at the output's offset or its file position.
__attribute__((visibility("default"))) ssize_t copy_file_range(int in, off64_t* in_at, int out, off64_t* out_at,
                                                               size_t n, unsigned flags) {
  PMLAB_REAL(copy_file_range, nullptr);
  return traced_write(PMLAB_CALLER(), out, out_at ? at_offset(*out_at) : std::nullopt, n,
                      [&] { return real_fn(in, in_at, out, out_at, n, flags); });
}
__attribute__((visibility("default"))) ssize_t sendfile(int out, int in, off_t* in_at, size_t n) {
  PMLAB_REAL(sendfile, nullptr);
  return traced_write(PMLAB_CALLER(), out, std::nullopt, n, [&] { return real_fn(out, in, in_at, n); });
}
__attribute__((visibility("default"))) ssize_t splice(int in, off64_t* in_at, int out, off64_t* out_at, size_t n,
                                                      unsigned flags) {
  PMLAB_REAL(splice, nullptr);
  return traced_write(PMLAB_CALLER(), out, out_at ? at_offset(*out_at) : std::nullopt, n,
                      [&] { return real_fn(in, in_at, out, out_at, n, flags); });
}

// fallocate and posix_fallocate make [at, at + n) of a file zero where it held nothing (and the file that
// long, unless FALLOC_FL_KEEP_SIZE), or zero whatever it held (FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE):
// recorded as a write of the zeros it left, unordered until the file is synced, inside the file's old
// length where it keeps its size. Moving a file's bytes (FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE)
// is not followed: the exit's comparison notes what it changed.
__attribute__((visibility("default"))) int fallocate(int fd, int mode, off_t at, off_t n) {
  PMLAB_REAL(fallocate, nullptr);
  return traced_allocation(PMLAB_CALLER(), fd, mode, at, n, [&] { return real_fn(fd, mode, at, n); });
}
__attribute__((visibility("default"))) int posix_fallocate(int fd, off_t at, off_t n) {
  PMLAB_REAL(posix_fallocate, nullptr);
  return traced_allocation(PMLAB_CALLER(), fd, 0, at, n, [&] { return real_fn(fd, at, n); });
}

// A directory made or removed below a --pool directory is a change of the file system a crash may lose.
__attribute__((visibility("default"))) int mkdir(const char* path, mode_t mode) {
  PMLAB_REAL(mkdir, nullptr);
  return traced_directory(AT_FDCWD, path, true, [&] { return real_fn(path, mode); });
}
__attribute__((visibility("default"))) int mkdirat(int dirfd, const char* path, mode_t mode) {
  PMLAB_REAL(mkdirat, nullptr);
  return traced_directory(dirfd, path, true, [&] { return real_fn(dirfd, path, mode); });
}
__attribute__((visibility("default"))) int rmdir(const char* path) {
  PMLAB_REAL(rmdir, nullptr);
  return traced_directory(AT_FDCWD, path, false, [&] { return real_fn(path); });
}

// unlink and rename take a path from a persistent file (a rename also from the file it replaces).
__attribute__((visibility("default"))) int unlink(const char* path) {
  PMLAB_REAL(unlink, nullptr);
  return traced_removal(PMLAB_CALLER(), AT_FDCWD, path, AT_FDCWD, nullptr, trace::GoneCall::unlink,
                        [&] { return real_fn(path); });
}
__attribute__((visibility("default"))) int unlinkat(int dirfd, const char* path, int flags) {
  PMLAB_REAL(unlinkat, nullptr);
  if (flags & AT_REMOVEDIR) return traced_directory(dirfd, path, false, [&] { return real_fn(dirfd, path, flags); });
  return traced_removal(PMLAB_CALLER(), dirfd, path, AT_FDCWD, nullptr, trace::GoneCall::unlink,
                        [&] { return real_fn(dirfd, path, flags); });
}
// remove(3) unlinks a file with the C library's own call.
__attribute__((visibility("default"))) int remove(const char* path) {
  PMLAB_REAL(remove, nullptr);
  return traced_removal(PMLAB_CALLER(), AT_FDCWD, path, AT_FDCWD, nullptr, trace::GoneCall::unlink,
                        [&] { return real_fn(path); });
}
__attribute__((visibility("default"))) int rename(const char* from, const char* to) {
  PMLAB_REAL(rename, nullptr);
  return traced_removal(PMLAB_CALLER(), AT_FDCWD, from, AT_FDCWD, to, trace::GoneCall::rename,
                        [&] { return real_fn(from, to); });
}
__attribute__((visibility("default"))) int renameat(int from_dir, const char* from, int to_dir, const char* to) {
  PMLAB_REAL(renameat, nullptr);
  return traced_removal(PMLAB_CALLER(), from_dir, from, to_dir, to, trace::GoneCall::rename,
                        [&] { return real_fn(from_dir, from, to_dir, to); });
}
// link and linkat name a persistent file again (the Maildir convention delivers so, and a checkpoint keeps
// a table under two names), or give an open file without a name its first (O_TMPFILE's, by AT_EMPTY_PATH or
// by /proc/self/fd/N followed).
__attribute__((visibility("default"))) int link(const char* from, const char* to) {
  PMLAB_REAL(link, nullptr);
  return traced_link(PMLAB_CALLER(), AT_FDCWD, from, AT_FDCWD, to, AT_SYMLINK_NOFOLLOW,
                     [&] { return real_fn(from, to); });
}
__attribute__((visibility("default"))) int linkat(int from_dir, const char* from, int to_dir, const char* to,
                                                  int flags) {
  PMLAB_REAL(linkat, nullptr);
  if (from == nullptr) return real_fn(from_dir, from, to_dir, to, flags);
  const int at_flags = (flags & AT_EMPTY_PATH) != 0 && *from == '\0' ? AT_EMPTY_PATH
                       : (flags & AT_SYMLINK_FOLLOW) != 0            ? 0
                                                                     : AT_SYMLINK_NOFOLLOW;
  return traced_link(PMLAB_CALLER(), from_dir, from, to_dir, to, at_flags,
                     [&] { return real_fn(from_dir, from, to_dir, to, flags); });
}
// RENAME_EXCHANGE swaps the two files (a directory exchanged is not followed).
__attribute__((visibility("default"))) int renameat2(int from_dir, const char* from, int to_dir, const char* to,
                                                     unsigned flags) {
  PMLAB_REAL(renameat2, nullptr);
  return traced_removal(
      PMLAB_CALLER(), from_dir, from, to_dir, to, trace::GoneCall::rename,
      [&] { return real_fn(from_dir, from, to_dir, to, flags); }, (flags & RENAME_EXCHANGE) != 0);
}

// ftruncate and truncate make a persistent file as long as they say (what lay past its new end is gone);
// an open with O_TRUNC (Python's open(path, "wb"), creat) cuts it to nothing.
__attribute__((visibility("default"))) int ftruncate(int fd, off_t length) {
  PMLAB_REAL(ftruncate, nullptr);
  return traced_resize(PMLAB_CALLER(), fd, AT_FDCWD, nullptr, length, [&] { return real_fn(fd, length); });
}
__attribute__((visibility("default"))) int truncate(const char* path, off_t length) {
  PMLAB_REAL(truncate, nullptr);
  return traced_resize(PMLAB_CALLER(), -1, AT_FDCWD, path, length, [&] { return real_fn(path, length); });
}
__attribute__((visibility("default"))) int open(const char* path, int flags, ...) {
  PMLAB_REAL(open, nullptr);
  PMLAB_OPEN_MODE(flags);
  return traced_open(PMLAB_CALLER(), AT_FDCWD, path, flags, [&] { return real_fn(path, flags, mode); });
}
__attribute__((visibility("default"))) int openat(int dirfd, const char* path, int flags, ...) {
  PMLAB_REAL(openat, nullptr);
  PMLAB_OPEN_MODE(flags);
  return traced_open(PMLAB_CALLER(), dirfd, path, flags, [&] { return real_fn(dirfd, path, flags, mode); });
}
// The fortified C library's opens (_FORTIFY_SOURCE, flags unknown when compiled), which take no mode.
__attribute__((visibility("default"))) int __open_2(const char* path, int flags) {
  PMLAB_REAL(__open_2, nullptr);
  return traced_open(PMLAB_CALLER(), AT_FDCWD, path, flags, [&] { return real_fn(path, flags); });
}
__attribute__((visibility("default"))) int __openat_2(int dirfd, const char* path, int flags) {
  PMLAB_REAL(__openat_2, nullptr);
  return traced_open(PMLAB_CALLER(), dirfd, path, flags, [&] { return real_fn(dirfd, path, flags); });
}
__attribute__((visibility("default"))) int creat(const char* path, mode_t mode) {
  PMLAB_REAL(creat, nullptr);
  return traced_open(PMLAB_CALLER(), AT_FDCWD, path, O_TRUNC, [&] { return real_fn(path, mode); });
}
// On a 64-bit C library each `64` form is the same call as its plain one (a file offset is 64 bits either
// way), so it is the plain one's wrapper under a second name.
__attribute__((visibility("default"), alias("ftruncate"))) int ftruncate64(int fd, off64_t length);
__attribute__((visibility("default"), alias("truncate"))) int truncate64(const char* path, off64_t length);
__attribute__((visibility("default"), alias("open"))) int open64(const char* path, int flags, ...);
__attribute__((visibility("default"), alias("openat"))) int openat64(int dirfd, const char* path, int flags, ...);
__attribute__((visibility("default"), alias("__open_2"))) int __open64_2(const char* path, int flags);
__attribute__((visibility("default"), alias("__openat_2"))) int __openat64_2(int dirfd, const char* path, int flags);
__attribute__((visibility("default"), alias("creat"))) int creat64(const char* path, mode_t mode);
__attribute__((visibility("default"), alias("sendfile"))) ssize_t sendfile64(int out, int in, off64_t* in_at, size_t n);
__attribute__((visibility("default"), alias("fallocate"))) int fallocate64(int fd, int mode, off64_t at, off64_t n);
__attribute__((visibility("default"), alias("posix_fallocate"))) int posix_fallocate64(int fd, off64_t at, off64_t n);
static_assert(sizeof(off_t) == sizeof(off64_t), "the 64 forms are the plain calls");

}  // extern "C"
