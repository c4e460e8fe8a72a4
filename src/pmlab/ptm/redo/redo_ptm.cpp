#include "pmlab/ptm/redo/redo_ptm.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <utility>

namespace pmlab::ptm {

namespace {
uint64_t load_shared(const uint64_t* word) noexcept {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(word)).load(std::memory_order_acquire);
}
}  // namespace

RedoPtm::RedoPtm(const Regions& regions, const Options& options)
    : SlotPtm(regions, options), single_thread_(options.slots == 1) {
  // One orec per heap line up to 2^16 (512 KiB of orecs, so a read's orec mostly hits the cache), lines
  // beyond sharing them modulo the table (a false conflict costs only a rerun).
  const uint64_t lines = std::max<uint64_t>(64, heap_.size() / 64);
  const uint64_t n = std::min<uint64_t>(uint64_t{1} << 16, std::bit_ceil(lines));
  orec_mask_ = n - 1;
  orecs_ = std::make_unique<std::atomic<uint64_t>[]>(n);
  for (uint64_t i = 0; i < n; ++i) orecs_[i].store(0, std::memory_order_relaxed);
  const uint64_t area_bytes = ((options.slot_bytes - sizeof(RedoRetireLine)) / 2) & ~uint64_t{63};
  if (area_bytes < 128) ptm_fatal("redo log slot of " + std::to_string(options.slot_bytes) + " bytes is too small");
  for (auto& sp : slots_) {
    auto* base = reinterpret_cast<std::byte*>(sp->header) + sizeof(RedoRetireLine);
    sp->area[0] = reinterpret_cast<uint64_t*>(base);
    sp->area[1] = reinterpret_cast<uint64_t*>(base + area_bytes);
    sp->area_capacity = (area_bytes - kRedoRecordOverhead) / sizeof(RedoEntry);
    sp->capacity = sp->area_capacity;
    sp->known_durable.assign(slots_.size(), 0);
  }
}

Status RedoPtm::format() {
  // The clock before the first transaction: every record up to it counts as retired.
  const uint64_t before = options_.first_seq - 1;
  clock_.store(before);
  return format_with(before, [before](Slot& s) {
    s.last_seq = 0;  // no record of this slot's yet
    s.next_area = 0;
    s.seen_clock = before;  // never past the clock: a read version ahead of it would accept a commit's half
    s.durable_seq.store(before);
    s.retired_durable.store(before);
    std::fill(s.known_durable.begin(), s.known_durable.end(), before);
    return RedoRetireLine{};  // nothing retired: recovered_seq covers every record up to `before`
  });
}

Status RedoPtm::recover() {
  replayed_ = 0;
  struct Live {
    uint64_t seq;
    Slot* slot;
    const uint64_t* record;
  };
  std::vector<Live> live;
  // Records up to the last recovery's newest seq are done with, whatever the slots' retire words say: the
  // slots are retired by one word, so a crash during recovery cannot leave some retired and others not
  // (an older slot's record would then be replayed over a newer one's).
  uint64_t* recovered = &heap_.header().recovered_seq;
  const uint64_t done = persist::Persister::load8(recovered);
  uint64_t newest = done;
  for (auto& sp : slots_) {
    Slot& s = *sp;
    const uint64_t retired = std::max(done, persist::Persister::load8(&s.header->retired_seq));
    newest = std::max(newest, retired);
    for (const uint64_t* rec : s.area) {
      const auto* h = reinterpret_cast<const RedoRecordHeader*>(rec);
      const auto* entries = reinterpret_cast<const RedoEntry*>(rec + 2);
      if (h->n > s.area_capacity) continue;
      const RedoEntry& trailer = entries[h->n];
      if (trailer.value != h->seq || trailer.off != checksum_of(entries, h->n, h->seq, s.index)) continue;
      newest = std::max(newest, h->seq);
      if (h->seq > retired) live.push_back({h->seq, &s, rec});
    }
  }
  std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) { return a.seq < b.seq; });
  for (const Live& l : live) {
    const auto* entries = reinterpret_cast<const RedoEntry*>(l.record + 2);
    for (uint64_t i = 0; i < l.record[1]; ++i)
      if (Status st = restore_word(*l.slot, i, entries[i].off, entries[i].value); !st) return st;
    ++replayed_;
  }
  if (newest != done) {
    // The replayed data durable first, then every record seen retired (new seqs follow `newest`). The word
    // must not tear: its new low half under the old high half lies below records only it retires (those
    // before the last quiesce or recovery, which empties the orecs, so no successor retires their slots).
    // The next recovery would replay them again, and one of an idle slot, overwritten since by another
    // slot's transaction whose record is gone, over that transaction.
    data_p_.fence();
    data_p_.store8(recovered, newest);
    data_p_.persist(recovered, 8);
  }
  for (auto& sp : slots_) {
    sp->last_seq = 0;
    sp->next_area = 0;
    sp->seen_clock = newest;
    sp->durable_seq.store(newest);
    sp->retired_durable.store(newest);
    std::fill(sp->known_durable.begin(), sp->known_durable.end(), newest);
  }
  clock_.store(newest);
  for (uint64_t i = 0; i <= orec_mask_; ++i) orecs_[i].store(0, std::memory_order_relaxed);
  return heap_.open();
}

void RedoPtm::quiesce() {
  for (auto& sp : slots_) {
    for (uint64_t line : sp->unflushed) data_p_.flush(heap_.base() + line, 64);
    sp->unflushed.clear();
  }
  // The data durable first; then one word retires every record, as at the end of recover(). Retiring
  // is what a clean close promises, saving the next open its replay (the crash subjects count what
  // recovery replays after a quiesce); consistency does not need it: a record left live replays the
  // values its transaction committed, in seq order with the rest. The store must not tear, as in
  // recover(): torn, it would bring back a record only it retires, an idle slot's, to be replayed over
  // what other slots wrote since (ptm.redo's idle load slot shows it). With one slot there is no idle
  // one, and every record still in the slot is newer than the word's old value, live either way: there
  // (ptm.redo-one-slot) the split survives mutation testing.
  data_p_.fence();
  const uint64_t newest = clock_.load(std::memory_order_acquire);
  uint64_t* recovered = &heap_.header().recovered_seq;
  if (persist::Persister::load8(recovered) < newest) {
    data_p_.store8(recovered, newest);
    data_p_.persist(recovered, 8);
  }
  for (auto& sp : slots_) sp->durable_seq.store(sp->last_seq, std::memory_order_release);
}

uint64_t RedoPtm::read_shared(Slot& s, const uint64_t* word, uint64_t off) {
  if (single_thread_) return load_shared(word);  // no other thread commits: every read is consistent
  const uint32_t o = orec_of(off);
  std::atomic<uint64_t>& orec = orecs_[o];
  for (;;) {
    const uint64_t before = orec.load(std::memory_order_acquire);
    if (before & kLocked) {
      if (orec_slot(before) == s.index) return load_shared(word);  // the top's orec, taken by this transaction
      data_p_.spin_wait();  // another thread is committing (or carving at the top): wait for its release
      continue;
    }
    if (orec_version(before) > s.rv) {
      // Written since this transaction began: if nothing it read has changed, its snapshot moves forward.
      const uint64_t now = clock_.load(std::memory_order_acquire);
      if (!reads_still_valid(s)) throw Abandoned{};
      s.rv = now;
      s.seen_clock = now;
      continue;
    }
    const uint64_t value = load_shared(word);
    if (orec.load(std::memory_order_acquire) != before) continue;
    s.read_set.push_back(o);
    return value;
  }
}

bool RedoPtm::reads_still_valid(Slot& s) const {
  // The orecs this transaction holds, indexed only now: most commits never revalidate.
  s.owned.clear();
  for (size_t i = 0; i < s.locked.size(); ++i) s.owned.insert(s.locked[i].orec, static_cast<uint32_t>(i));
  for (const uint32_t o : s.read_set) {
    uint64_t seen = orecs_[o].load(std::memory_order_acquire);
    if (seen & kLocked) {
      const uint32_t* pos = s.owned.find(o);
      if (pos == nullptr || orec_slot(seen) != s.index) return false;
      seen = s.locked[*pos].previous;
    }
    if (orec_version(seen) > s.rv) return false;
  }
  return true;
}

void RedoPtm::lock_top(Slot& s) {
  const uint32_t o = orec_of(heap_.offset_of(&heap_.header().top));
  std::atomic<uint64_t>& orec = orecs_[o];
  for (;;) {
    uint64_t cur = orec.load(std::memory_order_acquire);
    if (cur == orec_locked(s.index)) return;  // taken earlier in this transaction
    if (cur & kLocked) {
      data_p_.spin_wait();
      continue;
    }
    // The top is read after this; a version past rv would make that read's snapshot inconsistent with
    // the others (validated at commit like any read).
    if (orec.compare_exchange_weak(cur, orec_locked(s.index), std::memory_order_acq_rel)) {
      s.locked.push_back({o, cur});
      if (orec_version(cur) > s.rv) s.read_set.push_back(o);
      return;
    }
  }
}

void RedoPtm::release(Slot& s) {
  for (const Slot::Locked& l : s.locked) orecs_[l.orec].store(l.previous, std::memory_order_release);
  s.locked.clear();
  return_taken(heap_, s.alloc, s.index);
}

void RedoPtm::backoff(int attempt) const noexcept {
  const int spins = 1 << std::min(attempt, 10);
  for (int i = 0; i < spins; ++i) data_p_.spin_wait();
}

void RedoPtm::write_back_for(const Slot& p, uint64_t seq) {
  // The record is read while its thread may be reusing the area; it reuses it only after its next
  // commit's fence, which makes `seq` durable anyway, so a torn read here can only flush needless lines.
  for (const uint64_t* rec : p.area) {
    if (load_shared(rec) != seq) continue;
    const uint64_t n = std::min(load_shared(rec + 1), p.area_capacity);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t off = load_shared(rec + 2 + 2 * i);
      if (off < heap_.size()) data_p_.flush(heap_.base() + (off & ~uint64_t{63}), 64);
    }
  }
}

void RedoPtm::retire(Slot& p, uint64_t seq) {
  // Several threads retire a slot: the word only grows (compare-exchange to the maximum). Written back
  // here even when another thread stored it, whose fence may not have come yet.
  const persist::PmWord word = log_p_.word(&p.header->retired_seq);
  uint64_t cur = word.load(std::memory_order_acquire);
  while (cur < seq && !word.compare_exchange_strong(cur, seq, std::memory_order_acq_rel)) {}
  log_p_.flush(&p.header->retired_seq, 8);
}

[[gnu::always_inline]] inline bool RedoPtm::lock_write_set(Slot& s, uint64_t& wv) {
  if (single_thread_) {
    // One slot, one thread: no orec is read by anyone else, and no commit comes between.
    wv = clock_.load(std::memory_order_relaxed) + 1;
    clock_.store(wv, std::memory_order_relaxed);
    return true;
  }
  for (const RedoEntry& e : s.writes) {
    const uint32_t o = orec_of(e.off);
    uint64_t cur = orecs_[o].load(std::memory_order_relaxed);
    if (cur == orec_locked(s.index)) continue;  // another word of a line (or of an aliased line) it holds
    if ((cur & kLocked) || !orecs_[o].compare_exchange_strong(cur, orec_locked(s.index), std::memory_order_acq_rel))
      return false;
    s.locked.push_back({o, cur});
  }
  wv = clock_.fetch_add(1, std::memory_order_acq_rel) + 1;
  s.seen_clock = wv;
  return wv == s.rv + 1 || reads_still_valid(s);
}

// Each other slot whose transaction last wrote one of these lines: its record must never be replayed over
// this transaction's writes, so it is retired (up to the newest such transaction) — once its data is
// durable, which this thread makes sure of if that thread has not fenced since.
[[gnu::always_inline]] inline void RedoPtm::retire_predecessors(Slot& s) {
  s.predecessors.clear();
  for (const Slot::Locked& l : s.locked) {
    const int p = orec_slot(l.previous);
    const uint64_t v = orec_version(l.previous);
    if (v == 0 || p == s.index || static_cast<size_t>(p) >= slots_.size()) continue;
    auto it = std::find_if(s.predecessors.begin(), s.predecessors.end(), [&](const auto& q) { return q.first == p; });
    if (it == s.predecessors.end()) s.predecessors.push_back({p, v});
    else it->second = std::max(it->second, v);
  }
  bool helped = false;
  for (const auto& [p, v] : s.predecessors) {
    uint64_t& known = s.known_durable[static_cast<size_t>(p)];
    if (known >= v) continue;
    const Slot& ps = *slots_[static_cast<size_t>(p)];
    known = ps.durable_seq.load(std::memory_order_acquire);
    if (known < v) {
      write_back_for(ps, v);
      helped = true;
    }
  }
  // One fence for both: the in-place blocks before the record, the helped transactions before they are
  // retired.
  if (helped || !s.fresh_lines.empty()) data_p_.fence();
  for (const auto& [p, v] : s.predecessors) {
    Slot& ps = *slots_[static_cast<size_t>(p)];
    // Retired durably up to v already (some commit's fence followed its retire): nothing to write.
    if (ps.retired_durable.load(std::memory_order_acquire) < v) retire(ps, v);
  }
}

// The commit record, with a checksummed trailer, and its fence: the commit point.
[[gnu::always_inline]] inline void RedoPtm::log_commit(Slot& s, uint64_t wv) {
  const uint64_t n = s.writes.size();
  s.writes.push_back({checksum_of(s.writes.data(), n, wv, s.index), wv});  // the trailer
  const persist::LineRecord record{.prefix = nullptr,
                                   .prefix_len = 0,
                                   .word_count = 2,
                                   .words = {wv, n},
                                   .body = s.writes.data(),
                                   .body_len = (n + 1) * sizeof(RedoEntry)};
  if (log_p_.domain() == persist::Domain::adr) {
    log_p_.store_record_nt(s.area[s.next_area], record, nullptr);
  } else {
    // Durable caches (eADR) or a log in DRAM declared persistent: plain stores are durable once the
    // fence has drained them, and non-temporal ones would wait for memory instead.
    uint64_t* area = s.area[s.next_area];
    area[0] = wv;
    area[1] = n;
    std::memcpy(area + 2, s.writes.data(), (n + 1) * sizeof(RedoEntry));
  }
  s.writes.pop_back();
  log_p_.fence();  // the commit point; also makes the previous commit's data durable
  s.next_area ^= 1;
  s.durable_seq.store(s.last_seq, std::memory_order_release);
  for (const auto& [p, v] : s.predecessors) {  // this fence made those retires durable
    std::atomic<uint64_t>& known = slots_[static_cast<size_t>(p)]->retired_durable;
    uint64_t cur = known.load(std::memory_order_relaxed);
    while (cur < v && !known.compare_exchange_weak(cur, v, std::memory_order_acq_rel)) {}
  }
  s.last_seq = wv;
  s.counters.log_entries += n;
}

// The writes in place, after the commit point, and the write set's locks released at version wv.
[[gnu::always_inline]] inline void RedoPtm::write_in_place(Slot& s, uint64_t wv) {
  // Recovery replays the record over a word a crash tore. Each modified line once, written back by the next
  // commit (or by another thread's that needs this transaction durable first, from its record).
  //
  // A word that already holds its value (a key's zero padding stored over a free slot's zeros) is neither
  // stored nor its line written back for it: a write-back of a line that did not change is a wasted media
  // write. What the word holds is already this transaction's: the lock of its line keeps other writers out
  // until the store would have happened, and it is durable by the time this record can retire. Its writer,
  // if an earlier transaction of this slot, had its lines written back before this commit's fence; if
  // another slot's, that slot is this transaction's predecessor on the line and retire_predecessors wrote
  // its record's lines back first; with no writer since recovery it was durable already.
  s.lines.clear();
  for (const RedoEntry& e : s.writes) {
    uint64_t* word = heap_.at<uint64_t>(e.off);
    if (persist::Persister::load8(word) == e.value) continue;
    data_p_.store_shared(word, e.value);
    const uint64_t line = e.off & ~uint64_t{63};
    if (s.lines.insert(line, 0).second) s.unflushed.push_back(line);
  }
  if (!options_.logging) {
    // The breakdown's no-log point: the data's own write-backs and fence, at once.
    for (uint64_t line : s.unflushed) data_p_.flush(heap_.base() + line, 64);
    s.unflushed.clear();
    data_p_.fence();
  }
  for (const Slot::Locked& l : s.locked) orecs_[l.orec].store(orec_unlocked(wv, s.index), std::memory_order_release);
  s.locked.clear();
}

// commit's steps are inlined into it: called as functions, they cost the library's session transactions
// 8 % of their throughput (core.library, measured).
bool RedoPtm::commit(Slot& s) {
  const uint64_t n = s.writes.size();
  if (n == 0 && s.locked.empty()) {
    // Read-only: every read was consistent with rv when it was made; nothing to lock, log or fence.
    ++s.counters.transactions;
    finish_frees(heap_, s.alloc, s.index);
    return true;
  }
  // Blocks carved in place: written back now, durable before the commit record can be (see the fence in
  // retire_predecessors: one shared with the record's would let an evicted record commit a block whose
  // payload never reached memory).
  for (uint64_t line : s.fresh_lines) data_p_.flush(heap_.base() + line, 64);
  uint64_t wv = 0;
  if (!lock_write_set(s, wv)) return false;
  retire_predecessors(s);
  // The previous commit's data lines are written back only now, after this commit's locked
  // instructions: a locked read-modify-write waits for earlier write-backs as a fence does, so issued
  // at the end of the previous commit they would have cost one more fence here.
  for (uint64_t line : s.unflushed) data_p_.flush(heap_.base() + line, 64);
  s.unflushed.clear();
  if (options_.logging && n > 0) log_commit(s, wv);
  write_in_place(s, wv);
  s.run_seq = wv;
  ++s.counters.transactions;
  ++s.counters.writing;
  finish_frees(heap_, s.alloc, s.index);
  return true;
}

}  // namespace pmlab::ptm
