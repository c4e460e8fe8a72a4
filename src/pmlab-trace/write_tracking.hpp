// Finding the stores to persistent regions: userfaultfd write-protection where the kernel offers it (faults
// as signals to the storing thread, reported faults, or asynchronous marks and PAGEMAP_SCAN), else a
// comparison of every page with its shadow. Internal to the runtime (src/pmlab-trace); every call holds the tracer's
// lock.
#pragma once

#include <signal.h>

#include <cstdint>

#include "pmlab-trace/state.hpp"

namespace pmlab_trace::detail {

// Write-protects a new region (opening the userfaultfd on first use); false when it cannot, and the region
// is then compared whole at every capture (t.uffd_problem says why).
bool protect(Tracer& t, Region& r);
// Bit k: line k of the `lines` (at most 64) lines at `a` differs from line k at `b`.
uint64_t changed_lines(const std::byte* a, const std::byte* b, size_t lines);
// Records the lines of [from, to) (line-aligned, inside r) that changed since last recorded.
void compare_lines(Tracer& t, const Region& r, uintptr_t from, uintptr_t to, trace::LineHow how);
// Records that the line at `line` now holds `bytes` (its 64 bytes in memory, when null).
void record_line(Tracer& t, const Region& r, uintptr_t line, trace::LineHow how, const std::byte* bytes = nullptr);
// Every store to the region since its last capture becomes line records (a view of a file written by calls
// has none: its calls record what they wrote).
void capture(Tracer& t, Region& r);
Region* region_of(Tracer& t, uintptr_t p);
// How long the file a region shows is now, in bytes: by its path, or where it was renamed or removed since,
// through the region itself. -1 where that cannot be told or the file is no regular file (a device's mapping
// has no end but its own).
off_t file_size_now(const Region& r);
// Signals mode: the C library call about to make the kernel store into [from, to) finds those pages
// unprotected, and they stay so until kernel_stored says it returned.
void kernel_will_store(Tracer& t, uintptr_t from, uintptr_t to);
void kernel_stored(Tracer& t, uintptr_t from, uintptr_t to);
// The program is about to store into [from, to) (a copy the runtime interposes): the protected pages there
// are noted written and made writable now, a call a run of pages, rather than a fault each. Only where
// faults are how stores are found (signals, faults): a page lifted in scan mode would not be reported.
void will_store(Tracer& t, uintptr_t from, uintptr_t to);
// The C library's sigaction (the runtime's own calls must not reach its interposed one).
int libc_sigaction(int sig, const struct sigaction* act, struct sigaction* old);
// Takes a signal that is not the runtime's as the program's own action `own` would, as the kernel would.
void forward_signal(struct sigaction& own, int sig, siginfo_t* info, void* context);

}  // namespace pmlab_trace::detail
