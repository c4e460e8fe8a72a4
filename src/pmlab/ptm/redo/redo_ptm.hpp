// Redo-logging PTM at the fence bound, with concurrent transactions.
//
// Concurrency (TL2-like, [TL2]): a volatile table of ownership records (orecs), one per heap line modulo
// the table, each holding the version (the global clock's value at the commit that last wrote a line
// mapped to it) and the log slot of that writer, or a lock bit and the owner's slot. A transaction takes
// its read version rv from the clock; a read checks the word's orec before and after loading it (locked by
// another: wait; newer than rv: revalidate the reads so far and move rv forward, or doom the transaction).
// Writes are buffered in the thread's write set. A writing transaction locks the orecs of its lines at
// commit (try-lock: a held one aborts it), takes its write version wv from the clock, revalidates its
// reads, and releases the orecs with wv after applying. Read-only transactions lock nothing, write nothing
// and fence nothing; disjoint writers touch disjoint orecs and run in parallel. A conflicting attempt
// releases everything and runs the body again. Bodies see only consistent snapshots: a read that cannot
// extend the snapshot throws Abandoned (ptm.hpp), so the body stops before it acts on what it read.
//
// Log slot (one per thread): a retire line {retired_seq}, then two log areas used by turns. A commit record
// is written into its area with non-temporal stores, as whole lines (no read for ownership, no line flush;
// with durable caches, plain stores):
//   [seq][n][n entries {offset, value}][trailer {checksum, seq}]
// so a transaction of up to two words is one line. It is valid when its checksum (over seq, n, the slot
// and the entries) matches, and live when seq > the slot's retired_seq.
//
//   commit:  lock orecs; wv; validate reads; for each line's previous writer in another slot, make sure
//            its data is durable (flush the lines its record names and fence, if its thread has not fenced
//            since) and retire its slot up to that transaction (the log may never be replayed over this
//            transaction's writes); write the record; fence                         -- the commit point
//            (the previous commit's modified lines are written back just before the record: after the
//            locked instructions above, which would otherwise wait for them as a fence does)
//            apply each word in place (written back by the next commit and made durable by its fence;
//            until then the record stays live; a word that holds its value already is left as it is);
//            release the orecs.
//   recover: every valid, live record of every slot and area, replayed in seq order; then every slot
//            retired up to the newest seq seen.
// Why two areas: a record must stay until its data is durable, i.e. until the thread's next fence — the
// next commit's, whose record goes to the other area. Why a successor retires its predecessor: a live
// record of an idle thread would otherwise be replayed over a later transaction of another thread whose
// record has since been overwritten.
//
// Fences per writing transaction: 1 (ADR and eADR) — plus one when it carved a block of at least
// Options::in_place_bytes at the top (written in place, fenced before the record) or a line's previous
// writer is another thread that has not fenced since (one fence serves both). 0 per read-only transaction. Write-backs:
// the record's lines (non-temporal), one flush per modified data line, and the retire line of each other
// slot it retires.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/ptm/common/heap.hpp"
#include "pmlab/ptm/common/ptm.hpp"
#include "pmlab/ptm/common/slot_ptm.hpp"
#include "pmlab/ptm/common/word_map.hpp"

namespace pmlab::ptm {

struct RedoEntry {
  uint64_t off;
  uint64_t value;
};
static_assert(sizeof(RedoEntry) == 16);

// The slot's first line: written by other threads' commits (retiring this slot's records), so it shares
// its line with nothing this slot's own commits write.
struct alignas(64) RedoRetireLine {
  uint64_t retired_seq;
  uint64_t pad[7];
};

// A commit record's first two words; the entries and the trailer follow.
struct RedoRecordHeader {
  uint64_t seq;
  uint64_t n;
};
inline constexpr uint64_t kRedoRecordOverhead = sizeof(RedoRecordHeader) + sizeof(RedoEntry);  // + trailer

struct alignas(64) RedoSlot : LogSlot<RedoRetireLine, RedoEntry> {
  struct Locked {
    uint32_t orec;
    uint64_t previous;  // the orec's value before this transaction locked it
  };

  RedoSlot() {
    writes.reserve(256);
    read_set.reserve(256);
  }
  void begin() noexcept {
    writes.clear();
    index_of.clear_and_shrink();
    filter = 0;
    lines.clear_and_shrink();
    owned.clear_and_shrink();
    fresh_lines.clear();
    read_set.clear();
    locked.clear();
    alloc.clear();
  }

  std::vector<RedoEntry> writes;  // the volatile write set, in first-write order
  WordMap index_of;               // offset -> position in `writes`
  uint64_t filter = 0;            // 64-bit Bloom filter over the written offsets: most reads skip the map
  WordMap lines;                  // lines written back in this commit (each once)
  WordMap owned;                  // orec -> position in `locked` (built when reads are revalidated)
  std::vector<uint64_t> fresh_lines;
  std::vector<uint32_t> read_set;  // orecs read
  std::vector<Locked> locked;
  std::vector<std::pair<int, uint64_t>> predecessors;  // (other slot, its newest transaction overwritten)
  // Per slot, the newest durable_seq this thread has read of it: a lower bound (durable_seq only grows), so
  // a predecessor at or below it is durable without loading the line its thread writes at every commit.
  std::vector<uint64_t> known_durable;
  uint64_t rv = 0;
  // The newest clock value this thread has seen: the next transaction's read version. Any value the clock
  // has had is a valid snapshot time (a read newer than it extends the snapshot, as any read does), and
  // reusing it spares a read-only transaction the clock's line, which every writing commit elsewhere
  // takes away from this core.
  uint64_t seen_clock = 0;

  uint64_t* area[2] = {nullptr, nullptr};
  uint64_t area_capacity = 0;  // entries a record holds
  int next_area = 0;
  uint64_t run_seq = 0;             // the write version of the last run()'s commit, 0 if it wrote nothing
  uint64_t last_seq = 0;            // this slot's newest record (its data's write-backs not yet fenced)
  std::vector<uint64_t> unflushed;  // that transaction's modified lines, written back by the next commit
  // Each on a line of its own: other threads read or write them on every commit, and this slot's own
  // fields above are its thread's hot data.
  // The newest of this slot's transactions whose data is durable (its thread fenced after its
  // write-backs); read by other threads' commits.
  alignas(64) std::atomic<uint64_t> durable_seq{0};
  // This slot's retired_seq as far as it is known durable (a retiring commit's fence came after it).
  alignas(64) std::atomic<uint64_t> retired_durable{0};
};

class RedoPtm final : public SlotPtm<RedoPtm, RedoSlot> {
 public:
  static constexpr const char* kName = "redo";

  explicit RedoPtm(const Regions& regions, const Options& options = {});

  Status format();
  // Replays every slot's valid, live records in seq order, retires them, then opens the heap.
  Status recover();
  // Makes every committed transaction's data durable and retires every record, so that the next
  // recover() replays nothing (a clean close). Not concurrent with transactions.
  void quiesce();

  class Tx;
  // Runs `body` as one transaction on log slot `slot` (one slot per thread), again after a conflict.
  template <class F>
  void run(int slot, F&& body);

  uint64_t replayed() const noexcept { return replayed_; }
  // The write version of slot `slot`'s last transaction (0: it wrote nothing): its place in the order
  // the transactions took effect in, for a checker.
  uint64_t last_commit(int slot) const noexcept { return slots_[static_cast<size_t>(slot)]->run_seq; }

 private:
  friend class SlotPtm<RedoPtm, RedoSlot>;
  using Slot = RedoSlot;

  // Orec words: unlocked = version << 16 | writer slot << 1; locked = owner slot << 1 | 1.
  static constexpr uint64_t kLocked = 1;
  static uint64_t orec_version(uint64_t o) noexcept { return o >> 16; }
  static int orec_slot(uint64_t o) noexcept { return static_cast<int>((o >> 1) & 0x7fff); }
  static uint64_t orec_unlocked(uint64_t version, int slot) noexcept {
    return version << 16 | static_cast<uint64_t>(slot) << 1;
  }
  static uint64_t orec_locked(int slot) noexcept { return static_cast<uint64_t>(slot) << 1 | kLocked; }
  uint32_t orec_of(uint64_t off) const noexcept { return static_cast<uint32_t>((off >> 6) & orec_mask_); }

  // A multiply-xorshift round per word and a full mix at the end: a torn line (any entry word, the
  // count or the seq changed) passes with probability ~2^-64, at a fraction of a mix64 per word.
  // (Two independent chains, offsets and values, so their latencies overlap.)
  static uint64_t checksum_of(const RedoEntry* entries, uint64_t n, uint64_t seq, int slot) noexcept {
    uint64_t h = mix64(seq ^ (n << 32) ^ (static_cast<uint64_t>(slot) + 1));
    uint64_t g = ~h;
    for (uint64_t i = 0; i < n; ++i) {
      h = (h ^ entries[i].off) * 0x9E3779B97F4A7C15ull;
      g = (g ^ entries[i].value) * 0xBF58476D1CE4E5B9ull;
      h ^= h >> 29;
      g ^= g >> 31;
    }
    return mix64(h ^ mix64(g));
  }

  uint64_t read_shared(Slot& s, const uint64_t* word, uint64_t off);
  bool reads_still_valid(Slot& s) const;
  void lock_top(Slot& s);
  // false: a conflict (the caller releases and runs the body again).
  bool commit(Slot& s);
  // commit's steps: lock the write set and take the write version (false: a conflict), retire what the
  // write set's last writers logged, write the commit record, write in place and unlock.
  bool lock_write_set(Slot& s, uint64_t& wv);
  void retire_predecessors(Slot& s);
  void log_commit(Slot& s, uint64_t wv);
  void write_in_place(Slot& s, uint64_t wv);
  void release(Slot& s);
  // Makes the data of transaction `seq` of slot `p` durable from this thread (it wrote back nothing
  // since): the lines its record names, written back here; the caller fences.
  void write_back_for(const Slot& p, uint64_t seq);
  void retire(Slot& p, uint64_t seq);
  void backoff(int attempt) const noexcept;

  // One log slot: one thread runs transactions, so reads need no validation and commits no orecs, and
  // the clock moves with a plain store (a locked read-modify-write per modified line costs tens of
  // cycles, and SPS-64 has 128 of them).
  const bool single_thread_;
  uint64_t orec_mask_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> orecs_;
  // On a line of its own: every writing commit moves it, and every read loads orecs_ and orec_mask_.
  alignas(64) std::atomic<uint64_t> clock_{0};
  uint64_t replayed_ = 0;
};

class RedoPtm::Tx : public TxShell<RedoPtm::Tx, RedoSlot> {
 public:
  Tx(RedoPtm& ptm, RedoSlot& slot) noexcept : TxShell(ptm.heap_, slot), ptm_(ptm) {}

  uint64_t read(const uint64_t* word) const {
    const uint64_t off = heap_.offset_of(word);
    if (s_.filter != 0 && ((s_.filter >> (WordMap::hash(off) & 63)) & 1)) {
      if (const uint32_t* i = s_.index_of.find(off)) return s_.writes[*i].value;
    }
    return ptm_.read_shared(s_, word, off);
  }

  void write(uint64_t* word, uint64_t value) {
    const uint64_t off = heap_.offset_of(word);
    if (!s_.alloc.fresh.empty() && s_.alloc.is_fresh(off)) {
      // A fresh block is unreachable until the commit record is durable: a torn word in it is never read.
      ptm_.data_p_.store_shared(word, value);
      const uint64_t line = off & ~uint64_t{63};
      if (s_.lines.insert(line, 0).second) s_.fresh_lines.push_back(line);
      return;
    }
    const auto [i, inserted] = s_.index_of.insert(off, static_cast<uint32_t>(s_.writes.size()));
    if (inserted) {
      if (s_.writes.size() == s_.area_capacity)
        ptm_fatal("redo transaction writes more than " + std::to_string(s_.area_capacity) + " words (log slot of " +
                  std::to_string(ptm_.options_.slot_bytes) + " bytes; " + kLargerSlot + ")");
      s_.writes.push_back({off, value});
      s_.filter |= uint64_t{1} << (WordMap::hash(off) & 63);
    } else {
      s_.writes[i].value = value;
    }
  }

  // tx_alloc's policy: a block from the free lists may still be read by a transaction that found it
  // before it was freed, so its words go through the write set and their orecs; a large block carved at
  // the top was never reachable, and is written in place once this transaction owns the top's orec.
  bool in_place_reused() const noexcept { return false; }
  bool in_place_carved(uint64_t bytes) {
    if (bytes < ptm_.options_.in_place_bytes) return false;
    ptm_.lock_top(s_);
    return true;
  }

 private:
  RedoPtm& ptm_;
};

template <class F>
void RedoPtm::run(int slot, F&& body) {
  Slot& s = *slots_[static_cast<size_t>(slot)];
  s.run_seq = 0;
  for (int attempt = 0;; ++attempt) {
    s.begin();
    s.rv = single_thread_ ? clock_.load(std::memory_order_relaxed) : s.seen_clock;
    {
      Tx tx(*this, s);
      try {
        body(tx);
      } catch (const Abandoned&) {
        release(s);
        ++s.counters.aborts;
        backoff(attempt);
        continue;
      } catch (...) {
        release(s);
        throw;
      }
    }
    if (commit(s)) return;
    release(s);
    ++s.counters.aborts;
    backoff(attempt);
  }
}

static_assert(Ptm<RedoPtm>);

}  // namespace pmlab::ptm
