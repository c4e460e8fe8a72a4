// Locking for the multi-thread runs. Locks live in DRAM (never in the arena: a lock word in PMEM would
// survive a crash held). Each structure says which it uses; with one thread the structure skips them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer's runtime annotations (dynamic_annotations): reads between the two are not recorded.
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif

namespace pmlab::ds {

// The scope of an optimistic read (StripedVersionLocks): its loads race with a writer's stores by design
// and are validated afterwards, so ThreadSanitizer does not record them.
class OptimisticReads {
 public:
#if defined(__SANITIZE_THREAD__)
  OptimisticReads() noexcept { AnnotateIgnoreReadsBegin(__FILE__, __LINE__); }
  ~OptimisticReads() { AnnotateIgnoreReadsEnd(__FILE__, __LINE__); }
#else
  OptimisticReads() noexcept {}  // user-provided: a scope object, not an unused variable
  ~OptimisticReads() {}
#endif
  OptimisticReads(const OptimisticReads&) = delete;
  OptimisticReads& operator=(const OptimisticReads&) = delete;
};

// Striped version locks (seqlocks, as the optimistic lock coupling of [OLC]): a writer makes its stripe's
// version odd for the length of its change and even again after it; a reader writes nothing — it notes an
// even version, reads, and keeps what it read only if the version is still the same. With plain striped
// spinlocks every reader writes the stripe's line, which then moves to the reader's core whenever the
// other thread took the stripe last: a transfer per read that costs little when two CPUs share a cache
// and ~200 ns when they do not. Here a stripe's line moves only after a writer had it.
//
// What a reader reads may be half written (it is thrown away), so the structure's reader must stay inside
// its memory whatever it reads, and its reads race with the writer's by design: OptimisticReads tells
// ThreadSanitizer not to watch them.
//
// Eight versions share a cache line (the array alone on its lines). A read moves its stripe's line when a
// writer wrote that line since the reader last held it; for stripes hit alike that chance is the writes
// per line times the reads between two of the reader's visits to the line, which is the same for one stripe
// per line as for eight. Packed, they leave the reader's cache to the structure it reads, and a concurrent
// lookup is little more than its memory accesses (docs/ds.md, Threads).
class StripedVersionLocks {
 public:
  explicit StripedVersionLocks(uint32_t stripes = 1024) : mask_(stripes - 1), stripes_(allocate(stripes)) {}
  void lock(uint64_t h) noexcept {
    std::atomic<uint64_t>& v = stripes_[h & mask_];
    for (;;) {
      uint64_t cur = v.load(std::memory_order_relaxed);
      // Acquire: the change's stores stay after the odd version (a reader that saw the old even version
      // after them would keep a half-written read); the locked instruction orders them on x86 as well.
      if ((cur & 1) == 0 && v.compare_exchange_weak(cur, cur + 1, std::memory_order_acquire)) return;
      __builtin_ia32_pause();
    }
  }
  // A plain store, not a read-modify-write: while the version is odd only its holder writes it (lock()
  // and readers wait for an even one). A locked instruction here would also wait for the write-backs the
  // change just issued to finish, which the fence that made them durable does not (docs/ds.md, Threads).
  void unlock(uint64_t h) noexcept {
    std::atomic<uint64_t>& v = stripes_[h & mask_];
    v.store(v.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // An even version of the stripe (waiting while a writer holds it), to hand to still_valid.
  uint64_t read_begin(uint64_t h) const noexcept { return even_version(stripes_[h & mask_]); }
  // `read()`'s result, from a run during which no writer took stripe h (it runs again until one is):
  // the optimistic read whole. `read` must stay inside the structure's memory whatever it reads.
  template <class Read>
  auto read_validated(uint64_t h, Read&& read) const noexcept(noexcept(read())) {
    const std::atomic<uint64_t>& v = stripes_[h & mask_];  // once: recomputing it costs the lookup
    for (;;) {
      const uint64_t version = even_version(v);
      decltype(read()) found;
      {
        const OptimisticReads racy;
        found = read();
      }
      if (unchanged(v, version)) return found;
    }
  }
  // Whether no writer took the stripe since read_begin returned `version`: the reads between are whole.
  bool still_valid(uint64_t h, uint64_t version) const noexcept { return unchanged(stripes_[h & mask_], version); }

 private:
  static uint64_t even_version(const std::atomic<uint64_t>& v) noexcept {
    for (;;) {
      const uint64_t cur = v.load(std::memory_order_acquire);
      if ((cur & 1) == 0) return cur;
      __builtin_ia32_pause();
    }
  }
  static bool unchanged(const std::atomic<uint64_t>& v, uint64_t version) noexcept {
    // The reads being validated must not move below this load: x86 keeps loads in order, and this keeps
    // the compiler from reordering them (a thread fence would say the same, but ThreadSanitizer does not
    // take one).
    std::atomic_signal_fence(std::memory_order_acq_rel);
    return v.load(std::memory_order_relaxed) == version;
  }

  static constexpr size_t kLine = 64;
  struct Release {
    void operator()(std::atomic<uint64_t>* p) const noexcept { ::operator delete[](p, std::align_val_t{kLine}); }
  };
  static std::atomic<uint64_t>* allocate(uint32_t stripes) {
    const size_t bytes = (stripes * sizeof(std::atomic<uint64_t>) + kLine - 1) / kLine * kLine;
    auto* versions = static_cast<std::atomic<uint64_t>*>(::operator new[](bytes, std::align_val_t{kLine}));
    for (size_t i = 0; i < bytes / sizeof(std::atomic<uint64_t>); ++i) new (versions + i) std::atomic<uint64_t>(0);
    return versions;
  }

  uint64_t mask_;
  std::unique_ptr<std::atomic<uint64_t>[], Release> stripes_;
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
//
// A distributed reader-writer lock ([ScalableRW]): each reader announces itself in one of a few reader
// counters, each on a line of its own, chosen by the thread; a writer takes the writer word, then waits
// until every counter is 0. Readers on different cores thus write only their own lines: a shared reader
// count (std::shared_mutex) moves one line between the cores on every lock and unlock, so two reading
// threads hardly outrun one, and its futex sleeps let a reader wait out a writer for a scheduler tick. Writers pay one
// line per counter; the structure's writes are the rarer operation wherever reads are to scale. Writers come first: a
// reader that finds the writer word taken steps back and waits, so a stream of readers cannot starve a writer.
//
// Both sides use sequentially consistent read-modify-writes and loads on two different words (a reader:
// its counter, then the writer word; a writer: the writer word, then the counters), the store-load order
// of Dekker's protocol: of a reader and a writer arriving together, at least one sees the other.
class GlobalLock {
 public:
  GlobalLock() : mask_(counters_for(std::thread::hardware_concurrency()) - 1), readers_(new Counter[mask_ + 1]) {}

  class Shared {
   public:
    Shared(GlobalLock& g, bool active) : g_(g), active_(active) {
      if (active_) slot_ = g_.lock_shared();
    }
    ~Shared() {
      if (active_) g_.readers_[slot_].n.fetch_sub(1, std::memory_order_release);
    }
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;

   private:
    GlobalLock& g_;
    bool active_;
    uint32_t slot_ = 0;
  };
  class Exclusive {
   public:
    Exclusive(GlobalLock& g, bool active) : g_(g), active_(active) {
      if (active_) g_.lock();
    }
    ~Exclusive() {
      if (active_) g_.writer_.store(false, std::memory_order_release);
    }
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;

   private:
    GlobalLock& g_;
    bool active_;
  };

 private:
  struct alignas(64) Counter {
    std::atomic<uint32_t> n{0};
  };
  // Twice the CPUs, at least 2, at most 64 (a writer reads each counter's line).
  static uint32_t counters_for(unsigned cpus) noexcept {
    uint32_t n = 2;
    while (n < 2 * cpus && n < 64) n *= 2;
    return n;
  }
  // The calling thread's counter: threads numbered in the order they first take a GlobalLock, so the
  // workers of one run, started together, get consecutive numbers and distinct counters. A shared counter
  // (more threads than counters) stays correct, only slower.
  uint32_t my_counter() const noexcept {
    static std::atomic<uint32_t> next{0};
    static thread_local const uint32_t id = next.fetch_add(1, std::memory_order_relaxed);
    return id & mask_;
  }
  uint32_t lock_shared() noexcept {
    const uint32_t slot = my_counter();
    std::atomic<uint32_t>& n = readers_[slot].n;
    for (;;) {
      n.fetch_add(1, std::memory_order_seq_cst);
      if (!writer_.load(std::memory_order_seq_cst)) return slot;
      n.fetch_sub(1, std::memory_order_release);
      while (writer_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  void lock() noexcept {
    for (;;) {
      if (!writer_.exchange(true, std::memory_order_seq_cst)) break;
      while (writer_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
    for (uint32_t i = 0; i <= mask_; ++i)
      while (readers_[i].n.load(std::memory_order_seq_cst) != 0) __builtin_ia32_pause();
  }

  const uint32_t mask_;
  std::unique_ptr<Counter[]> readers_;
  alignas(64) std::atomic<bool> writer_{false};
};

}  // namespace pmlab::ds
