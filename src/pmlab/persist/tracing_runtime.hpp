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

// The return address into the user's code of the public API call in progress on this thread (a public
// Persister's flush, pmlab_pool_persist), or into the design that called a Persister function which makes
// calls of its own (store_changed), or nullptr. Where set, the observed Persister calls name it instead of
// their own caller, which is the forwarding function inside libpmlab.
extern thread_local const void* tls_entry_call_site;

// Sets tls_entry_call_site for one forwarded call; the outermost entry's caller is the one named.
class EntryCallSite {
 public:
  explicit EntryCallSite(const void* site) noexcept : nested_(tls_entry_call_site != nullptr) {
    if (!nested_) tls_entry_call_site = site;
  }
  ~EntryCallSite() {
    if (!nested_) tls_entry_call_site = nullptr;
  }
  EntryCallSite(const EntryCallSite&) = delete;
  EntryCallSite& operator=(const EntryCallSite&) = delete;

 private:
  bool nested_;  // inside another entry's call: that one's caller is named
};

// What an observed call names as its site: the public API's caller where one is in progress, else `own`
// (the return address into the design that called the Persister).
inline const void* observed_call_site(const void* own) noexcept {
  return tls_entry_call_site != nullptr ? tls_entry_call_site : own;
}

}  // namespace pmlab::persist
