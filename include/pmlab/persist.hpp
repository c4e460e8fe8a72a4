// pmlab/persist.hpp: the persistence vocabulary a design is written in, the same in production and under
// crash test.
//
// A design makes its bytes durable through a Persister: flush (write back), fence (order and complete),
// persist (both), store8 (an 8-byte store no crash tears: a commit word), copy_nt (non-temporal stores)
// and the atomic word operations. In production the Persister of a pmlab::Pool (pmlab/pool.hpp) issues
// the CPU's instructions for the pool's durability domain; under `pmlab crash --load` (pmlab/crash.hpp)
// the simulator's Persister observes the same calls, so one design is run and crash-tested unchanged.
#ifndef PMLAB_PERSIST_HPP
#define PMLAB_PERSIST_HPP

#if __cplusplus < 202002L
#error "pmlab/persist.hpp needs C++20 (call sites are std::source_location)"
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <source_location>

namespace pmlab {
inline namespace v0 {

// The durability domain: ADR, the memory controller is durable (stores persist once written back and
// fenced); eADR, the caches are too (once fenced). A crash test simulates one (`pmlab crash --domain`); a
// pool runs under the one its mapping reports, or the one asked for (PoolOptions).
enum class Domain { adr = 1, eadr = 2 };

// How a design persists. Every call names its call site (the crash simulator reports failures and mutants
// by it). Under ADR a store persists once written back (flush) and fenced; under eADR once fenced. A plain
// store may also persist early (evicted) at any time, and a crash may tear it byte by byte; only store8
// and the atomic word operations are never torn. A Persister is used by any number of threads at once. It
// checks no address (it runs on every store of a design): one outside its pool's mapping is the caller's bug,
// where the C API's pmlab_pool_* calls refuse it.
class Persister {
 public:
  using Site = std::source_location;  // a call site: failures and mutants are reported by it

  // Writes back the cache lines of [addr, addr+len): durable at the next fence.
  virtual void flush(const void* addr, size_t len, Site where = Site::current()) const noexcept = 0;
  // Makes every earlier write-back (and non-temporal store) durable, and orders later stores after it.
  virtual void fence(Site where = Site::current()) const noexcept = 0;
  // Always inlined, also in an unoptimised build: `pmlab crash exec` names the instruction that called
  // flush and fence, which is then the design's own rather than this function's.
  [[gnu::always_inline]] inline void persist(const void* addr, size_t len,
                                             Site where = Site::current()) const noexcept {
    flush(addr, len, where);
    fence(where);
  }
  // An 8-byte aligned store no crash tears: the commit word of a failure-atomic protocol.
  virtual void store8(uint64_t* word, uint64_t value, Site where = Site::current()) const noexcept = 0;
  // Copies with non-temporal stores (the cache bypassed): durable at the next fence. Not fenced.
  virtual void copy_nt(void* dst, const void* src, size_t len, Site where = Site::current()) const noexcept = 0;
  // Atomic read-modify-writes of an 8-byte word, never torn.
  virtual bool compare_exchange(uint64_t* word, uint64_t& expected, uint64_t desired,
                                Site where = Site::current()) const noexcept = 0;
  virtual uint64_t fetch_add(uint64_t* word, uint64_t delta, Site where = Site::current()) const noexcept = 0;
  // Declares [addr, addr+len) volatile by design (rebuilt by recovery, never persisted): not explored.
  virtual void declare_volatile(const void* addr, size_t len) const noexcept = 0;
  virtual Domain domain() const noexcept = 0;
  // One round of a loop that waits for another thread's progress: a pause instruction, and under the
  // crash simulator the point where the turn passes to another thread.
  virtual void spin_wait() const noexcept = 0;

 protected:
  ~Persister() = default;
};

// An 8-byte word of persistent memory that threads update atomically, named once with its Persister: the
// commit words, counters and links of a design. Its stores and read-modify-writes are never torn by a
// crash and are observed (and crash-tested) as the Persister's own calls; load() is a plain atomic load.
class PmWord {
 public:
  // The 8-byte aligned word at `word`, persisted through `persister`.
  PmWord(uint64_t* word, const Persister& persister) noexcept : word_(word), persister_(&persister) {}

  // The word's value (acquire).
  uint64_t load() const noexcept { return std::atomic_ref<uint64_t>(*word_).load(std::memory_order_acquire); }
  // Stores `value` as one (Persister::store8): durable once written back and fenced (persist()).
  void store(uint64_t value, Persister::Site where = Persister::Site::current()) const noexcept {
    persister_->store8(word_, value, where);
  }
  // Atomically: `desired` when the word holds `expected`; on failure `expected` receives the word's value.
  bool compare_exchange(uint64_t& expected, uint64_t desired,
                        Persister::Site where = Persister::Site::current()) const noexcept {
    return persister_->compare_exchange(word_, expected, desired, where);
  }
  // Atomically adds `delta`; returns the value before.
  uint64_t fetch_add(uint64_t delta, Persister::Site where = Persister::Site::current()) const noexcept {
    return persister_->fetch_add(word_, delta, where);
  }
  // Writes the word back and fences: durable from here on.
  void persist(Persister::Site where = Persister::Site::current()) const noexcept {
    persister_->persist(word_, 8, where);
  }
  // Where the word is.
  uint64_t* address() const noexcept { return word_; }

 private:
  uint64_t* word_;
  const Persister* persister_;
};

// What a pool's Persister did, for an observer of one's own (Pool::observe): a tracer, a counter by call
// site, a delay that emulates slower memory. Each call names the design's call site. Called on the thread
// that persists, inline: an observer that is slow makes the design slow.
class PersistObserver {
 public:
  virtual ~PersistObserver() = default;
  // After cache lines (or, `non_temporal`, bytes written with non-temporal stores) started on their way
  // to the durability domain: durable at the thread's next fence.
  virtual void on_writeback(const void* addr, size_t len, bool non_temporal, Persister::Site where) noexcept = 0;
  // Before a fence: every write-back of the thread since its previous fence is durable from here on.
  virtual void on_fence(Persister::Site where) noexcept = 0;
  // After an 8-byte atomic store or read-modify-write of the word at `addr`.
  virtual void on_atomic_store(const void* addr, Persister::Site where) noexcept { (void)addr, (void)where; }
};

// How a Persister writes back a cache line, and how it copies in bulk.
enum class FlushInstruction {
  clwb = 1,        // write back, the line may stay cached
  clflushopt = 2,  // write back and invalidate, unordered until a fence
  clflush = 3,     // write back and invalidate, serialized with other clflushes
  ntstore = 4,     // bulk copies bypass the cache (non-temporal stores); a line flush uses the best of the others
};

// What this thread's Persister calls issued since it started (all pools together): a design's cost in
// persistence instructions is the difference of two readings around it. An instruction the domain makes
// unneeded (a flush under eADR) is not issued, and not counted.
struct PersistCounters {
  uint64_t flushes = 0;   // cache-line write-back instructions
  uint64_t fences = 0;    // sfence instructions
  uint64_t nt_bytes = 0;  // bytes written with non-temporal stores
};
// This thread's counts so far (defined in libpmlab: a design under `pmlab crash --load` does not call it).
PersistCounters thread_persist_counters() noexcept;

}  // namespace v0
}  // namespace pmlab

#endif  // PMLAB_PERSIST_HPP
