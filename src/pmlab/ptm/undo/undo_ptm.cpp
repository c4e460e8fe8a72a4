#include "pmlab/ptm/undo/undo_ptm.hpp"

#include <cstring>
#include <string>

namespace pmlab::ptm {

UndoPtm::UndoPtm(const Regions& r, const Options& options)
    : heap_(r.heap, r.heap_bytes), log_(r.log), log_p_(*r.log_persister), data_p_(*r.data_persister), options_(options) {
  if (r.log_bytes < log_bytes(options)) ptm_fatal("undo log region smaller than slots x slot_bytes");
  for (int i = 0; i < options.slots; ++i) {
    auto s = std::make_unique<Slot>();
    std::byte* base = log_ + static_cast<uint64_t>(i) * options.slot_bytes;
    s->index = i;
    s->header = reinterpret_cast<UndoSlotHeader*>(base);
    s->entries = reinterpret_cast<UndoEntry*>(base + sizeof(UndoSlotHeader));
    s->capacity = (options.slot_bytes - sizeof(UndoSlotHeader)) / sizeof(UndoEntry);
    slots_.push_back(std::move(s));
  }
}

Status UndoPtm::format() {
  if (Status st = heap_.format(data_p_); !st) return st;
  const uint64_t bytes = log_bytes(options_);
  std::memset(log_, 0, bytes);
  for (auto& s : slots_) {
    s->header->seq = 1;
    s->seq = 1;
  }
  log_p_.persist(log_, bytes);
  return Status::success();
}

Status UndoPtm::recover() {
  rolled_back_ = 0;
  for (auto& sp : slots_) {
    Slot& s = *sp;
    const uint64_t seq = persist::Persister::load8(&s.header->seq);
    uint64_t n = 0;
    while (n < s.capacity && s.entries[n].check == check_of(s.entries[n].off, s.entries[n].old, seq, s.index)) ++n;
    if (n > 0) {
      for (uint64_t i = n; i-- > 0;) {
        const UndoEntry& e = s.entries[i];
        if (e.off % 8 != 0 || e.off + 8 > heap_.size())
          return error(Errc::corrupted, "undo log slot " + std::to_string(s.index) + " entry " + std::to_string(i) +
                                            " points outside the heap");
        uint64_t* word = heap_.at<uint64_t>(e.off);
        data_p_.store8(word, e.old);
        data_p_.flush(word, 8);
      }
      data_p_.fence();
      log_p_.store8(&s.header->seq, seq + 1);
      log_p_.persist(&s.header->seq, 8);
      ++rolled_back_;
      s.seq = seq + 1;
    } else {
      s.seq = seq;
    }
  }
  return heap_.open();
}

void UndoPtm::commit(Slot& s) {
  ++s.counters.transactions;
  if (!s.dirty.empty()) {
    for (uint64_t line : s.dirty) data_p_.flush(heap_.base() + line, 64);
    data_p_.fence();
  }
  if (s.n > 0) {
    s.counters.log_entries += s.n;
    ++s.seq;
    log_p_.store8(&s.header->seq, s.seq);
    log_p_.persist(&s.header->seq, 8);
  }
  finish_frees(heap_, s.alloc);
}

TxCounters UndoPtm::counters() const noexcept { return sum_counters(slots_); }

}  // namespace pmlab::ptm
