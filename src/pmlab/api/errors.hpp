// How the public API reports an internal Status: a C code with this thread's message (the C API), or an
// Error thrown with both (the C++ API).
#pragma once

#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include <pmlab/error.hpp>
#include <pmlab/pmlab.h>

#include "pmlab/common/status.hpp"

namespace pmlab::api {

// The PMLAB_E_* code of an internal error code.
int status_code(Errc code) noexcept;
// Records `message` as this thread's last error (pmlab_errormsg) and returns `code`.
int fail(int code, const char* message) noexcept;
int fail(const Status& status) noexcept;
[[noreturn]] void raise(const Status& status);
[[noreturn]] void raise(int code, const std::string& message);
// The code of an exception caught at the C API's edge (Error, bad_alloc, anything else), recorded.
int fail_current_exception() noexcept;

// Runs `f` at the C API's edge: PMLAB_OK, or the code of what it threw (recorded for pmlab_errormsg).
template <class F>
int guarded(F&& f) noexcept {
  try {
    f();
    return 0;
  } catch (...) { return fail_current_exception(); }
}

// The object behind a public C++ handle (`type` names the class in the error): a moved-from handle is a
// caller's error, said as one.
[[noreturn, gnu::cold]] void moved_from(const char* type);
template <class Impl>
Impl& impl_of(const std::unique_ptr<Impl>& impl, const char* type) {
  if (!impl) [[unlikely]]
    moved_from(type);  // out of line: every call of the API starts here
  return *impl;
}

// The value a C caller left in an enum (a config member, a parameter), read as the int it is: C allows
// any int there, and loading one outside the enum's values as the C++ enum is undefined.
template <class Enum>
int c_enum_value(const Enum& member) noexcept {
  static_assert(sizeof(Enum) == sizeof(int));
  int value;
  std::memcpy(&value, &member, sizeof value);
  return value;
}

// A C visitor's nonzero return (a scan's, a log walk's), thrown out of the C++ walk it was called from
// and returned by the C call.
struct VisitorStopped {
  int rc;
};

// Opens or creates a C handle at the C API's edge: *handle is null unless make() returned the object it
// wraps (a Set, a Ptm, ...), and a null path or handle pointer is refused before anything is touched.
template <class Handle, class Make>
int new_handle(const char* path, Handle** handle, Make&& make) noexcept {
  if (path == nullptr || handle == nullptr) return fail(PMLAB_E_INVALID_ARGUMENT, "null path or handle");
  *handle = nullptr;
  return guarded([&] { *handle = new Handle{make()}; });
}

}  // namespace pmlab::api
