// pmlab/ptm.hpp: a persistent transactional heap in a pool file — pmlab's redo or undo PTM, in C++.
//
//   auto ptm = pmlab::Ptm::open("/mnt/pmem/heap");        // recovers after a crash
//   ptm.run([&](pmlab::Transaction& tx) {
//     uint64_t node = tx.alloc(16);
//     tx.write(node, 42);
//     tx.write(node + 8, tx.read(tx.root(0)));
//     tx.write(tx.root(0), node);                           // all of it durable at once, or none
//   });
//
// Data is named by offsets in the heap (8-byte aligned words), never by pointers: a pool may be mapped
// at another address every time. Everything a transaction writes becomes durable together when run()
// returns; a crash before that leaves none of it (the next open recovers), and so does an exception from
// the body or Transaction::abort().
//
// Threads: one Ptm is shared by any number of threads. Up to `threads` transactions (PtmOptions) run at
// once, each on a log slot of its own (run() borrows one per transaction; a Session keeps one); the redo PTM runs
// read-only and disjoint transactions in parallel, the undo PTM one at a time. The redo PTM may run a body more than
// once (another thread committed over what it read): effects outside the heap must be ones a rerun overwrites, and a
// body must let every exception it did not throw pass (no catch (...) that swallows it).
#ifndef PMLAB_PTM_HPP
#define PMLAB_PTM_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <pmlab/error.hpp>
#include <pmlab/pmlab.h>

namespace pmlab {
inline namespace v0 {

// Which PTM a heap runs: chosen at create, recorded in the pool (docs/ptm.md compares them).
enum class PtmKind { redo = PMLAB_PTM_REDO, undo = PMLAB_PTM_UNDO };

// Options of Ptm::create.
struct PtmOptions {
  PtmKind kind = PtmKind::redo;  // redo: one fence per writing transaction, disjoint ones in parallel
  unsigned threads = 8;          // transactions that may run at once; more wait for a slot
  // Bounds the words one transaction writes, about log_bytes_per_thread / 32 (a redo slot keeps two records
  // of 16-byte entries, an undo slot 32-byte entries): 2042 (redo) or 2046 (undo) at 64 KiB. Writes into blocks
  // the same transaction allocated do not count. A transaction that writes more ends the process.
  uint64_t log_bytes_per_thread = 65536;
};

// What a Ptm has done since it was opened.
struct PtmStats {
  uint64_t transactions = 0;  // committed since open
  uint64_t writing = 0;       // of which wrote
  uint64_t conflicts = 0;     // bodies run again after a conflict
  uint64_t recovered = 0;     // transactions the open found unfinished: replayed (redo) or undone (undo)
  uint64_t heap_bytes = 0;    // bytes of the heap, its header included
};

class Ptm;

// A running transaction: what the body of Ptm::run receives. Valid only during the body. Every call
// throws Error(PMLAB_E_INVALID_ARGUMENT) for an offset outside the heap or not 8-byte aligned.
class Transaction {
 public:
  static constexpr unsigned kRoots = PMLAB_PTM_ROOTS;  // root words (root())

  // The word at `offset` as this transaction sees it (its own writes included).
  uint64_t read(uint64_t offset) const;
  // Sets the word at `offset`: durable with the rest of the transaction when it commits, never before.
  void write(uint64_t offset, uint64_t value);
  // `size` bytes at an 8-byte aligned offset, through the same words (the last one padded with zeros).
  void read_bytes(uint64_t offset, void* out, size_t size) const;
  void write_bytes(uint64_t offset, const void* data, size_t size);
  // A new block of at least `size` bytes (8-byte aligned, contents undefined); freed again if the
  // transaction does not commit. Throws Error(PMLAB_E_POOL_FULL) when the heap has no room.
  uint64_t alloc(uint64_t size);
  // Frees a block from alloc(), when the transaction commits.
  void free(uint64_t offset);
  // The offset of root word i (i < kRoots), where a structure keeps its entry point.
  uint64_t root(unsigned i) const;
  // Undoes the transaction: run() returns false.
  [[noreturn]] void abort();

  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  friend class Ptm;
  friend class Map;
  Transaction(int kind, void* tx, void* heap, uint64_t heap_bytes) noexcept
      : kind_(kind), tx_(tx), heap_(heap), heap_bytes_(heap_bytes) {}
  int kind_;
  void* tx_;
  void* heap_;
  uint64_t heap_bytes_;
};

// A transactional heap in a pool file, open in this process: one per pool (a second open is refused).
class Ptm {
  struct Impl;  // the open pool and its PTM (a Session keeps a pointer to it)

 public:
  // Creates PATH (which must not exist) as a pool of `pool_bytes` holding an empty heap; no file is left
  // behind on failure, and a crash during create leaves no PATH or a whole pool (pool.hpp). `pool_bytes`: 1 MiB
  // at least (PMLAB_E_INVALID_ARGUMENT below), and room for `threads` log slots (PMLAB_E_NO_SPACE without).
  static Ptm create(const std::string& path, uint64_t pool_bytes, const PtmOptions& options = {});
  // Opens a PTM pool and recovers it: every transaction whose run() returned is there, none that had not
  // returned is, in part or whole. Throws Error(PMLAB_E_BUSY) when the pool is open elsewhere.
  static Ptm open(const std::string& path);

  // Movable, not copyable. Destroying it closes the pool cleanly: everything committed is durable and
  // nothing is left for the next open to recover. No transaction may be running.
  Ptm(Ptm&&) noexcept;
  Ptm& operator=(Ptm&&) noexcept;
  ~Ptm();

  // Runs `body(Transaction&)` as one failure-atomic transaction. Returns true once it committed (durable),
  // false when the body called abort(); an exception from the body undoes the transaction and goes on.
  // Transactions do not nest: called from within a body of this Ptm (as are session() and Session::run),
  // it throws Error(PMLAB_E_INVALID_ARGUMENT); pass the Transaction to the inner code instead.
  template <class Body>
  bool run(Body&& body) {
    using B = std::remove_reference_t<Body>;
    return run_erased([](void* b, Transaction& tx) { (*static_cast<B*>(b))(tx); },
                      const_cast<void*>(static_cast<const void*>(std::addressof(body))));
  }

  // A log slot held by one thread for a run of transactions: Session::run skips the slot hand-out
  // (a compare-and-swap, which waits for the previous commit's stores to drain) that run() does each time.
  // Used by the thread that made it only; destroyed before the Ptm (which may be moved meanwhile). While it lives, the
  // other threads have one slot fewer (run() and new sessions wait for a free one).
  class Session {
   public:
    // As Ptm::run, on this session's log slot.
    template <class Body>
    bool run(Body&& body) {
      using B = std::remove_reference_t<Body>;
      return run_on(
          *impl_, slot_, [](void* b, Transaction& tx) { (*static_cast<B*>(b))(tx); },
          const_cast<void*>(static_cast<const void*>(std::addressof(body))));
    }
    // Movable (the slot goes with it), not copyable or assignable; destroying it frees the slot.
    Session(Session&& other) noexcept : impl_(other.impl_), slot_(other.slot_) { other.impl_ = nullptr; }
    Session& operator=(Session&&) = delete;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ~Session();

   private:
    friend class Ptm;
    // The Ptm's state, not the Ptm: moving the Ptm leaves its sessions valid.
    Session(Impl* impl, int slot) noexcept : impl_(impl), slot_(slot) {}
    Impl* impl_;
    int slot_;
  };
  // A session on a free log slot (waits for one when every slot is taken). When this thread's own
  // sessions hold every slot, it and run() throw Error(PMLAB_E_INVALID_ARGUMENT) instead of waiting.
  Session session();

  // The pool's PTM, its log slots (PtmOptions::threads), its file, and its counters since open.
  PtmKind kind() const noexcept;
  unsigned threads() const noexcept;
  const std::string& path() const noexcept;
  PtmStats stats() const;

 private:
  explicit Ptm(std::unique_ptr<Impl> impl) noexcept;
  Impl& self() const;  // throws for a moved-from Ptm
  bool run_erased(void (*body)(void*, Transaction&), void* state);
  static bool run_on(Impl& impl, int slot, void (*body)(void*, Transaction&), void* state);
  std::unique_ptr<Impl> impl_;
};

}  // namespace v0
}  // namespace pmlab

#endif  // PMLAB_PTM_HPP
