// The loader's calls, interposed so that code the program loads after its start (a plugin, a Python
// extension) has its own instructions trapped too (traps.cpp) before it runs.
//
// dlopen and dlsym act for their caller: dlopen searches the caller's RUNPATH for a bare name, expands
// $ORIGIN from the caller's directory and loads into the caller's namespace; dlsym with RTLD_DEFAULT or
// RTLD_NEXT looks from the caller. Called from a wrapper here, the caller would be the runtime. So each is
// entered by a stub that asks a route which function runs the call and jumps there, the call's own return
// address still on the stack: the C library's own where the caller matters or nothing waits to be trapped,
// else a function here that makes the call and traps what it loaded. A module loaded by a bare name is trapped
// at the program's next dlsym on a handle, before the address it asks for is returned.
#include <dlfcn.h>

#include <cerrno>
#include <cstring>

#include "pmlab-trace/tracer.hpp"

namespace {

using DlopenFn = void* (*)(const char*, int);
using DlsymFn = void* (*)(void*, const char*);

// The C library's, by version (dlsym itself is interposed here; dlvsym is not).
void* libc_function(const char* name) {
  for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5"})
    if (void* f = dlvsym(RTLD_NEXT, name, version)) return f;
  return nullptr;
}
DlopenFn libc_dlopen() {
  static const auto f = reinterpret_cast<DlopenFn>(libc_function("dlopen"));
  return f;
}
DlsymFn libc_dlsym() {
  static const auto f = reinterpret_cast<DlsymFn>(libc_function("dlsym"));
  return f;
}

void* dlopen_then_trap(const char* file, int mode) {
  void* handle = libc_dlopen()(file, mode);
  const int saved = errno;
  if (handle != nullptr) pmlab_trace::traps_after_load();
  errno = saved;
  return handle;
}

void* trap_then_dlsym(void* handle, const char* name) {
  const int saved = errno;
  pmlab_trace::traps_after_load();
  errno = saved;
  return libc_dlsym()(handle, name);
}

}  // namespace

// Called by the stubs below with the call's first argument; they jump to what it returns.
extern "C" __attribute__((visibility("hidden"))) void* pmlab_trace_route_dlopen(const char* file) {
  // A path with a slash and no $ token names one file whoever asks (a dlmopen namespace aside).
  const bool caller_free = file != nullptr && std::strchr(file, '/') != nullptr && std::strchr(file, '$') == nullptr;
  return caller_free && pmlab_trace::traps_waiting() ? reinterpret_cast<void*>(dlopen_then_trap)
                                                     : reinterpret_cast<void*>(libc_dlopen());
}

extern "C" __attribute__((visibility("hidden"))) void* pmlab_trace_route_dlsym(void* handle) {
  const bool caller_free = handle != RTLD_DEFAULT && handle != RTLD_NEXT;
  return caller_free && pmlab_trace::traps_waiting() ? reinterpret_cast<void*>(trap_then_dlsym)
                                                     : reinterpret_cast<void*>(libc_dlsym());
}

// Each stub keeps both arguments across the route's call (the stack 16-byte aligned for it) and jumps with
// the return address the program's call pushed.
#define PMLAB_ROUTED_STUB(name)            \
  asm(".pushsection .text\n"               \
      ".globl " #name                      \
      "\n"                                 \
      ".type " #name ", @function\n" #name \
      ":\n"                                \
      "  endbr64\n"                        \
      "  push %rdi\n"                      \
      "  push %rsi\n"                      \
      "  sub $8, %rsp\n"                   \
      "  call pmlab_trace_route_" #name    \
      "\n"                                 \
      "  add $8, %rsp\n"                   \
      "  pop %rsi\n"                       \
      "  pop %rdi\n"                       \
      "  jmp *%rax\n"                      \
      ".size " #name ", .-" #name          \
      "\n"                                 \
      ".popsection\n")

PMLAB_ROUTED_STUB(dlopen);
PMLAB_ROUTED_STUB(dlsym);
