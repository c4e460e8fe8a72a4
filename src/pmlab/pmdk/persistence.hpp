// PMDK's persistence, seen and switched from inside the process (the overhead decomposition of
// [PMDKOverheads] for PMDK's transactions, the per-operation flush / fence counters of the tx mode and the
// PMDK peers, and the device model of `--model` / `--emulate` for libpmemobj, libpmemlog and libpmemblk as
// for our designs).
//
// libpmemobj persists through libpmem's exported entry points (pmem_flush, pmem_drain, pmem_persist,
// pmem_memcpy / memmove / memset), resolved by the dynamic linker. pmlab defines those symbols itself
// (persistence.cpp); the executable's definitions interpose libpmem's, and forward to libpmem's own
// (dlvsym RTLD_NEXT); libpmemlog and libpmemblk also use pmem_memcpy_nodrain and pmem_memset_persist, and
// those are defined too. While switched off (the default) they only forward. While on, they count into the
// thread's persist::Counters (cache lines flushed, fences, non-temporal bytes) and may elide flushes or
// fences, like persist::Config::elide_flush / elide_fence for our own designs. libpmem's PMEM_NO_FLUSH
// cannot do this: libpmem reads it once, in its load-time constructor, for the whole process.
//
// What cannot be switched off this way: the stores themselves, and PMDK's undo-log bookkeeping (range
// tracking, log entry checksums); `logging off` (pmdk/tx.hpp) removes the undo log of our
// tx mode only, since PMDK's example maps add their ranges inside PMDK's sources.
#pragma once

#include "pmlab/persist/observer.hpp"

namespace pmlab::pmdk {

struct Persistence {
  bool count = false;        ///< count PMDK's flushes and fences into persist::tls_counters
  bool elide_flush = false;  ///< issue no cache-line flush (copies libpmem makes non-temporal stay so, as under eADR)
  bool elide_fence = false;  ///< issue no drain (sfence)
  /// Sees PMDK's write-backs and drains as a Persister's observer sees ours (the run's device model).
  persist::Observer* observer = nullptr;
};

// Process-wide; the bench sets it for one run and restores the default afterwards.
void set_persistence(const Persistence& p) noexcept;
Persistence persistence() noexcept;
// True when libpmemobj's calls reach pmlab's definitions (the interposition took effect).
bool interposed() noexcept;

// Sets `p` for a scope (one run) and restores what was set before.
class ScopedPersistence {
 public:
  explicit ScopedPersistence(const Persistence& p) noexcept : saved_(persistence()) { set_persistence(p); }
  ~ScopedPersistence() { set_persistence(saved_); }
  ScopedPersistence(const ScopedPersistence&) = delete;
  ScopedPersistence& operator=(const ScopedPersistence&) = delete;

 private:
  Persistence saved_;
};

}  // namespace pmlab::pmdk
