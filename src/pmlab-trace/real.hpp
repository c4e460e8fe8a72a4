// The function an interposed call forwards to: the next definition after the runtime's (the C library's,
// libpmem's). Internal to the runtime (src/pmlab-trace).
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <type_traits>

namespace pmlab_trace::detail {

template <class F>
F real(const char* name, const char* version) {
  void* f = version != nullptr ? dlvsym(RTLD_NEXT, name, version) : nullptr;
  if (f == nullptr) f = dlsym(RTLD_NEXT, name);
  return reinterpret_cast<F>(f);
}

// Where the program called syscall() while syscall() forwards to one of the interposed calls
// (interpose_syscall.cpp), else null. Static TLS, as state.hpp explains.
[[gnu::tls_model("initial-exec")]] extern thread_local void* tls_syscall_caller;

// The program's return address for an interposed call: `own`, unless syscall() forwarded the call.
inline void* reported_caller(void* own) { return tls_syscall_caller != nullptr ? tls_syscall_caller : own; }

// A system call of the runtime's own, made here: the C library's syscall() is one of the calls the runtime
// interposes (interpose_syscall.cpp), and calling it from the runtime would trace the runtime. As syscall()
// does: -1 with errno set on an error, else the kernel's result (x86-64's calling convention).
template <class... Args>
long raw_syscall(long number, Args... args) {
  static_assert(sizeof...(Args) <= 6);
  const auto word = [](auto v) {
    if constexpr (std::is_pointer_v<decltype(v)>) return reinterpret_cast<long>(v);
    else return static_cast<long>(v);
  };
  long a[6] = {word(args)...};
  register long r10 __asm__("r10") = a[3];
  register long r8 __asm__("r8") = a[4];
  register long r9 __asm__("r9") = a[5];
  long result;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  if (static_cast<unsigned long>(result) > -4096UL) {
    errno = static_cast<int>(-result);
    return -1;
  }
  return result;
}

}  // namespace pmlab_trace::detail

// The return address an interposed call reports as its caller's (see reported_caller()).
#define PMLAB_CALLER() pmlab_trace::detail::reported_caller(__builtin_return_address(0))

// Declares real_fn, the real `name` (of symbol version `version` where given).
#define PMLAB_REAL(name, version)                                                         \
  static const auto real_fn = pmlab_trace::detail::real<decltype(&name)>(#name, version); \
  if (real_fn == nullptr) _exit(127); /* a symbol the program linked is gone */
