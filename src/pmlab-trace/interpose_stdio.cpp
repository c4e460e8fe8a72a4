// The C library's stdio streams, interposed by preloading like the calls in interpose_files.cpp. A stream
// writes its buffer to its file with the library's own write(2), which no preloaded library sees, so the
// runtime watches a stream of a --pool file from outside: before a call that may write, where the bytes the
// stream has not written yet begin; after it, how far the file position (the file's end, for a stream that
// appends) got. What lies between is compared with the runtime's view of the file and recorded as a write(2)
// of it is (tracer.hpp's file_wrote), from the call's return address. A stream of any other file costs a
// lookup in the list of streams of --pool files, which fopen, fdopen and freopen keep.
//
// An fopen or freopen that truncates ("w") records the cut, as an open with O_TRUNC does. A seek, a close
// or a reopen writes out the stream's buffer first: that is done here, as a traced fflush, before the real
// call. What an inline putc macro stores in the buffer reaches the file in __overflow or a later call,
// both seen. What the streams still buffer at the exit the runtime flushes before its last record
// (flush_pool_streams). Not seen: a stream made another way (tmpfile, fmemopen, popen), and wide output
// (fputwc, fwprintf). dprintf writes no stream of the program's: interpose_files.cpp traces it.
#include <fcntl.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <vector>

#include "pmlab-trace/real.hpp"
#include "pmlab-trace/traced_resize.hpp"
#include "pmlab-trace/tracer.hpp"

namespace {

// The open streams of --pool files. Never destroyed: streams are written and closed from destructors too.
struct PoolStreams {
  std::mutex mutex;
  std::vector<FILE*> open;
};
PoolStreams& pool_streams() {
  static PoolStreams* s = new PoolStreams;
  return *s;
}

bool is_pool_stream(FILE* f) {
  PoolStreams& s = pool_streams();
  std::lock_guard lock(s.mutex);
  return std::find(s.open.begin(), s.open.end(), f) != s.open.end();
}

void forget(FILE* f) {
  PoolStreams& s = pool_streams();
  std::lock_guard lock(s.mutex);
  s.open.erase(std::remove(s.open.begin(), s.open.end(), f), s.open.end());
}

// A stream just opened: listed when its file is a --pool file (a stream closed unseen may have had its
// address).
FILE* opened(FILE* f) {
  if (f == nullptr) return f;
  forget(f);
  const int fd = fileno(f);
  if (fd >= 0 && pmlab_trace::written_pool_file(fd)) {
    PoolStreams& s = pool_streams();
    std::lock_guard lock(s.mutex);
    s.open.push_back(f);
  }
  return f;
}

// Where a call on a stream of a --pool file may write: from `from`, at the file's end where it appends.
struct StreamWrite {
  int fd = -1;
  bool append = false;
  uint64_t from = 0;
  pmlab_trace::FileWrite write;
};

// Before a call on `f` that may write `n` more bytes than the stream holds (a guess, where the call does
// not say): true when `f` is a stream of a --pool file that the runtime traces, with where it may write.
bool stream_will_write(FILE* f, size_t n, StreamWrite* w) {
  if (f == nullptr || !is_pool_stream(f)) return false;
  const int saved_errno = errno;
  w->fd = fileno(f);
  const int flags = fcntl(w->fd, F_GETFL);
  w->append = flags >= 0 && (flags & O_APPEND) != 0;
  struct stat st {};
  const off64_t at = w->append ? (fstat(w->fd, &st) == 0 ? st.st_size : -1) : ftello64(f);
  // Appending, the stream writes at the file's end; else its unwritten bytes lie just before its position.
  const uint64_t unwritten = w->append ? 0 : __fpending(f);
  const bool known = at >= 0 && static_cast<uint64_t>(at) >= unwritten;
  w->from = known ? static_cast<uint64_t>(at) - unwritten : 0;
  const bool traced = known && pmlab_trace::file_will_write(w->fd, w->from, __fpending(f) + n + 1, &w->write);
  errno = saved_errno;
  return traced;
}

// After the call: what reached the file between where it could write and where the file position stands.
void stream_wrote(const StreamWrite& w, void* site) {
  const int saved_errno = errno;
  struct stat st {};
  const off64_t to = w.append ? (fstat(w.fd, &st) == 0 ? st.st_size : -1) : lseek64(w.fd, 0, SEEK_CUR);
  if (to > 0 && static_cast<uint64_t>(to) > w.from) {
    const size_t n = static_cast<size_t>(to) - w.from;
    pmlab_trace::FileWrite write = w.write;
    // Past the view made before the call (64 MiB at least): grown to cover it, its new pages read as they are
    // now, so what the call wrote there is taken as where the file started.
    if (w.from + n <= write.viewed || pmlab_trace::file_will_write(w.fd, w.from, n, &write)) {
      write.offset = w.from;
      pmlab_trace::file_wrote(write, n, reinterpret_cast<uintptr_t>(site));
    }
  }
  errno = saved_errno;
}

// `call` (the real one) on `f`, which may write `n` bytes more than the stream holds, reported from `ra`.
template <class Call>
auto traced_stream(void* ra, FILE* f, size_t n, Call&& call) {
  StreamWrite w;
  const bool traced = stream_will_write(f, n, &w);
  const auto r = call();
  if (traced) stream_wrote(w, ra);
  return r;
}

int flush_stream(void* ra, FILE* f) {
  PMLAB_REAL(fflush, nullptr);
  return traced_stream(ra, f, 0, [&] { return real_fn(f); });
}

// A seek, close or reopen of a stream of a --pool file writes out its buffer first: flushed, traced.
void flush_before(void* ra, FILE* f) {
  if (f != nullptr && __fpending(f) > 0 && is_pool_stream(f)) flush_stream(ra, f);
}

// An fopen or freopen of `path` in `mode` by `open` (the real call): "w" cuts a --pool file to nothing.
template <class Open>
FILE* traced_fopen(void* ra, const char* path, const char* mode, Open&& open) {
  const bool cuts = path != nullptr && mode != nullptr && std::strchr(mode, 'w') != nullptr;
  return opened(cuts ? pmlab_trace::detail::traced_resize(ra, -1, AT_FDCWD, path, 0, open) : open());
}

}  // namespace

void pmlab_trace::flush_pool_streams() noexcept {
  std::vector<FILE*> open;
  {
    PoolStreams& s = pool_streams();
    std::lock_guard lock(s.mutex);
    open = s.open;
  }
  for (FILE* f : open) flush_before(__builtin_return_address(0), f);
}

extern "C" {

__attribute__((visibility("default"))) size_t fwrite(const void* p, size_t size, size_t count, FILE* f) {
  PMLAB_REAL(fwrite, nullptr);
  return traced_stream(__builtin_return_address(0), f, size * count, [&] { return real_fn(p, size, count, f); });
}
__attribute__((visibility("default"))) size_t fwrite_unlocked(const void* p, size_t size, size_t count, FILE* f) {
  PMLAB_REAL(fwrite_unlocked, nullptr);
  return traced_stream(__builtin_return_address(0), f, size * count, [&] { return real_fn(p, size, count, f); });
}
__attribute__((visibility("default"))) int fputs(const char* s, FILE* f) {
  PMLAB_REAL(fputs, nullptr);
  return traced_stream(__builtin_return_address(0), f, std::strlen(s), [&] { return real_fn(s, f); });
}
__attribute__((visibility("default"))) int fputs_unlocked(const char* s, FILE* f) {
  PMLAB_REAL(fputs_unlocked, nullptr);
  return traced_stream(__builtin_return_address(0), f, std::strlen(s), [&] { return real_fn(s, f); });
}
__attribute__((visibility("default"))) int fputc(int c, FILE* f) {
  PMLAB_REAL(fputc, nullptr);
  return traced_stream(__builtin_return_address(0), f, 1, [&] { return real_fn(c, f); });
}
__attribute__((visibility("default"))) int fputc_unlocked(int c, FILE* f) {
  PMLAB_REAL(fputc_unlocked, nullptr);
  return traced_stream(__builtin_return_address(0), f, 1, [&] { return real_fn(c, f); });
}
// putc is fputc where it is a function, not a macro (C11 7.21.7.8).
__attribute__((visibility("default"), alias("fputc"))) int putc(int c, FILE* f);
__attribute__((visibility("default"), alias("fputc_unlocked"))) int putc_unlocked(int c, FILE* f);
// What the inline putc macros call when the buffer is full.
__attribute__((visibility("default"))) int __overflow(FILE* f, int c) {
  PMLAB_REAL(__overflow, nullptr);
  return traced_stream(__builtin_return_address(0), f, 1, [&] { return real_fn(f, c); });
}
__attribute__((visibility("default"))) int vfprintf(FILE* f, const char* format, va_list args) {
  PMLAB_REAL(vfprintf, nullptr);
  return traced_stream(__builtin_return_address(0), f, 0, [&] { return real_fn(f, format, args); });
}
__attribute__((visibility("default"))) int fprintf(FILE* f, const char* format, ...) {
  PMLAB_REAL(vfprintf, nullptr);
  va_list args;
  va_start(args, format);
  const int r = traced_stream(__builtin_return_address(0), f, 0, [&] { return real_fn(f, format, args); });
  va_end(args);
  return r;
}
// The fortified C library's (_FORTIFY_SOURCE) forms.
__attribute__((visibility("default"))) int __vfprintf_chk(FILE* f, int flag, const char* format, va_list args) {
  PMLAB_REAL(__vfprintf_chk, nullptr);
  return traced_stream(__builtin_return_address(0), f, 0, [&] { return real_fn(f, flag, format, args); });
}
__attribute__((visibility("default"))) int __fprintf_chk(FILE* f, int flag, const char* format, ...) {
  PMLAB_REAL(__vfprintf_chk, nullptr);
  va_list args;
  va_start(args, format);
  const int r = traced_stream(__builtin_return_address(0), f, 0, [&] { return real_fn(f, flag, format, args); });
  va_end(args);
  return r;
}

// fflush(NULL) flushes every stream: those of --pool files one by one first, traced.
__attribute__((visibility("default"))) int fflush(FILE* f) {
  PMLAB_REAL(fflush, nullptr);
  if (f == nullptr) pmlab_trace::flush_pool_streams();
  return traced_stream(__builtin_return_address(0), f, 0, [&] { return real_fn(f); });
}
__attribute__((visibility("default"))) int fflush_unlocked(FILE* f) {
  PMLAB_REAL(fflush_unlocked, nullptr);
  if (f == nullptr) pmlab_trace::flush_pool_streams();
  return traced_stream(__builtin_return_address(0), f, 0, [&] { return real_fn(f); });
}
__attribute__((visibility("default"))) int fclose(FILE* f) {
  PMLAB_REAL(fclose, nullptr);
  flush_before(__builtin_return_address(0), f);
  forget(f);
  return real_fn(f);
}
// fcloseall closes every stream with the C library's own fclose: the list of streams goes with them.
__attribute__((visibility("default"))) int fcloseall() {
  PMLAB_REAL(fcloseall, nullptr);
  pmlab_trace::flush_pool_streams();
  {
    PoolStreams& s = pool_streams();
    std::lock_guard lock(s.mutex);
    s.open.clear();
  }
  return real_fn();
}
__attribute__((visibility("default"))) int fseek(FILE* f, long at, int whence) {
  PMLAB_REAL(fseek, nullptr);
  flush_before(__builtin_return_address(0), f);
  return real_fn(f, at, whence);
}
__attribute__((visibility("default"))) int fseeko(FILE* f, off_t at, int whence) {
  PMLAB_REAL(fseeko, nullptr);
  flush_before(__builtin_return_address(0), f);
  return real_fn(f, at, whence);
}
__attribute__((visibility("default"))) int fsetpos(FILE* f, const fpos_t* at) {
  PMLAB_REAL(fsetpos, nullptr);
  flush_before(__builtin_return_address(0), f);
  return real_fn(f, at);
}
__attribute__((visibility("default"))) int fsetpos64(FILE* f, const fpos64_t* at) {
  PMLAB_REAL(fsetpos64, nullptr);
  flush_before(__builtin_return_address(0), f);
  return real_fn(f, at);
}
__attribute__((visibility("default"))) void rewind(FILE* f) {
  PMLAB_REAL(rewind, nullptr);
  flush_before(__builtin_return_address(0), f);
  real_fn(f);
}

__attribute__((visibility("default"))) FILE* fopen(const char* path, const char* mode) {
  PMLAB_REAL(fopen, nullptr);
  return traced_fopen(__builtin_return_address(0), path, mode, [&] { return real_fn(path, mode); });
}
__attribute__((visibility("default"))) FILE* freopen(const char* path, const char* mode, FILE* f) {
  PMLAB_REAL(freopen, nullptr);
  flush_before(__builtin_return_address(0), f);
  forget(f);
  return traced_fopen(__builtin_return_address(0), path, mode, [&] { return real_fn(path, mode, f); });
}
__attribute__((visibility("default"))) FILE* fdopen(int fd, const char* mode) {
  PMLAB_REAL(fdopen, nullptr);
  return opened(real_fn(fd, mode));
}
// On a 64-bit C library each `64` form is the same call as its plain one.
__attribute__((visibility("default"), alias("fopen"))) FILE* fopen64(const char* path, const char* mode);
__attribute__((visibility("default"), alias("freopen"))) FILE* freopen64(const char* path, const char* mode, FILE* f);
__attribute__((visibility("default"), alias("fseeko"))) int fseeko64(FILE* f, off64_t at, int whence);

}  // extern "C"
