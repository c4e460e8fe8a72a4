#include "pmlab/pmdk/persistence.hpp"

#include <atomic>
#include <string>

#ifdef PMLAB_HAVE_LIBPMEMOBJ
#include <dlfcn.h>
#include <libpmem.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pmlab/persist/counters.hpp"
#endif

#include "pmlab/common/process_state.hpp"

namespace pmlab::pmdk {
namespace {
std::atomic<bool> g_count{false};
std::atomic<bool> g_elide_flush{false};
std::atomic<bool> g_elide_fence{false};
std::atomic<bool> g_reached{false};
std::atomic<persist::Observer*> g_observer{nullptr};
}  // namespace

void set_persistence(const Persistence& p) noexcept {
  g_count.store(p.count, std::memory_order_relaxed);
  g_elide_flush.store(p.elide_flush, std::memory_order_relaxed);
  g_elide_fence.store(p.elide_fence, std::memory_order_relaxed);
  g_observer.store(p.observer, std::memory_order_release);
}
Persistence persistence() noexcept {
  return {g_count.load(std::memory_order_relaxed), g_elide_flush.load(std::memory_order_relaxed),
          g_elide_fence.load(std::memory_order_relaxed), g_observer.load(std::memory_order_acquire)};
}
bool interposed() noexcept { return g_reached.load(std::memory_order_relaxed); }

namespace {
// A run switches these for itself (ScopedPersistence); after it they must be back to the default.
std::string describe_persistence() {
  const Persistence p = persistence();
  return std::string("count=") + (p.count ? "on" : "off") + " elide_flush=" + (p.elide_flush ? "on" : "off") +
         " elide_fence=" + (p.elide_fence ? "on" : "off") + " observer=" + (p.observer ? "set" : "none");
}
const StateProbeRegistration persistence_probe{"PMDK persistence switches", describe_persistence};
}  // namespace

#ifdef PMLAB_HAVE_LIBPMEMOBJ
namespace {

constexpr uintptr_t kLine = 64;
constexpr size_t kMovntThreshold = 256;  // libpmem's default PMEM_MOVNT_THRESHOLD

struct Real {
  void (*flush)(const void*, size_t);
  void (*drain)();
  void (*persist)(const void*, size_t);
  void* (*memcpy)(void*, const void*, size_t, unsigned);
  void* (*memmove)(void*, const void*, size_t, unsigned);
  void* (*memset)(void*, int, size_t, unsigned);
};

template <class F>
F lookup(const char* name) {
  void* f = dlvsym(RTLD_NEXT, name, "LIBPMEM_1.0");
  if (f == nullptr) f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "pmlab: error: libpmem's %s not found behind pmlab's interposer\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

const Real& real() {
  static const Real r{lookup<decltype(Real::flush)>("pmem_flush"),     lookup<decltype(Real::drain)>("pmem_drain"),
                      lookup<decltype(Real::persist)>("pmem_persist"), lookup<decltype(Real::memcpy)>("pmem_memcpy"),
                      lookup<decltype(Real::memmove)>("pmem_memmove"), lookup<decltype(Real::memset)>("pmem_memset")};
  g_reached.store(true, std::memory_order_relaxed);
  return r;
}

uint64_t lines_of(const void* addr, size_t len) noexcept {
  if (len == 0) return 0;
  const auto first = reinterpret_cast<uintptr_t>(addr) & ~(kLine - 1);
  const auto end = reinterpret_cast<uintptr_t>(addr) + len;
  return (end - first + kLine - 1) / kLine;
}

// The whole lines a flush of [addr, addr+len) writes back, as a Persister reports them.
void observe_flush(persist::Observer* o, const void* addr, size_t len) noexcept {
  if (o == nullptr || len == 0) return;
  const auto first = reinterpret_cast<uintptr_t>(addr) & ~(kLine - 1);
  o->on_writeback(reinterpret_cast<const void*>(first), lines_of(addr, len) * kLine, persist::Writeback::flush);
}

void count_flush(const void* addr, size_t len) noexcept {
  const uint64_t lines = lines_of(addr, len);
  persist::tls_counters.flushes += lines;
  persist::tls_counters.flushed_bytes += lines * kLine;
}

// Whether libpmem copies with non-temporal stores (else stores + line flushes) for these flags and length.
bool copies_nontemporally(size_t len, unsigned flags) noexcept {
  return (flags & (PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_WC)) ||
         (!(flags & (PMEM_F_MEM_TEMPORAL | PMEM_F_MEM_WB)) && len >= kMovntThreshold);
}

// How a pmem_memcpy & co. with `flags` and `len` writes its bytes back in this run: non-temporal stores
// where libpmem would use them (also with flushes switched off: libpmem keeps them on an eADR platform,
// as a Persister keeps copy_nt under eADR or elide_flush), else cached stores and line flushes, or no
// write-back at all when the caller asked for none or the run switched flushes off.
enum class CopyWriteback { none, nontemporal, flushed };

CopyWriteback copy_writeback(size_t len, unsigned flags, bool flush_on) noexcept {
  if (flags & PMEM_F_MEM_NOFLUSH) return CopyWriteback::none;
  if (copies_nontemporally(len, flags)) return CopyWriteback::nontemporal;
  return flush_on ? CopyWriteback::flushed : CopyWriteback::none;
}

// What the copy issued, counted (what this run switched off is not) and told to the observer (the device
// model) in the order it happened: the write-backs, then the fence (before the real drain, so emulation's
// wait overlaps it).
void count_and_observe_copy(void* dest, size_t len, unsigned flags, CopyWriteback wb, bool fence_on) noexcept {
  const bool drains = fence_on && !(flags & (PMEM_F_MEM_NODRAIN | PMEM_F_MEM_NOFLUSH));
  if (g_count.load(std::memory_order_relaxed)) {
    if (wb == CopyWriteback::nontemporal) persist::tls_counters.nt_bytes += len;
    if (wb == CopyWriteback::flushed) count_flush(dest, len);
    if (drains) persist::tls_counters.fences += 1;
  }
  if (persist::Observer* o = g_observer.load(std::memory_order_acquire)) {
    if (wb == CopyWriteback::nontemporal) o->on_writeback(dest, len, persist::Writeback::nt_store);
    if (wb == CopyWriteback::flushed) observe_flush(o, dest, len);
    if (drains) o->on_fence();
  }
}

template <class RealCopy, class PlainCopy>
void* copy(RealCopy real_copy, PlainCopy plain_copy, void* dest, size_t len, unsigned flags) {
  const bool flush_on = !g_elide_flush.load(std::memory_order_relaxed);
  const bool fence_on = !g_elide_fence.load(std::memory_order_relaxed);
  const CopyWriteback wb = copy_writeback(len, flags, flush_on);
  // Copy and write back without the drain, count and tell the model, then drain. libpmem's own drain
  // after a copy calls pmem_drain through its PLT, that is this file's pmem_drain, which would count the
  // fence a second time; the real drain here is called directly.
  void* out = dest;
  if (flush_on) out = real_copy(flags | PMEM_F_MEM_NODRAIN);
  else if (wb == CopyWriteback::nontemporal) out = real_copy(flags | PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_NODRAIN);
  else plain_copy();
  count_and_observe_copy(dest, len, flags, wb, fence_on);
  if (fence_on && !(flags & (PMEM_F_MEM_NODRAIN | PMEM_F_MEM_NOFLUSH))) {
    if (flush_on) real().drain();
    else __builtin_ia32_sfence();
  }
  return out;
}

}  // namespace
}  // namespace pmlab::pmdk

// The interposers: same signatures as <libpmem.h>.
extern "C" {

void pmem_flush(const void* addr, size_t len) {
  using namespace pmlab::pmdk;
  const Real& r = real();
  if (g_elide_flush.load(std::memory_order_relaxed)) return;
  if (g_count.load(std::memory_order_relaxed)) count_flush(addr, len);
  r.flush(addr, len);
  observe_flush(g_observer.load(std::memory_order_acquire), addr, len);
}

void pmem_drain(void) {
  using namespace pmlab::pmdk;
  const Real& r = real();
  if (g_elide_fence.load(std::memory_order_relaxed)) return;
  if (g_count.load(std::memory_order_relaxed)) pmlab::persist::tls_counters.fences += 1;
  if (pmlab::persist::Observer* o = g_observer.load(std::memory_order_acquire)) o->on_fence();
  r.drain();
}

void pmem_persist(const void* addr, size_t len) {
  pmem_flush(addr, len);
  pmem_drain();
}

void* pmem_memcpy(void* dest, const void* src, size_t len, unsigned flags) {
  using namespace pmlab::pmdk;
  const Real& r = real();
  return copy([&](unsigned f) { return r.memcpy(dest, src, len, f); }, [&] { std::memcpy(dest, src, len); }, dest, len,
              flags);
}

void* pmem_memmove(void* dest, const void* src, size_t len, unsigned flags) {
  using namespace pmlab::pmdk;
  const Real& r = real();
  return copy([&](unsigned f) { return r.memmove(dest, src, len, f); }, [&] { std::memmove(dest, src, len); }, dest,
              len, flags);
}

void* pmem_memset(void* dest, int c, size_t len, unsigned flags) {
  using namespace pmlab::pmdk;
  const Real& r = real();
  return copy([&](unsigned f) { return r.memset(dest, c, len, f); }, [&] { std::memset(dest, c, len); }, dest, len,
              flags);
}

// The fixed-flag forms libpmemlog and libpmemblk call (libpmem defines them the same way).
void* pmem_memcpy_nodrain(void* dest, const void* src, size_t len) {
  return pmem_memcpy(dest, src, len, PMEM_F_MEM_NODRAIN);
}
void* pmem_memcpy_persist(void* dest, const void* src, size_t len) { return pmem_memcpy(dest, src, len, 0); }
void* pmem_memmove_nodrain(void* dest, const void* src, size_t len) {
  return pmem_memmove(dest, src, len, PMEM_F_MEM_NODRAIN);
}
void* pmem_memmove_persist(void* dest, const void* src, size_t len) { return pmem_memmove(dest, src, len, 0); }
void* pmem_memset_nodrain(void* dest, int c, size_t len) { return pmem_memset(dest, c, len, PMEM_F_MEM_NODRAIN); }
void* pmem_memset_persist(void* dest, int c, size_t len) { return pmem_memset(dest, c, len, 0); }

}  // extern "C"
#endif
