// The transactional mode's hooks into PMDK's libpmemobj transactions (the `tx` mode of ds/common/mode.hpp).
//
// A structure written for the persist mode already says, at every write, what kind of write it is; the
// Transactional arena maps those calls onto one libpmemobj transaction per operation:
//  - Arena::store8 (an in-place commit store of reachable state) -> snapshot(): the word is undo-logged
//    (pmemobj_tx_add_range_direct) before it changes, so an abort or a crash rolls it back;
//  - Arena::persist / flush of freshly written bytes that were unreachable when the operation began (a new
//    node, a value cell's spare buffer, a free B+-tree slot) -> add_fresh(): registered with
//    POBJ_XADD_NO_SNAPSHOT, flushed by the commit, never logged (rolling it back would change nothing
//    reachable); bytes unreachable now but live at the start (a slot a split freed in the same operation)
//    are announced with Arena::will_overwrite and undo-logged like a commit word;
//  - Arena::fence inside a transaction -> nothing: the commit's drains order everything.
// Outside a transaction (create, recovery) the arena falls back to the run's persister.
//
// Built without libpmemobj, available() is false and every hook is a no-op (the tx mode is then skipped).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmlab::pmdk::tx {

bool available() noexcept;

// True inside a transaction's work stage on this thread.
bool in_transaction() noexcept;
// Undo-logs [p, p+len) before an in-place change; a no-op outside a transaction. With logging switched off
// (set_logging(false), the overhead decomposition) the range is only registered for the commit's flush.
void snapshot(const void* p, size_t len) noexcept;
// Registers freshly written bytes for the commit's flush; false (and nothing done) outside a transaction.
bool add_fresh(const void* p, size_t len) noexcept;

// One failure-atomic operation: begins a transaction on `pool` (a PMEMobjpool*), commits at scope exit.
// A null pool is no transaction at all (the arena then persists through the persister).
class Scope {
 public:
  explicit Scope(void* pool) noexcept;
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  bool active_ = false;
};

// Overhead decomposition [PMDKOverheads]: "logging off" turns every snapshot into a no-snapshot registration.
// Process-wide; the bench sets it for one run and restores it. Crash guarantees are void while off.
void set_logging(bool on) noexcept;
bool logging() noexcept;

// Transactions that ended aborted (out of log space, an injected abort): a run must see none.
uint64_t aborts() noexcept;

// Tests only: called at every snapshot / fresh registration inside a transaction, before PMDK sees it
// (a crash-injection point: the hook may _exit the process mid-transaction).
using FaultHook = void (*)() noexcept;
void set_fault_hook(FaultHook hook) noexcept;

}  // namespace pmlab::pmdk::tx
