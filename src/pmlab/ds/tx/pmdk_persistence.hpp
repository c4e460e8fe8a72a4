// PMDK's persistence, seen and switched from inside the process (the overhead decomposition of
// [PMDKOverheads] for PMDK's transactions, the per-operation flush / fence counters of the tx mode and the
// PMDK peers, and the device model of `--model` / `--emulate` for libpmemobj, libpmemlog and libpmemblk as
// for our designs).
//
// libpmemobj persists through libpmem's exported entry points (pmem_flush, pmem_drain, pmem_persist,
// pmem_memcpy / memmove / memset), resolved by the dynamic linker. pmlab defines those symbols itself
// (pmdk_persistence.cpp); the executable's definitions interpose libpmem's, and forward to libpmem's own
// (dlvsym RTLD_NEXT); libpmemlog and libpmemblk also use pmem_memcpy_nodrain and pmem_memset_persist, and
// those are defined too. While switched off (the default) they only forward. While on, they count into the
// thread's persist::Counters (cache lines flushed, fences, non-temporal bytes) and may elide flushes or
// fences, like persist::Config::elide_flush / elide_fence for our own designs. libpmem's PMEM_NO_FLUSH
// cannot do this: libpmem reads it once, in its load-time constructor, for the whole process.
//
// What cannot be switched off this way: the stores themselves, and PMDK's undo-log bookkeeping (range
// tracking, log entry checksums); `logging off` (ds/tx/transaction.hpp) removes the undo log of our
// tx mode only, since PMDK's example maps add their ranges inside PMDK's sources.
#pragma once

#include "pmlab/persist/observer.hpp"

namespace pmlab::ds::tx {

struct PmdkPersistence {
  bool count = false;        ///< count PMDK's flushes and fences into persist::tls_counters
  bool elide_flush = false;  ///< issue no cache-line flush and no non-temporal copy (plain memcpy instead)
  bool elide_fence = false;  ///< issue no drain (sfence)
  /// Sees PMDK's write-backs and drains as a Persister's observer sees ours (the run's device model).
  persist::Observer* observer = nullptr;
};

// Process-wide; the bench sets it for one run and restores the default afterwards.
void set_pmdk_persistence(const PmdkPersistence& p) noexcept;
PmdkPersistence pmdk_persistence() noexcept;
// True when libpmemobj's calls reach pmlab's definitions (the interposition took effect).
bool pmdk_persistence_interposed() noexcept;

// Sets `p` for a scope (one run) and restores what was set before.
class ScopedPmdkPersistence {
 public:
  explicit ScopedPmdkPersistence(const PmdkPersistence& p) noexcept : saved_(pmdk_persistence()) {
    set_pmdk_persistence(p);
  }
  ~ScopedPmdkPersistence() { set_pmdk_persistence(saved_); }
  ScopedPmdkPersistence(const ScopedPmdkPersistence&) = delete;
  ScopedPmdkPersistence& operator=(const ScopedPmdkPersistence&) = delete;

 private:
  PmdkPersistence saved_;
};

}  // namespace pmlab::ds::tx
