// Undo-logging PTM: each word's old value is logged and made durable before the word is written in
// place; commit makes the data durable, then retires the log. Recovery rolls back, and so does a body
// that throws (the exception then reaches run()'s caller).
//
// Log slot (one per thread): a 64-byte header line holding `seq`, then 32-byte entries
// {offset, old value, check, -}. An entry belongs to the slot's current transaction when check ==
// mix(offset, old, seq, slot), so no count word needs its own fence and a torn entry is never taken for a
// valid one. A transaction:
//   write(w): first write to w in this tx (and w not in a block carved by this tx): append the entry,
//             flush + fence it (one fence per distinct logged word), then store w in place.
//   commit:   flush every dirty data line, fence; seq += 1, flush + fence (the log is retired).
//   recover:  per slot, the prefix of entries valid for seq is rolled back in reverse, flushed, fenced,
//             and seq += 1.
// Fences per writing transaction under ADR: distinct logged words + 2 (the cost [OptanePTM] blames).
#pragma once

#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/ptm/common/heap.hpp"
#include "pmlab/ptm/common/ptm.hpp"
#include "pmlab/ptm/common/slot_ptm.hpp"
#include "pmlab/ptm/common/word_map.hpp"

namespace pmlab::ptm {

struct UndoEntry {
  uint64_t off;
  uint64_t old;
  uint64_t check;
  uint64_t pad;
};
static_assert(sizeof(UndoEntry) == 32);

struct alignas(64) UndoSlotHeader {
  uint64_t seq;
  uint64_t pad[7];
};

struct alignas(64) UndoSlot : LogSlot<UndoSlotHeader, UndoEntry> {
  void begin() noexcept {
    n = 0;
    logged.clear();
    lines.clear();
    dirty.clear();
    alloc.clear();
  }

  uint64_t n = 0;
  WordMap logged;
  WordMap lines;
  std::vector<uint64_t> dirty;
};

class UndoPtm final : public SlotPtm<UndoPtm, UndoSlot> {
 public:
  static constexpr const char* kName = "undo";

  explicit UndoPtm(const Regions& regions, const Options& options = {}) : SlotPtm(regions, options) {}

  // Empty heap and empty log slots, durable.
  Status format();
  // Rolls back every slot's unfinished transaction, then opens the heap (rebuilding the free lists).
  Status recover();

  class Tx;
  // Transactions rolled back by the last recover().
  uint64_t rolled_back() const noexcept { return rolled_back_; }
  // The sequence number slot `slot` holds durably: the one its next transaction logs under. It only
  // grows: entries logged under an earlier one may still lie past a later transaction's, and a slot whose
  // number went back could take them for its own.
  uint64_t durable_seq(int slot) const noexcept {
    return persist::Persister::load8(&slots_[static_cast<size_t>(slot)]->header->seq);
  }

 private:
  friend class SlotPtm<UndoPtm, UndoSlot>;
  using Slot = UndoSlot;

  uint64_t check_of(uint64_t off, uint64_t old, uint64_t seq, int slot) const noexcept {
    return mix64(off ^ mix64(old ^ mix64(seq * 0x100000001b3ull + static_cast<uint64_t>(slot) + 1)));
  }
  void commit(Slot& s);
  // Undoes the slot's running transaction as recovery would (its logged words restored, in reverse, and
  // made durable before the log is retired) and gives back the blocks it took.
  void abort(Slot& s);
  // Restores the first `n` entries of slot `s` logged under `seq`, then retires them: seq + 1, durable.
  Status roll_back(Slot& s, uint64_t seq, uint64_t n);

  uint64_t rolled_back_ = 0;
};

class UndoPtm::Tx : public TxShell<UndoPtm::Tx, UndoSlot> {
 public:
  Tx(UndoPtm& ptm, UndoSlot& slot) noexcept : TxShell(ptm.heap_, slot), ptm_(ptm) {}

  uint64_t read(const uint64_t* word) const noexcept { return persist::Persister::load8(word); }

  void write(uint64_t* word, uint64_t value) {
    const uint64_t off = heap_.offset_of(word);
    if (ptm_.options_.logging && !s_.alloc.is_fresh(off) && s_.logged.insert(off, 0).second) {
      if (s_.n == s_.capacity)
        ptm_fatal("undo transaction logs more than " + std::to_string(s_.capacity) + " words (log slot of " +
                  std::to_string(ptm_.options_.slot_bytes) + " bytes; " + kLargerSlot + ")");
      UndoEntry* e = s_.entries + s_.n++;
      const uint64_t old = *word;
      e->off = off;
      e->old = old;
      e->check = ptm_.check_of(off, old, s_.seq, s_.index);
      ptm_.log_p_.persist(e, sizeof *e);
    }
    // Logged first (or fresh, so unreachable until commit): recovery rolls a torn word back.
    ptm_.data_p_.store_shared(word, value);
    const uint64_t line = off & ~uint64_t{63};
    if (s_.lines.insert(line, 0).second) s_.dirty.push_back(line);
  }

 private:
  UndoPtm& ptm_;
};

static_assert(Ptm<UndoPtm>);

}  // namespace pmlab::ptm
