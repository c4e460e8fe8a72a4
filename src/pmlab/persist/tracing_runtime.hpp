// pmlab's tracing runtime (libpmlab-trace.so, which `pmlab crash exec` preloads) sees a program's
// persistence through libpmem, libpmem2 and pmlab/trace.h, never the flush, fence and non-temporal store
// instructions a Persister issues itself. In a process the runtime traces, every Persister is created
// with this observer attached, which tells the runtime of each of them: a program built on pmlab's library
// is crash-tested by `pmlab crash exec` as it is, like a PMDK program.
#pragma once

#include "pmlab/persist/observer.hpp"

namespace pmlab::persist {

// The observer that reports to the runtime while it traces this process; nullptr otherwise (the runtime
// is asked once per process).
Observer* tracing_runtime_observer() noexcept;

// The call site of the observed Persister call in progress on this thread: the return address into the
// design that called it, which the reporter names to the runtime as where the write-back or fence was made.
extern thread_local const void* tls_observed_call_site;

}  // namespace pmlab::persist
