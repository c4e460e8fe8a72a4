// Locking for the multi-thread runs. Locks live in DRAM (never in the arena: a lock word in PMEM would
// survive a crash held). Each structure says which it uses; with one thread the structure skips them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>

namespace pmlab::ds {

// Test-and-test-and-set spinlocks striped by a hash (a lock per bucket / slot group): short critical
// sections, so spinning beats sleeping.
class StripedLocks {
 public:
  explicit StripedLocks(uint32_t stripes = 1024) : mask_(stripes - 1), locks_(new Lock[stripes]) {}
  void lock(uint64_t h) noexcept {
    std::atomic<bool>& l = locks_[h & mask_].held;
    for (;;) {
      if (!l.exchange(true, std::memory_order_acquire)) return;
      while (l.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  void unlock(uint64_t h) noexcept { locks_[h & mask_].held.store(false, std::memory_order_release); }

 private:
  struct alignas(64) Lock {
    std::atomic<bool> held{false};
  };
  uint64_t mask_;
  std::unique_ptr<Lock[]> locks_;
};

// A scope guard that locks only when the structure is shared between threads.
template <class L, class Key>
class MaybeLocked {
 public:
  MaybeLocked(L& locks, Key key, bool active) noexcept : locks_(locks), key_(key), active_(active) {
    if (active_) locks_.lock(key_);
  }
  ~MaybeLocked() {
    if (active_) locks_.unlock(key_);
  }
  MaybeLocked(const MaybeLocked&) = delete;
  MaybeLocked& operator=(const MaybeLocked&) = delete;

 private:
  L& locks_;
  Key key_;
  bool active_;
};

// One reader-writer lock for the whole structure (skiplist, B+-tree, list): readers share it.
class GlobalLock {
 public:
  class Shared {
   public:
    Shared(GlobalLock& g, bool active) : g_(g), active_(active) { if (active_) g_.m_.lock_shared(); }
    ~Shared() { if (active_) g_.m_.unlock_shared(); }
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;
   private:
    GlobalLock& g_;
    bool active_;
  };
  class Exclusive {
   public:
    Exclusive(GlobalLock& g, bool active) : g_(g), active_(active) { if (active_) g_.m_.lock(); }
    ~Exclusive() { if (active_) g_.m_.unlock(); }
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;
   private:
    GlobalLock& g_;
    bool active_;
  };

 private:
  std::shared_mutex m_;
};

}  // namespace pmlab::ds
