// corpus.slot-pool and its broken twin: eight keys whose records live in a pool of reused one-line slots,
// named from an index line by offset. A key's operation inserts it when absent and deletes it when
// present; a deleted key's slot goes on a free list (in DRAM: recovery rebuilds it from the index, as
// every slot no key names is free) and the next insert takes it.
//
// Protocol. An insert takes a free slot (the last freed first, else a fresh one), writes the record,
// persists it, then names it from the key's index word with one atomic store and persists it. A delete
// clears the key's index word with one atomic store and persists it before the slot is free.
//
// Twin:
//  - stale-reuse: on the path that reuses a freed slot, the insert skips the record's persist (the slot
//    "was persisted already"). The index then names a slot whose durable content is the deleted record:
//    whole, with a valid checksum, the wrong key. Stale data published because the record's persist is
//    not ordered before the index store [PMTest]; a checksum does not catch it, the expected contents do.
//    Under eADR the index's fence persists the record too, so the twin claims ADR only; caught in line
//    mode.
#include <array>
#include <vector>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

constexpr uint64_t kKeys = 8;

struct alignas(64) Index {
  uint64_t slot[kKeys];  // offset of the key's record, 0 when the key is absent
};
struct alignas(64) Record {
  uint64_t key;
  uint64_t seq;  // the insert that wrote it
  uint64_t payload[5];
  uint64_t check;
};
constexpr uint64_t kFirstSlot = sizeof(Index);

using Present = std::array<uint64_t, kKeys>;  // per key, 1 + the insert that wrote its record, or 0

enum class Bug { none, stale_reuse };

class SlotPool final : public Design<Bug> {
 public:
  using Design::Design;

  size_t image_bytes() const override { return sizeof(Index) + kKeys * sizeof(Record); }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Index* index = reinterpret_cast<Index*>(image.base);
    std::vector<uint64_t> free_slots;  // DRAM
    uint64_t fresh = 0;
    for (uint64_t i = 0; i < ops_; ++i) {
      const uint64_t k = key_of(i);
      uint64_t& word = index->slot[k];
      if (word != 0) {
        ops.begin(i, "delete key " + std::to_string(k));
        free_slots.push_back(word);
        p.store8(&word, 0);
        p.persist(&word, 8);
      } else {
        ops.begin(i, "insert key " + std::to_string(k));
        const bool reused = !free_slots.empty();
        const uint64_t offset = reused ? free_slots.back() : kFirstSlot + fresh++ * sizeof(Record);
        if (reused) free_slots.pop_back();
        Record& r = *element_at<Record>(image, offset, kFirstSlot, kKeys);
        r.key = k;
        r.seq = i;
        fill_payload(r.payload, 5, i);
        r.check = checksum_words(&r.key, 7);
        if (!reused || variant_ != Bug::stale_reuse) p.persist(&r, sizeof r);
        p.store8(&word, offset);
        p.persist(&word, 8);
      }
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the index words are the commits, the free list is rebuilt
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Index* index = reinterpret_cast<const Index*>(image.base);
    Present found{};
    uint64_t used = 0;
    for (uint64_t k = 0; k < kKeys; ++k) {
      if (index->slot[k] == 0) continue;
      const Record* r = element_at<Record>(image, index->slot[k], kFirstSlot, kKeys);
      if (r == nullptr)
        return broken("key " + std::to_string(k) + " names offset " + std::to_string(index->slot[k]) + ", no slot");
      const uint64_t bit = uint64_t{1} << ((index->slot[k] - kFirstSlot) / sizeof(Record));
      if (used & bit) return broken("two keys name the slot at offset " + std::to_string(index->slot[k]));
      used |= bit;
      if (!holds(*r, k))
        return broken("key " + std::to_string(k) +
                      " names a slot that does not hold its record (stale or unpersisted)");
      found[k] = r->seq + 1;
    }
    return durably_linearizable(
        found, at, [this](uint64_t n) { return after(n); }, "the keys present");
  }

 private:
  uint64_t key_of(uint64_t op) const { return payload_word(seed_, op, 6) % kKeys; }

  bool holds(const Record& r, uint64_t k) const {
    return r.key == k && r.seq < ops_ && key_of(r.seq) == k && r.check == checksum_words(&r.key, 7) &&
           payload_is(r.payload, 5, r.seq);
  }

  Present after(uint64_t ops) const {
    return replay(ops, Present{}, [this](Present& p, uint64_t i) { p[key_of(i)] = p[key_of(i)] == 0 ? i + 1 : 0; });
  }
};

const CorpusDesign<SlotPool, Bug> registered{"slot-pool", {Bug::stale_reuse}};

}  // namespace
}  // namespace pmlab::crash::corpus
