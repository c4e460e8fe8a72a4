#include "pmlab/api/errors.hpp"

#include <new>
#include <string>

#include <pmlab/pmlab.h>
#include <pmlab/version.h>

namespace pmlab::api {

namespace {
thread_local std::string last_message;

// The C codes are the internal ones, negated, in the same order (pmlab.h lists them).
#define PMLAB_X(code, exit_code, summary) +1
constexpr int kCodes = 0 PMLAB_ERROR_CODES(PMLAB_X);
#undef PMLAB_X
static_assert(kCodes == 15 && static_cast<int>(Errc::failed) == -PMLAB_E_FAILED &&
                  static_cast<int>(Errc::pool_full) == -PMLAB_E_POOL_FULL &&
                  static_cast<int>(Errc::invalid_argument) == -PMLAB_E_INVALID_ARGUMENT,
              "pmlab.h's codes follow PMLAB_ERROR_CODES");
}  // namespace

int status_code(Errc code) noexcept { return -static_cast<int>(code); }

int fail(int code, const char* message) noexcept {
  try {
    last_message = message;
  } catch (...) {  // no memory for the message: the code alone
    last_message.clear();
  }
  return code;
}

int fail(const Status& status) noexcept { return fail(status_code(status.code()), status.message().c_str()); }

void raise(const Status& status) { throw Error(status_code(status.code()), status.message()); }

void raise(int code, const std::string& message) { throw Error(code, message); }

void moved_from(const char* type) { raise(PMLAB_E_INVALID_ARGUMENT, std::string("use of a moved-from ") + type); }

int fail_current_exception() noexcept {
  try {
    throw;
  } catch (const Error& e) { return fail(e.code(), e.what()); } catch (const std::bad_alloc&) {
    return fail(PMLAB_E_FAILED, "out of memory");
  } catch (const std::exception& e) { return fail(PMLAB_E_FAILED, e.what()); } catch (...) {
    return fail(PMLAB_E_FAILED, "unknown exception");
  }
}

}  // namespace pmlab::api

extern "C" {

const char* pmlab_errormsg(void) { return pmlab::api::last_message.c_str(); }

const char* pmlab_strerror(int status) {
  if (status == PMLAB_E_RETRY) return "retry the transaction";
  switch (static_cast<pmlab::Errc>(-status)) {
#define PMLAB_X(code, exit_code, summary) \
  case pmlab::Errc::code: return summary;
    PMLAB_ERROR_CODES(PMLAB_X)
#undef PMLAB_X
  }
  return "unknown status";
}

int pmlab_exit_code(int status) {
  if (status == PMLAB_OK) return 0;
  if (status > 0 || -status > static_cast<int>(pmlab::Errc::failed)) return 1;
  return pmlab::errc_exit_code(static_cast<pmlab::Errc>(-status));
}

const char* pmlab_version(void) { return PMLAB_VERSION_STRING; }

}  // extern "C"
