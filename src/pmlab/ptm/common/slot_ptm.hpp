// The shell both logging PTMs (undo, redo) are built in, so that each states only its log protocol: the
// heap and the log region with their persisters, one log slot per thread carved out of the log region
// (a header line, then entries), the global lock a transaction holds from its first access to the end
// of its commit (run(); a PTM with its own concurrency control defines its own run()), and the
// transaction's allocator and heap access.
#pragma once

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/ptm/common/heap.hpp"
#include "pmlab/ptm/common/ptm.hpp"

namespace pmlab::ptm {

// What every log slot holds; a PTM's slot type derives from it and adds its transaction's volatile state
// and a `begin()` that empties that state (the allocator's included) before a transaction.
template <class Header, class Entry>
struct alignas(64) LogSlot {
  int index = 0;
  Header* header = nullptr;
  Entry* entries = nullptr;
  uint64_t capacity = 0;  // entries the slot holds
  uint64_t seq = 0;
  TxAllocState alloc;
  TxCounters counters;
};

// `Ptm` derives from SlotPtm<Ptm, Slot> and has kName, a nested Tx constructible from (Ptm&, Slot&), and
// commit(Slot&); Slot derives from LogSlot.
template <class Ptm, class Slot>
class SlotPtm {
 public:
  SlotPtm(const SlotPtm&) = delete;
  SlotPtm& operator=(const SlotPtm&) = delete;

  static uint64_t log_bytes(const Options& options) noexcept {
    return static_cast<uint64_t>(options.slots) * options.slot_bytes;
  }

  // One failure-atomic transaction on log slot `slot`. A body that throws leaves nothing behind: the
  // transaction is undone (Ptm::abort) before the exception goes on to the caller.
  template <class F>
  void run(int slot, F&& body) {
    Slot& s = *slots_[static_cast<size_t>(slot)];
    std::lock_guard<std::mutex> guard(lock_);
    s.begin();
    typename Ptm::Tx tx(static_cast<Ptm&>(*this), s);
    try {
      body(tx);
    } catch (...) {
      static_cast<Ptm&>(*this).abort(s);
      throw;
    }
    static_cast<Ptm&>(*this).commit(s);
  }

  Heap& heap() noexcept { return heap_; }
  const Options& options() const noexcept { return options_; }
  TxCounters counters() const noexcept { return sum_counters(slots_); }

 protected:
  SlotPtm(const Regions& r, const Options& options)
      : heap_(r.heap, r.heap_bytes, options.slots),
        log_(r.log),
        log_p_(*r.log_persister),
        data_p_(*r.data_persister),
        options_(options) {
    if (r.log_bytes < log_bytes(options))
      ptm_fatal(std::string(Ptm::kName) + " log region smaller than slots x slot_bytes");
    for (int i = 0; i < options.slots; ++i) {
      auto s = std::make_unique<Slot>();
      std::byte* base = log_ + static_cast<uint64_t>(i) * options.slot_bytes;
      s->index = i;
      s->header = reinterpret_cast<decltype(s->header)>(base);
      s->entries = reinterpret_cast<decltype(s->entries)>(base + sizeof *s->header);
      s->capacity = (options.slot_bytes - sizeof *s->header) / sizeof *s->entries;
      slots_.push_back(std::move(s));
    }
  }

  // Formats the heap, its header's recovered_seq set, and the log: each slot's header as `init_slot`
  // returns it (having set the slot's own state), the rest of the slot zero; durable on return. What
  // holds its formatted value already (most of a new pool, which is zero) is only read (store_changed).
  template <class InitSlot>
  Status format_with(uint64_t recovered_seq, const InitSlot& init_slot) {
    if (options_.first_seq == 0 || options_.first_seq > (uint64_t{1} << 62))
      return error(Errc::invalid_argument, "a PTM's first sequence number must be 1 to 2^62");
    if (Status st = heap_.format(data_p_, recovered_seq); !st) return st;
    size_t written = 0;
    for (auto& s : slots_) {
      const auto header = init_slot(*s);
      static_assert(std::is_same_v<decltype(header), const std::remove_pointer_t<decltype(s->header)>>);
      auto* base = reinterpret_cast<std::byte*>(s->header);
      written += log_p_.store_changed(base, &header, sizeof header);
      written += log_p_.zero_changed(base + sizeof header, options_.slot_bytes - sizeof header);
    }
    if (written > 0) log_p_.fence();
    return Status::success();
  }

  // Recovery's write of a logged `value` back to the heap word at `off` (entry `i` of slot `s`), flushed;
  // an offset outside the heap means the log is corrupt, and nothing is written.
  Status restore_word(const Slot& s, uint64_t i, uint64_t off, uint64_t value) {
    if (off % 8 != 0 || off + 8 > heap_.size())
      return error(Errc::corrupted, std::string(Ptm::kName) + " log slot " + std::to_string(s.index) + " entry " +
                                        std::to_string(i) + " points outside the heap");
    uint64_t* word = heap_.at<uint64_t>(off);
    data_p_.store_shared(word, value);  // a crash that tears it leaves the log to restore it again
    data_p_.flush(word, 8);
    return Status::success();
  }

  Heap heap_;
  std::byte* log_;
  const persist::Persister& log_p_;
  const persist::Persister& data_p_;
  Options options_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::mutex lock_;
};

// What both PTMs' transactions share: allocation and frees over the transaction's own read and write
// (`Tx` derives from TxShell<Tx, Slot>), and typed access to the heap and its roots.
template <class Tx, class Slot>
class TxShell {
 public:
  uint64_t alloc(uint64_t bytes) { return tx_alloc(static_cast<Tx&>(*this), bytes); }
  void free(uint64_t off) { tx_free(static_cast<Tx&>(*this), off); }
  template <class T>
  T* at(uint64_t off) const noexcept {
    return heap_.template at<T>(off);
  }
  uint64_t* root(int i) const noexcept { return &heap_.header().root[i]; }

  Heap& heap() noexcept { return heap_; }
  TxAllocState& alloc_state() noexcept { return s_.alloc; }
  int arena() const noexcept { return s_.index; }
  // New blocks are written in place, unlogged (tx_alloc's policy): a block allocated by a transaction that
  // does not commit is free again, whatever its payload holds.
  bool in_place_reused() const noexcept { return true; }
  bool in_place_carved(uint64_t) const noexcept { return true; }

 protected:
  TxShell(Heap& heap, Slot& slot) noexcept : heap_(heap), s_(slot) {}

  Heap& heap_;
  Slot& s_;
};

}  // namespace pmlab::ptm
