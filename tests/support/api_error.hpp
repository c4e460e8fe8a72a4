// The public API's error code of a call: PMLAB_OK when it returns, the pmlab::Error's code when it throws.
#pragma once

#include <pmlab/error.hpp>
#include <pmlab/pmlab.h>

#include <functional>

namespace pmlab::testing {

inline int code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const pmlab::Error& e) { return e.code(); }
  return PMLAB_OK;
}

}  // namespace pmlab::testing
