// Undo-logging PTM: each word's old value is logged and made durable before the word is written in
// place; commit makes the data durable, then retires the log. Recovery rolls back.
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

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/ptm/common/heap.hpp"
#include "pmlab/ptm/common/ptm.hpp"
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

class UndoPtm {
 public:
  static constexpr const char* kName = "undo";

  explicit UndoPtm(const Regions& regions, const Options& options = {});
  UndoPtm(const UndoPtm&) = delete;
  UndoPtm& operator=(const UndoPtm&) = delete;

  static uint64_t log_bytes(const Options& options) noexcept {
    return static_cast<uint64_t>(options.slots) * options.slot_bytes;
  }
  // Empty heap and empty log slots, durable.
  Status format();
  // Rolls back every slot's unfinished transaction, then opens the heap (rebuilding the free lists).
  Status recover();

  class Tx;
  template <class F>
  void run(int slot, F&& body);

  Heap& heap() noexcept { return heap_; }
  const Options& options() const noexcept { return options_; }
  TxCounters counters() const noexcept;
  // Transactions rolled back by the last recover().
  uint64_t rolled_back() const noexcept { return rolled_back_; }

 private:
  struct alignas(64) Slot {
    int index = 0;
    UndoSlotHeader* header = nullptr;
    UndoEntry* entries = nullptr;
    uint64_t capacity = 0;
    uint64_t seq = 0;
    uint64_t n = 0;
    WordMap logged;
    WordMap lines;
    std::vector<uint64_t> dirty;
    TxAllocState alloc;
    TxCounters counters;
  };
  uint64_t check_of(uint64_t off, uint64_t old, uint64_t seq, int slot) const noexcept {
    return mix64(off ^ mix64(old ^ mix64(seq * 0x100000001b3ull + static_cast<uint64_t>(slot) + 1)));
  }
  void commit(Slot& s);

  Heap heap_;
  std::byte* log_;
  const persist::Persister& log_p_;
  const persist::Persister& data_p_;
  Options options_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::mutex lock_;
  uint64_t rolled_back_ = 0;
};

class UndoPtm::Tx {
 public:
  Tx(UndoPtm& ptm, Slot& slot) noexcept : ptm_(ptm), s_(slot) {}

  uint64_t read(const uint64_t* word) const noexcept { return persist::Persister::load8(word); }

  void write(uint64_t* word, uint64_t value) {
    const uint64_t off = ptm_.heap_.offset_of(word);
    if (ptm_.options_.logging && !s_.alloc.is_fresh(off) &&
        s_.logged.insert(off, 0).second) {
      if (s_.n == s_.capacity)
        ptm_fatal("undo transaction logs more than " + std::to_string(s_.capacity) + " words (log slot of " +
                  std::to_string(ptm_.options_.slot_bytes) + " bytes)");
      UndoEntry* e = s_.entries + s_.n++;
      const uint64_t old = *word;
      e->off = off;
      e->old = old;
      e->check = ptm_.check_of(off, old, s_.seq, s_.index);
      ptm_.log_p_.persist(e, sizeof *e);
    }
    ptm_.data_p_.store8(word, value);
    const uint64_t line = off & ~uint64_t{63};
    if (s_.lines.insert(line, 0).second) s_.dirty.push_back(line);
  }

  uint64_t alloc(uint64_t bytes) { return tx_alloc(*this, bytes); }
  void free(uint64_t off) { tx_free(*this, off); }
  template <class T>
  T* at(uint64_t off) const noexcept {
    return ptm_.heap_.at<T>(off);
  }
  uint64_t* root(int i) const noexcept { return &ptm_.heap_.header().root[i]; }

  Heap& heap() noexcept { return ptm_.heap_; }
  TxAllocState& alloc_state() noexcept { return s_.alloc; }

 private:
  UndoPtm& ptm_;
  Slot& s_;
};

template <class F>
void UndoPtm::run(int slot, F&& body) {
  Slot& s = *slots_[static_cast<size_t>(slot)];
  std::lock_guard<std::mutex> guard(lock_);
  s.n = 0;
  s.logged.clear();
  s.lines.clear();
  s.dirty.clear();
  s.alloc.clear();
  Tx tx(*this, s);
  body(tx);
  commit(s);
}

static_assert(Ptm<UndoPtm>);

}  // namespace pmlab::ptm
