#include "pmlab/ptm/undo/undo_ptm.hpp"

#include <cstring>
#include <string>

namespace pmlab::ptm {

Status UndoPtm::format() {
  const uint64_t first = options_.first_seq;
  return format_with(0, [first](Slot& s) {
    s.seq = first;
    return UndoSlotHeader{.seq = first, .pad = {}};
  });
}

Status UndoPtm::recover() {
  rolled_back_ = 0;
  for (auto& sp : slots_) {
    Slot& s = *sp;
    const uint64_t seq = persist::Persister::load8(&s.header->seq);
    uint64_t n = 0;
    while (n < s.capacity && s.entries[n].check == check_of(s.entries[n].off, s.entries[n].old, seq, s.index)) ++n;
    if (n > 0) {
      PMLAB_TRY(roll_back(s, seq, n));
      ++rolled_back_;
    } else {
      s.seq = seq;
    }
  }
  return heap_.open();
}

Status UndoPtm::roll_back(Slot& s, uint64_t seq, uint64_t n) {
  for (uint64_t i = n; i-- > 0;) PMLAB_TRY(restore_word(s, i, s.entries[i].off, s.entries[i].old));
  data_p_.fence();
  // The slot's entries count only under the seq they were checked with: any other value retires them,
  // and the data they restored is durable already. Yet the word must not tear: a mix of the old and the
  // new value can lie below both (the new low half under the old high half), and the slot would then
  // log under numbers it used before, whose entries may lie past its new ones (durable_seq).
  log_p_.store8(&s.header->seq, seq + 1);
  log_p_.persist(&s.header->seq, 8);
  s.seq = seq + 1;
  return Status::success();
}

void UndoPtm::abort(Slot& s) {
  if (s.n > 0) {
    if (!options_.logging) ptm_fatal("undo transaction aborted without a log (logging off): it cannot be undone");
    // The entries are this process's own, just written: an offset outside the heap cannot occur.
    if (Status st = roll_back(s, s.seq, s.n); !st) ptm_fatal(st.message());
  }
  return_taken(heap_, s.alloc, s.index);
  s.begin();
}

void UndoPtm::commit(Slot& s) {
  ++s.counters.transactions;
  if (!s.dirty.empty()) ++s.counters.writing;
  if (!s.dirty.empty()) {
    for (uint64_t line : s.dirty) data_p_.flush(heap_.base() + line, 64);
    data_p_.fence();
  }
  if (s.n > 0) {
    s.counters.log_entries += s.n;
    ++s.seq;
    // The commit point; seq must not tear (see roll_back).
    log_p_.store8(&s.header->seq, s.seq);
    log_p_.persist(&s.header->seq, 8);
  }
  finish_frees(heap_, s.alloc, s.index);
}

}  // namespace pmlab::ptm
