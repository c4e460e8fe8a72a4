// A PTM that owns its region: a superblock line, the log slots, then the heap — what a pool of layout
// "ptm" holds in its data area, so that a transactional heap survives the process that made it.
//
//   [superblock: magic, kind, slots, slot_bytes, log and heap offsets, heap bytes, checksum]
//   [log: slots x slot_bytes]  [heap: HeapHeader, blocks]
//
// The superblock is written once, at format, and made durable before the log and the heap are; a region
// whose superblock does not validate was never formatted (or is not a PTM's) and is refused by open.
// open() recovers: the redo PTM replays its live records, the undo PTM rolls back unfinished transactions.
// Both log and data go through the one persister given (the pool's: its domain and flush instruction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/persister.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/ptm/common/ptm.hpp"
#include "pmlab/ptm/redo/redo_ptm.hpp"
#include "pmlab/ptm/undo/undo_ptm.hpp"

namespace pmlab::ptm {

enum class StoreKind : uint8_t { redo = 1, undo = 2 };
const char* to_string(StoreKind k) noexcept;
Result<StoreKind> parse_store_kind(std::string_view text);  // "redo", "undo"

struct StoreOptions {
  StoreKind kind = StoreKind::redo;
  int slots = 8;                   // threads that may run transactions at once
  uint64_t slot_bytes = 64 << 10;  // each slot's log: bounds the words one transaction writes
};

inline constexpr uint64_t kStoreMagic = 0x6d74702d62616c70ull;  // "plab-ptm"
inline constexpr int kMaxStoreSlots = 1024;
inline constexpr uint64_t kMinSlotBytes = 4096;

// One cache line at the start of the region (64 bytes, no alignment of its own: read and written by copy).
struct StoreSuperblock {
  uint64_t magic;
  uint64_t kind;
  uint64_t slots;
  uint64_t slot_bytes;
  uint64_t log_offset;
  uint64_t heap_offset;
  uint64_t heap_bytes;
  uint64_t checksum;  // over the words before it
};
static_assert(sizeof(StoreSuperblock) == 64);

class PtmStore {
 public:
  // Lays out an empty PTM in `region` (which it overwrites) and returns it open. The persister must
  // outlive the store.
  static Result<std::unique_ptr<PtmStore>> format(std::span<std::byte> region, const persist::Persister& persister,
                                                  const StoreOptions& options);
  // Opens a formatted region and recovers it.
  static Result<std::unique_ptr<PtmStore>> open(std::span<std::byte> region, const persist::Persister& persister);
  // Verifies the region read-only: the superblock, and that the heap's blocks parse.
  static Status check(std::span<const std::byte> region);
  // The smallest region for these options with `heap_bytes` of heap.
  static uint64_t region_bytes(const StoreOptions& options, uint64_t heap_bytes) noexcept;

  StoreKind kind() const noexcept { return kind_; }
  const StoreOptions& options() const noexcept { return options_; }
  // Exactly one is set, by kind().
  RedoPtm* redo() noexcept { return redo_.get(); }
  UndoPtm* undo() noexcept { return undo_.get(); }
  Heap& heap() noexcept { return redo_ ? redo_->heap() : undo_->heap(); }
  TxCounters counters() const noexcept { return redo_ ? redo_->counters() : undo_->counters(); }
  // Transactions the last open found unfinished and completed (redo: replayed) or undid (undo).
  uint64_t recovered() const noexcept { return recovered_; }
  // A clean close: every committed transaction's data durable and nothing left for the next open to
  // recover (the redo PTM otherwise leaves its last records live until the next commit). Not concurrent
  // with transactions.
  void quiesce() {
    if (redo_) redo_->quiesce();
  }

 private:
  PtmStore(std::span<std::byte> region, const persist::Persister& persister, const StoreSuperblock& sb);
  static Result<StoreSuperblock> read_superblock(std::span<const std::byte> region);

  StoreKind kind_;
  StoreOptions options_;
  std::unique_ptr<RedoPtm> redo_;
  std::unique_ptr<UndoPtm> undo_;
  uint64_t recovered_ = 0;
};

// A pool file holding one PtmStore in its data area: layout "ptm", recovered by Pool::recover and checked
// by `pmlab pool check`.
inline constexpr const char* kStorePoolLayout = "ptm";
// Creates PATH (never overwrites) with a formatted store in its data area.
Result<std::unique_ptr<pool::Pool>> create_store_pool(const std::string& path, uint64_t size,
                                                      const StoreOptions& options);
// The store in an open pool of layout "ptm", recovered. The pool must outlive it.
Result<std::unique_ptr<PtmStore>> open_store(pool::Pool& pool);

}  // namespace pmlab::ptm
