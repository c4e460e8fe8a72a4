#include "pmlab/persist/tracing_runtime.hpp"

#include <dlfcn.h>

#include <cstring>

#include <pmlab/trace.h>

namespace pmlab::persist {

thread_local const void* tls_observed_call_site = nullptr;
thread_local const void* tls_entry_call_site = nullptr;

namespace {

// The runtime's entry points that take the site to name. pmlab/trace.h's calls name their caller, which
// here would be this reporter; a runtime without these (an older pmlab's) still gets those.
struct SiteEntryPoints {
  void (*flush)(const void*, size_t, const void*) = nullptr;
  void (*fence)(const void*) = nullptr;
  void (*nt_store)(const void*, size_t, const void*) = nullptr;

  SiteEntryPoints() {
    resolve(flush, "pmlab_trace_flush_from");
    resolve(fence, "pmlab_trace_fence_from");
    resolve(nt_store, "pmlab_trace_nt_store_from");
  }
  template <class F>
  static void resolve(F& f, const char* name) {
    void* p = dlsym(RTLD_DEFAULT, name);
    std::memcpy(&f, &p, sizeof p);
  }
};

// After the instructions, as pmlab/trace.h asks: a write-back once it ran, a fence before it runs (the
// Persister calls on_fence first), so the runtime's crash point lies before the fence.
class TracingRuntimeReporter final : public Observer {
 public:
  void on_writeback(const void* addr, size_t len, Writeback kind, const std::source_location&) noexcept override {
    if (kind == Writeback::nt_store) {
      if (at_.nt_store != nullptr) at_.nt_store(addr, len, tls_observed_call_site);
      else pmlab_nt_store(addr, len);
    } else {
      if (at_.flush != nullptr) at_.flush(addr, len, tls_observed_call_site);
      else pmlab_flush(addr, len);
    }
  }
  void on_fence(const std::source_location&) noexcept override {
    if (at_.fence != nullptr) at_.fence(tls_observed_call_site);
    else pmlab_fence();
  }

 private:
  SiteEntryPoints at_;
};

}  // namespace

Observer* tracing_runtime_observer() noexcept {
  static Observer* const traced = pmlab_traced() ? new TracingRuntimeReporter : nullptr;  // never destroyed:
  return traced;  // persisters may outlive static destruction (a pool closed by an atexit handler)
}

}  // namespace pmlab::persist
