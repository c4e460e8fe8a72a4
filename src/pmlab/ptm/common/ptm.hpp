// What both PTMs (undo, redo) and the PMDK adapter share: the interface a workload is written against
// (the concepts Transaction and Ptm below), the regions and persisters a PTM is built on, and the lock
// scheme.
//
// Interface (a workload is a template over the PTM, so it is written once and instantiated per PTM
// without a virtual call per word):
//   ptm.run(slot, [&](auto& tx) { … })   one failure-atomic transaction on the thread's log slot
//   tx.read(const uint64_t* word) -> uint64_t
//   tx.write(uint64_t* word, uint64_t value)
//   tx.alloc(bytes) -> payload offset (0: heap full)      tx.free(offset)
//   tx.at<T>(offset) -> T*                                 tx.root(i) -> uint64_t* (i < kRoots)
// Words are 8-byte aligned; structures link by offset (0 is null), never by pointer. A word written
// earlier in the transaction is read back through tx.read only: the redo PTM keeps it in its write set
// until the commit.
//
// Concurrency: each thread has its own log slot. The undo PTM and PMDK serialize transactions with one
// global lock (std::mutex, held from begin to the end of commit); the redo PTM runs read-only and disjoint
// transactions in parallel (ownership records, redo/redo_ptm.hpp) and may run a body more than once: a
// body's effects outside the PTM must be ones a rerun overwrites (results it returns). A read that would
// make the attempt's snapshot inconsistent ends the attempt there: it throws Abandoned, which run()
// catches before running the body again, so a body never acts on a mix of old and new words — it must
// therefore let Abandoned pass (no catch (...) that swallows it) and not be noexcept where it reads. There
// is no user abort: a transaction runs to commit or the process dies.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "pmlab/persist/persister.hpp"

namespace pmlab::ptm {

// Thrown by a read of an attempt that can no longer commit (its snapshot turned inconsistent); caught by
// the PTM's run(), which releases the attempt and runs the body again. Not an error: no what().
struct Abandoned {};

// A running transaction (what the body of ptm.run receives).
template <class T>
concept Transaction = requires(T& tx, const T& ctx, uint64_t* word, const uint64_t* cword, uint64_t value, int i) {
  { ctx.read(cword) } -> std::same_as<uint64_t>;
  tx.write(word, value);
  { tx.alloc(value) } -> std::same_as<uint64_t>;
  tx.free(value);
  { ctx.template at<uint64_t>(value) } -> std::same_as<uint64_t*>;
  { ctx.root(i) } -> std::same_as<uint64_t*>;
};

// A body that takes the PTM's transaction, for the concept's check of run().
template <class Tx>
struct TransactionBody {
  void operator()(Tx&) const noexcept {}
};

// A PTM: its transaction type, and run() on a log slot.
template <class P>
concept Ptm = Transaction<typename P::Tx> && requires(P& ptm, int slot) {
  { P::kName } -> std::convertible_to<const char*>;
  ptm.run(slot, TransactionBody<typename P::Tx>{});
};

// The memory a PTM runs on: the heap (data) and the log slots, possibly in different media
// (pdram-lite puts the log on DRAM), each with the persister of its durability model.
struct Regions {
  std::byte* heap = nullptr;
  size_t heap_bytes = 0;
  std::byte* log = nullptr;
  size_t log_bytes = 0;
  const persist::Persister* log_persister = nullptr;
  const persist::Persister* data_persister = nullptr;
};

struct Options {
  int slots = 1;                   // log slots: one per thread that runs transactions
  uint64_t slot_bytes = 64 << 10;  // bytes of each slot (header line + entries)
  // Overhead breakdown only [PMDKOverheads]: write no log. The transaction still buffers (redo) or writes in
  // place (undo) and flushes its data; it is no longer failure-atomic and recovery finds nothing.
  bool logging = true;
  // Redo only: a block of at least this many bytes carved at the heap's top is written in place rather
  // than logged (bulk loads: an array larger than the log); its lines get their own fence before the
  // commit record. Smaller new blocks go through the log like any other word.
  uint64_t in_place_bytes = 4096;
  // format(): the sequence number of the first transaction (1 to 2^62). A heap that goes on from another
  // starts past its last one; the crash subjects start just below 2^32, so the sequence words a commit or
  // a recovery stores change both halves.
  uint64_t first_seq = 1;
};

// Persistence counters a PTM keeps beside the per-thread flush/fence counters.
struct TxCounters {
  uint64_t transactions = 0;
  uint64_t writing = 0;      // transactions that wrote (committed a log record or data)
  uint64_t log_entries = 0;  // entries written to a persistent log
  uint64_t aborts = 0;       // attempts that conflicted with another thread's and ran again
};

// The sum over a PTM's per-thread slots (each holding its own `counters`).
template <class Slots>
TxCounters sum_counters(const Slots& slots) noexcept {
  TxCounters c;
  for (const auto& s : slots) {
    c.transactions += s->counters.transactions;
    c.writing += s->counters.writing;
    c.log_entries += s->counters.log_entries;
    c.aborts += s->counters.aborts;
  }
  return c;
}

}  // namespace pmlab::ptm
