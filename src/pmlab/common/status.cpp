#include "pmlab/common/status.hpp"

namespace pmlab {

const char* errc_name(Errc code) noexcept {
  switch (code) {
#define PMLAB_X(c, exit_code, summary) \
  case Errc::c: return #c;
    PMLAB_ERROR_CODES(PMLAB_X)
#undef PMLAB_X
  }
  return "unknown";
}

int errc_exit_code(Errc code) noexcept {
  switch (code) {
#define PMLAB_X(c, exit_code, summary) \
  case Errc::c: return exit_code;
    PMLAB_ERROR_CODES(PMLAB_X)
#undef PMLAB_X
  }
  return 1;
}

const std::string& Status::message() const noexcept {
  static const std::string kNone;
  return rep_ ? rep_->message : kNone;
}

}  // namespace pmlab
