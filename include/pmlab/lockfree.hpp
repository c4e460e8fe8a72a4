// pmlab/lockfree.hpp: pmlab's lock-free persistent set and ring buffer ([PMIdioBench] §6), each in a
// pool file.
//
//   auto set = pmlab::Set::create("/mnt/pmem/set", {pmlab::SetDesign::linkfree, 4, 1 << 20});
//   set.insert(thread, 42);                 // durable when it returns; threads never block each other
//
//   auto ring = pmlab::Ring::open("/mnt/pmem/queue");
//   ring.push(thread, record);              // a fixed-size record, durable when push returns
//   ring.pop(thread, out);                  // the oldest record
//
// Threads: each call names a thread index below the object's `threads` (its per-thread log line or
// reclamation record); one index is used by one thread at a time. Every call but the quiescent ones may
// run concurrently with any other. Persistence: what a call changed is durable when it returns; after a
// crash the open recovers every call that returned, and a call in flight either whole or not at all.
// Designs that are correct only when caches are in the durability domain (eADR) are refused on a pool
// whose domain is ADR (Error(PMLAB_E_UNSUPPORTED)). A pool's domain is the mapping's (eADR on PMEM with
// byte store granularity), or the one PMLAB_FORCE_DOMAIN names for a platform known to flush its caches
// on power failure.
#ifndef PMLAB_LOCKFREE_HPP
#define PMLAB_LOCKFREE_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pmlab/error.hpp>

namespace pmlab {
inline namespace v0 {

// How a set persists ([PMIdioBench] Table 3; docs/lockfree.md measures them).
enum class SetDesign {
  linkfree = 1,  // the link-free list ([DurableSets]): nodes with validity and flush flags, links never persisted
  soft = 2,      // SOFT ([DurableSets]): persistent nodes, the list itself in DRAM (rebuilt on open)
  tlog = 3,      // a persistent Harris list with a per-thread micro-log of the update in flight
  logfree = 4    // eADR only: Harris's list with a fence at each linearization point
};

// Options of Set::create.
struct SetOptions {
  SetDesign design = SetDesign::linkfree;  // how it persists (logfree: eADR pools only)
  unsigned threads = 8;                    // thread indexes, 1..64
  uint32_t capacity = 1 << 16;             // keys the set can hold at once (its node slab)
};

// A lock-free sorted set of keys 1..kMaxKey in a pool file, open in this process (one per pool).
class Set {
 public:
  static constexpr uint64_t kMaxKey = (uint64_t{1} << 30) - 1;  // keys are 1..kMaxKey (30 bits)

  // Creates PATH (which must not exist) as a pool sized for the options, holding an empty set.
  static Set create(const std::string& path, const SetOptions& options = {});
  // Opens a set pool and recovers it. Throws Error(PMLAB_E_BUSY) when it is open elsewhere.
  static Set open(const std::string& path);

  // Movable, not copyable. Destroying it closes the pool; no call may be running.
  Set(Set&&) noexcept;
  Set& operator=(Set&&) noexcept;
  ~Set();

  // Adds `key`; false when it is present. Throws Error(PMLAB_E_POOL_FULL) when every node is taken,
  // Error(PMLAB_E_INVALID_ARGUMENT) for a key outside 1..kMaxKey or a thread index out of range.
  bool insert(unsigned thread, uint64_t key);
  // Removes `key`; false when it is absent.
  bool remove(unsigned thread, uint64_t key);
  // Whether `key` is present.
  bool contains(unsigned thread, uint64_t key);
  // The keys in order. Quiescent: no other call may be running.
  std::vector<uint64_t> keys() const;
  // Checks the structure's invariants (order, links inside the slab); throws Error(PMLAB_E_CORRUPTED).
  // Quiescent.
  void check() const;

  // What the set was created with.
  SetDesign design() const noexcept;
  unsigned threads() const noexcept;
  uint32_t capacity() const noexcept;

 private:
  struct Impl;
  explicit Set(std::unique_ptr<Impl> impl) noexcept;
  Impl& self() const;
  std::unique_ptr<Impl> impl_;
};

// How a ring persists (Krizhanovsky's MPMC ring, as [PMIdioBench] §6.3 makes it persistent).
enum class RingDesign {
  tx = 1,     // each push and pop failure-atomic through a per-thread undo log: ADR and eADR
  txfree = 2  // eADR only: stamps on the slots, no log
};

// Options of Ring::create.
struct RingOptions {
  RingDesign design = RingDesign::tx;  // how it persists (txfree: eADR pools only)
  unsigned threads = 8;                // thread indexes, 1..64
  uint32_t capacity = 1024;            // slots: a power of two, at least 2
  uint32_t record_bytes = 64;          // every record's size, 1..16 MiB
};

// A lock-free multi-producer multi-consumer FIFO of fixed-size records in a pool file.
class Ring {
 public:
  // Creates PATH (which must not exist) as a pool sized for the options, holding an empty ring.
  static Ring create(const std::string& path, const RingOptions& options = {});
  // Opens a ring pool and recovers it: pushes that returned are there (less the pops that returned),
  // in order; a push or pop in flight is whole or absent.
  static Ring open(const std::string& path);

  // Movable, not copyable. Destroying it closes the pool; no call may be running.
  Ring(Ring&&) noexcept;
  Ring& operator=(Ring&&) noexcept;
  ~Ring();

  // Copies record_bytes from `record` into the ring; waits while it is full.
  void push(unsigned thread, const void* record);
  // Copies the oldest record into `out` (record_bytes) and removes it; waits while the ring is empty.
  void pop(unsigned thread, void* out);
  // The records held. Quiescent: no other call may be running.
  uint64_t size() const;

  // What the ring was created with.
  RingDesign design() const noexcept;
  unsigned threads() const noexcept;
  uint32_t capacity() const noexcept;
  uint32_t record_bytes() const noexcept;

 private:
  struct Impl;
  explicit Ring(std::unique_ptr<Impl> impl) noexcept;
  Impl& self() const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace v0
}  // namespace pmlab

#endif  // PMLAB_LOCKFREE_HPP
