// Redo-logging PTM: writes are buffered in a volatile per-thread write set (reads look there first),
// and at commit the write set is made durable in the thread's redo log with one fence, applied in place,
// made durable with a second fence, and the log retired with a third. Recovery replays.
//
// Log slot (one per thread): a 64-byte header line {commit_seq, n, checksum, retired_seq}, then 16-byte
// entries {offset, value}. The slot holds a committed, unapplied transaction when commit_seq >
// retired_seq and checksum == mix over (commit_seq, n, slot, entries): the header and the entries are
// flushed together and fenced once, and a torn write-back can never pass the checksum.
//   commit:  flush the lines of blocks carved in this tx (their payloads are written in place, unlogged),
//            fence (only when it carved some);
//            copy the write set into the slot, header last; flush; fence            -- the commit point
//            apply each word in place, flush its line; fence
//            retired_seq = commit_seq; flush; fence  -- before the global lock is released, so no later
//                                                       transaction's write can be undone by a replay
//   recover: per slot, a committed unretired log is replayed, flushed, fenced and retired.
// Fences per writing transaction under ADR: 3 whatever its size, 4 when it allocates.
#pragma once

#include <string>
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

struct alignas(64) RedoSlotHeader {
  uint64_t commit_seq;
  uint64_t n;
  uint64_t checksum;
  uint64_t retired_seq;
  uint64_t pad[4];
};

struct alignas(64) RedoSlot : LogSlot<RedoSlotHeader, RedoEntry> {
  RedoSlot() { writes.reserve(256); }
  void begin() noexcept {
    writes.clear();
    index_of.clear();
    filter = 0;
    lines.clear();
    fresh_lines.clear();
    alloc.clear();
  }

  std::vector<RedoEntry> writes;  // the volatile write set, in first-write order
  WordMap index_of;               // offset -> position in `writes`
  uint64_t filter = 0;            // 64-bit Bloom filter over the written offsets: most reads skip the map
  WordMap lines;
  std::vector<uint64_t> fresh_lines;
};

class RedoPtm final : public SlotPtm<RedoPtm, RedoSlot> {
 public:
  static constexpr const char* kName = "redo";

  explicit RedoPtm(const Regions& regions, const Options& options = {}) : SlotPtm(regions, options) {}

  Status format();
  // Replays every slot's committed, unretired transaction, then opens the heap.
  Status recover();

  class Tx;
  uint64_t replayed() const noexcept { return replayed_; }

 private:
  friend class SlotPtm<RedoPtm, RedoSlot>;
  using Slot = RedoSlot;

  uint64_t checksum_of(const RedoEntry* entries, uint64_t n, uint64_t seq, int slot) const noexcept {
    uint64_t h = mix64(seq ^ (n << 32) ^ (static_cast<uint64_t>(slot) + 1));
    for (uint64_t i = 0; i < n; ++i) h = mix64(h ^ entries[i].off) + mix64(h ^ entries[i].value ^ 0x5bd1e995ull);
    return h;
  }
  void commit(Slot& s);

  uint64_t replayed_ = 0;
};

class RedoPtm::Tx : public TxShell<RedoPtm::Tx, RedoSlot> {
 public:
  Tx(RedoPtm& ptm, RedoSlot& slot) noexcept : TxShell(ptm.heap_, slot), ptm_(ptm) {}

  uint64_t read(const uint64_t* word) const noexcept {
    if (s_.filter != 0) {
      const uint64_t off = heap_.offset_of(word);
      if ((s_.filter >> (WordMap::hash(off) & 63)) & 1) {
        if (const uint32_t* i = s_.index_of.find(off)) return s_.writes[*i].value;
      }
    }
    return persist::Persister::load8(word);
  }

  void write(uint64_t* word, uint64_t value) {
    const uint64_t off = heap_.offset_of(word);
    if (s_.alloc.is_fresh(off)) {
      ptm_.data_p_.store8(word, value);
      const uint64_t line = off & ~uint64_t{63};
      if (s_.lines.insert(line, 0).second) s_.fresh_lines.push_back(line);
      return;
    }
    const auto [i, inserted] = s_.index_of.insert(off, static_cast<uint32_t>(s_.writes.size()));
    if (inserted) {
      if (s_.writes.size() == s_.capacity)
        ptm_fatal("redo transaction writes more than " + std::to_string(s_.capacity) + " words (log slot of " +
                  std::to_string(ptm_.options_.slot_bytes) + " bytes)");
      s_.writes.push_back({off, value});
      s_.filter |= uint64_t{1} << (WordMap::hash(off) & 63);
    } else {
      s_.writes[i].value = value;
    }
  }

 private:
  RedoPtm& ptm_;
};

static_assert(Ptm<RedoPtm>);

}  // namespace pmlab::ptm
