// pmlab/pool.hpp: a pool file for a design of your own, with the Persister that makes its bytes durable.
//
//   auto pool = pmlab::Pool::open_or_create("/mnt/pmem/stack", 64 << 20, "mine.stack");
//   auto* head = reinterpret_cast<uint64_t*>(pool.data());
//   pool.persister().store8(head, 42);
//   pool.persister().persist(head, 8);                       // durable from here on
//
// A pool is a file (on fsdax persistent memory, or anywhere else as an emulation of it, on DRAM pages) or
// a DAX device, with a header naming its layout: open() refuses a pool of another layout, a file that is
// no pool, and a pool open elsewhere, in this process or another (an exclusive lock), each with its
// PMLAB_E_* code. The data area starts zero-filled at create. What a crash leaves there is the layout's to
// recover: open() maps the pool and checks its header; the design's own recovery runs next, through the
// same Persister (and `pmlab crash --load` crash-tests that recovery: pmlab/crash.hpp).
//
// Data is named by offsets from data(), never by pointers: a pool may be mapped at another address every
// time. Threads: one Pool is shared by any number of threads; what they write is the design's to order.
//
// Needs C++20, as pmlab/persist.hpp does.
#ifndef PMLAB_POOL_HPP
#define PMLAB_POOL_HPP

#if __cplusplus < 202002L
#error "pmlab/pool.hpp needs C++20 (its Persister names call sites with std::source_location)"
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <pmlab/error.hpp>
#include <pmlab/persist.hpp>

namespace pmlab {
inline namespace v0 {

// How a pool's Persister persists. By default the domain is the one the mapping reports (eADR where the
// platform says the CPU caches are durable, ADR on other persistent memory and on an emulated pool) and
// the flush the CPU's best (clwb, else clflushopt, else clflush). Asking for an instruction the CPU lacks
// is PMLAB_E_UNSUPPORTED; asking for eADR on a platform without it makes the program's durability the
// caller's claim, not the platform's.
struct PoolOptions {
  std::optional<Domain> domain;           // the durability domain to persist for; unset: the mapping's
  std::optional<FlushInstruction> flush;  // the write-back instruction; unset: the CPU's best
};

// An open pool: mapped, locked against every other open, until it is destroyed. Movable, not copyable.
class Pool {
 public:
  // Creates `path` (which must not exist: never overwritten) with `bytes` bytes in all, the header's page
  // included: a multiple of 4096, 1 MiB at least. `layout` names the design (1-31 printable characters
  // without spaces, not one of pmlab's own); `layout_version` is 1 or more. Crash-atomic: the pool is made
  // under a hidden name beside `path` and renamed to it once its header is durable, so a crash during create
  // leaves no `path` or a whole pool with a zero-filled data area (the next create of `path` removes what the
  // crash left under the hidden name).
  static Pool create(const std::string& path, uint64_t bytes, const std::string& layout, uint32_t layout_version = 1,
                     const PoolOptions& options = {});
  // Opens `path`, a pool of `layout` (any version: layout_version() says which).
  static Pool open(const std::string& path, const std::string& layout, const PoolOptions& options = {});
  // Opens `path` when it exists, else creates it: what a program that starts afresh or after a crash calls.
  static Pool open_or_create(const std::string& path, uint64_t bytes, const std::string& layout,
                             uint32_t layout_version = 1, const PoolOptions& options = {});
  Pool(Pool&&) noexcept;
  Pool& operator=(Pool&&) noexcept;
  ~Pool();  // unmaps and unlocks; makes nothing durable that the design did not persist

  // The data area: 4096-byte aligned, data_size() bytes, zero-filled at create.
  std::byte* data() const;
  uint64_t data_size() const;
  // The Persister of this mapping; valid while the pool is open.
  const Persister& persister() const;

  // The file (or device) it was opened from, and the layout version it was created with.
  const std::string& path() const;
  uint32_t layout_version() const;
  // True on DAX-mapped persistent memory; false on an emulated pool (DRAM pages behind a file).
  bool is_pmem() const;
  Domain domain() const;
  FlushInstruction flush() const;
  // Attaches `observer` to the pool's Persister (nullptr detaches it): it sees every call from then on.
  // Not while another thread persists through the pool; the observer must outlive its attachment.
  void observe(PersistObserver* observer);
  // Whether this open created the pool (open_or_create).
  bool created() const noexcept { return created_; }

  struct Impl;

 private:
  explicit Pool(std::unique_ptr<Impl> impl, bool created) noexcept;
  const Impl& self() const;
  std::unique_ptr<Impl> impl_;
  bool created_ = false;
};

}  // namespace v0
}  // namespace pmlab

#endif  // PMLAB_POOL_HPP
