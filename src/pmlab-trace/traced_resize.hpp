// A call that makes a persistent file as long as it says, traced around the real call: ftruncate, truncate,
// an open with O_TRUNC (interpose_files.cpp), an fopen that truncates (interpose_stdio.cpp). Internal to the
// runtime (src/pmlab-trace).
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <type_traits>

#include "pmlab-trace/tracer.hpp"

namespace pmlab_trace::detail {

// `resize` (the real call) makes the file `fd` (or at `path` of `dirfd`) `length` bytes long; it returns 0
// or, for an open, the new descriptor or stream, and fails with a negative number or null.
template <class Resize>
auto traced_resize(void* ra, int fd, int dirfd, const char* path, off64_t length, Resize&& resize) {
  TracedFile file;
  const bool traced = length >= 0 && file_will_resize(fd, dirfd, path, static_cast<uint64_t>(length), &file);
  const auto r = resize();
  bool done = false;
  if constexpr (std::is_pointer_v<decltype(r)>) done = r != nullptr;
  else done = r >= 0;
  if (done && traced) {
    const int saved_errno = errno;
    file_resized(file, static_cast<uint64_t>(length), reinterpret_cast<uintptr_t>(ra));
    errno = saved_errno;
  }
  return r;
}

}  // namespace pmlab_trace::detail
