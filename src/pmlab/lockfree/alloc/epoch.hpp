// Epoch-based reclamation (Fraser's EBR [PracticalLockFreedom], as [PMIdioBench] §6.2 uses it): a node
// unlinked from a lock-free structure goes back to its slab only when no thread can still hold a reference
// to it.
//
// Every operation runs inside a Guard, which announces the global epoch the thread saw. A retired node
// waits in its thread's limbo list, tagged with the global epoch at its unlink; the epoch advances when
// every active thread has announced it, and a list is freed once the global epoch is two past its tag.
// Limbo lists are volatile: nodes in them at a crash are unreachable in the durable image, so recovery
// (which rebuilds the slab bitmap from the structure) frees them. Thread ids are below Slab::kMaxThreads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "pmlab/lockfree/alloc/slab.hpp"

namespace pmlab::lockfree {

class EpochReclaimer {
 public:
  // `advance_every`: enters between attempts to advance the epoch (1 reclaims soonest: crash tests).
  explicit EpochReclaimer(int advance_every = 32);
  ~EpochReclaimer();  // frees whatever is still in limbo (no thread may be inside a Guard)
  EpochReclaimer(const EpochReclaimer&) = delete;
  EpochReclaimer& operator=(const EpochReclaimer&) = delete;

  class Guard {
   public:
    Guard(EpochReclaimer& r, int tid) noexcept : r_(r), tid_(tid) { r_.enter(tid_); }
    ~Guard() { r_.exit(tid_); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    EpochReclaimer& r_;
    int tid_;
  };

  void enter(int tid) noexcept;
  void exit(int tid) noexcept;
  // Frees `offset` to `slab` once every thread that might see it has left its critical section.
  void retire(int tid, Slab& slab, uint64_t offset);
  // Frees everything retired so far. Only when no thread is inside a Guard (tests, teardown).
  void drain() noexcept;
  // Called outside any Guard by a thread that found its slab full: advances the epoch if it can and
  // frees every thread's lists that are old enough, including those of threads that stopped operating
  // (a thread frees its own lists only when it enters again).
  void reclaim_all() noexcept;

  uint64_t epoch() const noexcept { return global_.load(std::memory_order_acquire); }
  uint64_t pending() const noexcept;  // retired, not yet freed (quiescent callers only)

 private:
  static constexpr uint64_t kActive = 1;
  struct Retired {
    Slab* slab;
    uint64_t offset;
  };
  struct alignas(64) Local {
    std::atomic<uint64_t> announced{0};  // epoch << 1 | kActive while inside a Guard
    uint64_t seen = 0;                   // the last epoch this thread entered
    uint32_t enters = 0;
    // Guards the lists against reclaim_all; the owner takes it uncontended in all but that rare case.
    std::atomic<bool> busy{false};
    std::vector<Retired> limbo[3];  // by epoch % 3
    uint64_t limbo_epoch[3]{};      // the epoch each list was filled in
  };
  static bool try_lock(Local& l) noexcept { return !l.busy.exchange(true, std::memory_order_acquire); }
  static void lock(Local& l) noexcept {
    while (!try_lock(l)) {}
  }
  static void unlock(Local& l) noexcept { l.busy.store(false, std::memory_order_release); }
  void free_list(std::vector<Retired>& list) noexcept;
  // Frees the lists of `l` filled at least two epochs before `now` (caller holds l's lock).
  void free_old(Local& l, uint64_t now) noexcept;
  void try_advance(uint64_t epoch) noexcept;

  uint32_t advance_every_;
  alignas(64) std::atomic<uint64_t> global_{0};
  std::unique_ptr<Local[]> locals_;
};

}  // namespace pmlab::lockfree
