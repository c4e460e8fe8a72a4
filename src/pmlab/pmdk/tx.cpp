#include "pmlab/pmdk/tx.hpp"

#include <atomic>
#include <string>

#ifdef PMLAB_HAVE_LIBPMEMOBJ
#include <libpmemobj.h>
#endif

#include "pmlab/common/process_state.hpp"

namespace pmlab::pmdk::tx {
namespace {
std::atomic<bool> g_logging{true};
std::atomic<uint64_t> g_aborts{0};
std::atomic<FaultHook> g_fault_hook{nullptr};

inline void fault_point() noexcept {
  if (FaultHook h = g_fault_hook.load(std::memory_order_relaxed); h != nullptr) [[unlikely]]
    h();
}
}  // namespace

void set_logging(bool on) noexcept { g_logging.store(on, std::memory_order_relaxed); }
bool logging() noexcept { return g_logging.load(std::memory_order_relaxed); }
uint64_t aborts() noexcept { return g_aborts.load(std::memory_order_relaxed); }
void set_fault_hook(FaultHook hook) noexcept { g_fault_hook.store(hook, std::memory_order_relaxed); }

namespace {
// The overhead decomposition switches logging off for one run; the crash tests set a fault hook.
std::string describe_tx_switches() {
  return std::string("logging=") + (logging() ? "on" : "off") +
         " fault_hook=" + (g_fault_hook.load(std::memory_order_relaxed) ? "set" : "none");
}
const StateProbeRegistration tx_probe{"PMDK transaction switches", describe_tx_switches};
}  // namespace

#ifdef PMLAB_HAVE_LIBPMEMOBJ
bool available() noexcept { return true; }

bool in_transaction() noexcept { return pmemobj_tx_stage() == TX_STAGE_WORK; }

void snapshot(const void* p, size_t len) noexcept {
  if (pmemobj_tx_stage() != TX_STAGE_WORK) return;
  fault_point();
  if (g_logging.load(std::memory_order_relaxed)) pmemobj_tx_add_range_direct(p, len);
  else pmemobj_tx_xadd_range_direct(p, len, POBJ_XADD_NO_SNAPSHOT);
}

bool add_fresh(const void* p, size_t len) noexcept {
  if (pmemobj_tx_stage() != TX_STAGE_WORK) return false;
  fault_point();
  pmemobj_tx_xadd_range_direct(p, len, POBJ_XADD_NO_SNAPSHOT);
  return true;
}

Scope::Scope(void* pool) noexcept {
  if (pool == nullptr) return;
  if (pmemobj_tx_begin(static_cast<PMEMobjpool*>(pool), nullptr, TX_PARAM_NONE) != 0) {
    // A failed begin still enters the transaction (in its abort stage): end it.
    pmemobj_tx_end();
    g_aborts.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  active_ = true;
}

Scope::~Scope() {
  if (!active_) return;
  if (pmemobj_tx_stage() == TX_STAGE_WORK) pmemobj_tx_commit();
  if (pmemobj_tx_end() != 0) g_aborts.fetch_add(1, std::memory_order_relaxed);
}
#else
bool available() noexcept { return false; }
bool in_transaction() noexcept { return false; }
void snapshot(const void*, size_t) noexcept {}
bool add_fresh(const void*, size_t) noexcept { return false; }
Scope::Scope(void*) noexcept {}
Scope::~Scope() = default;
#endif

}  // namespace pmlab::pmdk::tx
