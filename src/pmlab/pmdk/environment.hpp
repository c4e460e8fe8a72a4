// What a run needs to put PMDK's pools beside its own: the directory of the run's pool file, and
// PMEM_IS_PMEM_FORCE set before PMDK asks whether a mapping is PMEM (it asks once, at create or open: on
// an emulated pool, /dev/shm or a plain file, it would say no and msync every persist). Used by every
// suite with a PMDK peer or PMDK mode (libpmemlog, libpmemblk, libpmemobj).
#pragma once

#include <string>

#include "pmlab/common/status.hpp"

namespace pmlab::pmdk {

// The directory of the file mapped at `addr` (the run's pool). unsupported: the region is not backed by
// a file (a DRAM medium); not_found: no mapping holds it.
Result<std::string> directory_of_mapping(const void* addr);

// PMEM_IS_PMEM_FORCE as PMDK will read it: set to 1 unless already set (the user's value stands).
// Returns the value in effect, which the bench records with every run that uses PMDK.
int force_pmem_is_pmem();

}  // namespace pmlab::pmdk
