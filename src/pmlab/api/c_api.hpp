// The C API's handles that more than one file of it uses (pmlab_ptm, pmlab_tx), and the edge every
// pmlab_tx_* / pmlab_map_* call goes through: a transaction that must start over (ptm::Abandoned) dooms
// the handle, so every later call on it says so.
#pragma once

#include <pmlab/pmlab.h>
#include <pmlab/ptm.hpp>

#include "pmlab/api/errors.hpp"
#include "pmlab/ptm/common/ptm.hpp"

struct pmlab_ptm {
  pmlab::Ptm ptm;
};

struct pmlab_tx {
  pmlab::Transaction* tx;
  bool doomed;  // an attempt that must start over: every later call says so too
};

namespace pmlab::api {

// Runs f(transaction) for a C call on `tx`: PMLAB_OK, PMLAB_E_RETRY, or the code of what f threw.
template <class F>
int tx_call(pmlab_tx* tx, F&& f) noexcept {
  if (tx == nullptr) return fail(PMLAB_E_INVALID_ARGUMENT, "null pmlab_tx");
  if (tx->doomed) return PMLAB_E_RETRY;
  try {
    f(*tx->tx);
    return PMLAB_OK;
  } catch (const ptm::Abandoned&) {
    tx->doomed = true;
    return PMLAB_E_RETRY;
  } catch (...) { return fail_current_exception(); }
}

}  // namespace pmlab::api
