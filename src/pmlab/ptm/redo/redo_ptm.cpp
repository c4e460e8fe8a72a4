#include "pmlab/ptm/redo/redo_ptm.hpp"

#include <cstring>
#include <string>

namespace pmlab::ptm {

Status RedoPtm::format() {
  return format_with([](Slot& s) { s.seq = 0; });
}

Status RedoPtm::recover() {
  replayed_ = 0;
  for (auto& sp : slots_) {
    Slot& s = *sp;
    RedoSlotHeader& h = *s.header;
    const uint64_t seq = persist::Persister::load8(&h.commit_seq);
    const uint64_t retired = persist::Persister::load8(&h.retired_seq);
    s.seq = seq > retired ? seq : retired;
    if (seq <= retired || h.n > s.capacity || checksum_of(s.entries, h.n, seq, s.index) != h.checksum) continue;
    for (uint64_t i = 0; i < h.n; ++i) {
      if (Status st = restore_word(s, i, s.entries[i].off, s.entries[i].value); !st) return st;
    }
    data_p_.fence();
    log_p_.store8(&h.retired_seq, seq);
    log_p_.persist(&h.retired_seq, 8);
    ++replayed_;
  }
  return heap_.open();
}

void RedoPtm::commit(Slot& s) {
  ++s.counters.transactions;
  const uint64_t n = s.writes.size();
  if (n == 0 && s.fresh_lines.empty()) {
    finish_frees(heap_, s.alloc);
    return;
  }
  // Blocks carved in this transaction were written in place: durable before the commit record can be.
  // Their own fence — one shared with the log's would let an evicted log line commit a node whose
  // payload never reached memory (the crash simulator finds exactly that).
  for (uint64_t line : s.fresh_lines) data_p_.flush(heap_.base() + line, 64);
  const bool log_it = options_.logging && n > 0;
  if (!s.fresh_lines.empty()) data_p_.fence();
  const uint64_t seq = s.seq + 1;
  if (log_it) {
    RedoSlotHeader& h = *s.header;
    std::memcpy(s.entries, s.writes.data(), n * sizeof(RedoEntry));
    h.n = n;
    h.checksum = checksum_of(s.writes.data(), n, seq, s.index);
    log_p_.store8(&h.commit_seq, seq);
    log_p_.flush(s.entries, n * sizeof(RedoEntry));
    log_p_.flush(&h, sizeof h);
    log_p_.fence();
    s.seq = seq;
    s.counters.log_entries += n;
  }
  if (n > 0) {
    // Every store first, then one write-back per line: a line written back before its last store would
    // reach memory without it.
    for (const RedoEntry& e : s.writes) data_p_.store8(heap_.at<uint64_t>(e.off), e.value);
    s.lines.clear();
    for (const RedoEntry& e : s.writes) {
      const uint64_t line = e.off & ~uint64_t{63};
      if (s.lines.insert(line, 0).second) data_p_.flush(heap_.base() + line, 64);
    }
    data_p_.fence();
  }
  if (log_it) {
    log_p_.store8(&s.header->retired_seq, seq);
    log_p_.persist(&s.header->retired_seq, 8);
  }
  finish_frees(heap_, s.alloc);
}

}  // namespace pmlab::ptm
