// Status and Result<T>: pmlab's error values.
//
// Expected outcomes are values, not exceptions (LeanStore's habit). Every error has a stable code from
// one list, and a one-line message that names the thing that is wrong; the CLI maps codes to exit codes.
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace pmlab {

// X(code, exit_code, summary). Exit codes are documented in README ("Exit codes").
#define PMLAB_ERROR_CODES(X)                        \
  X(ok, 0, "success")                               \
  X(invalid_argument, 2, "invalid argument")        \
  X(not_found, 3, "not found")                      \
  X(already_exists, 3, "already exists")            \
  X(io_error, 3, "I/O error")                       \
  X(no_space, 3, "no space")                        \
  X(permission_denied, 3, "permission denied")      \
  X(not_a_file, 3, "not a regular file")            \
  X(not_a_pool, 3, "not a pmlab pool")              \
  X(corrupted, 3, "corrupted")                      \
  X(wrong_layout, 3, "wrong layout")                \
  X(busy, 3, "in use")                              \
  X(pool_full, 3, "pool full")                      \
  X(unsupported, 4, "unsupported on this platform") \
  X(failed, 1, "failed")

enum class Errc {
#define PMLAB_X(code, exit_code, summary) code,
  PMLAB_ERROR_CODES(PMLAB_X)
#undef PMLAB_X
};

const char* errc_name(Errc code) noexcept;
int errc_exit_code(Errc code) noexcept;

// Success is a null pointer: building, returning and destroying an ok Status is one store and one test,
// which matters on paths that return one per operation (a log append: every store after a fence waits in
// the store queue for the drain). A moved-from Status is ok.
class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(Errc code, std::string message)
      : rep_(code == Errc::ok ? nullptr : std::make_unique<Rep>(Rep{code, std::move(message)})) {}
  Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  static Status success() noexcept { return {}; }

  bool ok() const noexcept { return rep_ == nullptr; }
  explicit operator bool() const noexcept { return ok(); }
  Errc code() const noexcept { return rep_ ? rep_->code : Errc::ok; }
  const std::string& message() const noexcept;
  int exit_code() const noexcept { return errc_exit_code(code()); }

 private:
  struct Rep {
    Errc code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

// A value or the Status that explains its absence; shaped like std::expected (absent from GCC 12).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design, like expected
  Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const noexcept { return value_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  const Status& status() const noexcept { return status_; }

  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

inline Status error(Errc code, std::string message) { return Status(code, std::move(message)); }

}  // namespace pmlab

// Propagates a failed Status or Result out of the calling function.
#define PMLAB_TRY(expr)                                              \
  do {                                                               \
    auto&& pmlab_try_ = (expr);                                      \
    if (!pmlab_try_.ok()) return ::pmlab::detail_status(pmlab_try_); \
  } while (0)

namespace pmlab {
inline const Status& detail_status(const Status& s) { return s; }
template <class T>
const Status& detail_status(const Result<T>& r) {
  return r.status();
}
}  // namespace pmlab
