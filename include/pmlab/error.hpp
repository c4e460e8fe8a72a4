// pmlab/error.hpp: the exception pmlab's C++ API throws.
//
// The C++ API reports every failure the C API returns as a code (pmlab/pmlab.h) by throwing Error with
// that code and the same one-line message; a failure of the user's own making inside a transaction
// (their exception) passes through unchanged after the transaction is undone.
#ifndef PMLAB_ERROR_HPP
#define PMLAB_ERROR_HPP

#include <stdexcept>
#include <string>

#include <pmlab/pmlab.h>

namespace pmlab {
// The ABI version of the C++ API: a release that changes it moves the API to a new inline namespace, so
// a program built against another one fails to link instead of misbehaving (docs/library.md).
inline namespace v0 {

// A failure of a pmlab call: its PMLAB_E_* code and a one-line message (what()).
class Error : public std::runtime_error {
 public:
  // Made by pmlab; a program may throw one too (from a transaction body, it undoes the transaction).
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  // A PMLAB_E_* code (pmlab/pmlab.h).
  int code() const noexcept { return code_; }
  // The `pmlab` command's exit code for it.
  int exit_code() const noexcept { return pmlab_exit_code(code_); }

 private:
  int code_;
};

}  // namespace v0
}  // namespace pmlab

#endif  // PMLAB_ERROR_HPP
