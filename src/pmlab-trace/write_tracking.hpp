// Finding the stores to persistent regions: userfaultfd write-protection where the kernel offers it
// (reported faults, or asynchronous marks and PAGEMAP_SCAN), else a comparison of every page with its
// shadow. Internal to the runtime (src/pmlab-trace); every call holds the tracer's lock.
#pragma once

#include <cstdint>

#include "pmlab-trace/state.hpp"

namespace pmlab_trace::detail {

// Write-protects a new region (opening the userfaultfd on first use); false when it cannot, and the region
// is then compared whole at every capture (t.uffd_problem says why).
bool protect(Tracer& t, Region& r);
// Records the lines of [from, to) (line-aligned, inside r) that changed since last recorded.
void compare_lines(Tracer& t, const Region& r, uintptr_t from, uintptr_t to, trace::LineHow how);
// Every store to the region since its last capture becomes line records.
void capture(Tracer& t, Region& r);
Region* region_of(Tracer& t, uintptr_t p);

}  // namespace pmlab_trace::detail
