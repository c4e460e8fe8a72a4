// The function an interposed call forwards to: the next definition after the runtime's (the C library's,
// libpmem's). Internal to the runtime (src/pmlab-trace).
#pragma once

#include <dlfcn.h>
#include <unistd.h>

namespace pmlab_trace::detail {

template <class F>
F real(const char* name, const char* version) {
  void* f = version != nullptr ? dlvsym(RTLD_NEXT, name, version) : nullptr;
  if (f == nullptr) f = dlsym(RTLD_NEXT, name);
  return reinterpret_cast<F>(f);
}

}  // namespace pmlab_trace::detail

// Declares real_fn, the real `name` (of symbol version `version` where given).
#define PMLAB_REAL(name, version)                                                         \
  static const auto real_fn = pmlab_trace::detail::real<decltype(&name)>(#name, version); \
  if (real_fn == nullptr) _exit(127); /* a symbol the program linked is gone */
