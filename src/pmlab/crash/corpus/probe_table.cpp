// corpus.probe-table and its broken twins: a hash table with open addressing (linear probing, tombstones)
// whose index entries {state, key} sit four to a line, apart from their values (one line each).
//
// Protocol. An insert probes from the key's home slot to the first empty one, writes the value line and
// the entry's key and writes both back, fences, then marks the entry full with one atomic store and
// persists it. A delete marks the entry a tombstone with one atomic store and persists it. Keys crowd a
// quarter of the slots, so most inserts probe past others. A state word holds its code in both halves, so
// every change of state changes both: a mark that tore (its new low half under its old high half) is no
// state, and the check refuses it.
//
// Twins:
//  - unfenced-flag: the value, the key and the full mark are written back under one fence. The mark can
//    persist without the value it publishes: a missing fence between data and its valid flag, the
//    persistence-ordering class [Witcher]. Caught under ADR in line mode.
//  - flag-first: the value is persisted first, then the entry is written with plain stores, its state
//    before its key, and persisted. A line can be evicted between the two stores, so a full entry with
//    another key can persist. Whole-line crashes cannot show that (the simulator sees lines only at
//    persistence calls); aligned words persisting independently can: caught in word and byte mode.
#include <algorithm>
#include <bit>
#include <map>
#include <utility>
#include <vector>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

enum class Bug { none, unfenced_flag, flag_first };

constexpr uint64_t kEmpty = 0, kFull = in_both_halves(1), kTombstone = in_both_halves(2);

struct Entry {
  uint64_t state;
  uint64_t key;
};
struct alignas(64) Value {
  uint64_t key;
  uint64_t seq;  // the insert that wrote it
  uint64_t payload[5];
  uint64_t check;
};

struct Step {
  bool erase;
  uint64_t key;
};

using Contents = std::vector<std::pair<uint64_t, uint64_t>>;  // (key, the insert that wrote it), by key

class ProbeTable final : public Design<Bug> {
 public:
  ProbeTable(Bug bug, const SubjectOptions& o)
      : Design(bug, o), slots_(std::bit_ceil(std::max<uint64_t>(16, 2 * o.ops))) {
    std::vector<uint64_t> live;  // oldest first
    for (uint64_t i = 0; i < ops_; ++i) {
      if (i % 4 == 3 && !live.empty()) {
        plan_.push_back({true, live.front()});
        live.erase(live.begin());
      } else {
        plan_.push_back({false, key_of(i)});
        live.push_back(key_of(i));
      }
    }
  }

  size_t image_bytes() const override { return slots_ * (sizeof(Entry) + sizeof(Value)); }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    for (uint64_t i = 0; i < ops_; ++i) {
      const Step step = plan_[i];
      ops.begin(i, (step.erase ? "delete key " : "insert key ") + std::to_string(step.key));
      if (step.erase) {
        Entry& e = entry(image, find(image, step.key));
        p.store8(&e.state, kTombstone);
        p.persist(&e.state, 8);
      } else {
        uint64_t s = home(step.key);
        while (entry(image, s).state != kEmpty) s = (s + 1) % slots_;
        insert(p, entry(image, s), value(image, s), step.key, i);
      }
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the state words are the commits
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    Contents found;
    for (uint64_t s = 0; s < slots_; ++s) {
      const Entry& e = entry(image, s);
      if (e.state == kEmpty || e.state == kTombstone) continue;
      if (e.state != kFull)
        return broken("slot " + std::to_string(s) + "'s state word reads " + std::to_string(e.state) +
                      ", which is no state: a store to it tore");
      const Value& v = value(image, s);
      if (v.key != e.key || v.seq >= ops_ || plan_[v.seq].erase || plan_[v.seq].key != v.key || !intact(v))
        return broken("slot " + std::to_string(s) + " is marked full but its key and value did not persist");
      if (find(image, e.key) != s)
        return broken("key " + std::to_string(e.key) + " is stored where a lookup does not find it");
      found.emplace_back(e.key, v.seq);
    }
    std::sort(found.begin(), found.end());
    return durably_linearizable(
        found, at, [this](uint64_t k) { return after(k); }, "the table's keys");
  }

 private:
  Entry& entry(Image image, uint64_t s) const { return reinterpret_cast<Entry*>(image.base)[s]; }
  Value& value(Image image, uint64_t s) const {
    return reinterpret_cast<Value*>(image.base + slots_ * sizeof(Entry))[s];
  }

  uint64_t key_of(uint64_t op) const { return payload_word(seed_, op, 0) | 1; }
  uint64_t home(uint64_t key) const { return (key >> 17) % (slots_ / 4); }

  // The slot a lookup of `key` stops at with the key full in it; slots_ when it finds none.
  uint64_t find(Image image, uint64_t key) const {
    for (uint64_t n = 0, s = home(key); n < slots_; ++n, s = (s + 1) % slots_) {
      const Entry& e = entry(image, s);
      if (e.state == kEmpty) break;
      if (e.state == kFull && e.key == key) return s;
    }
    return slots_;
  }

  void insert(const persist::Persister& p, Entry& e, Value& v, uint64_t key, uint64_t op) const {
    v.key = key;
    v.seq = op;
    fill_payload(v.payload, 5, op);
    v.check = checksum_words(&v.key, 7);
    switch (variant_) {
      case Bug::none:
        e.key = key;
        p.flush(&v, sizeof v);
        p.flush(&e, sizeof e);
        p.fence();
        p.store8(&e.state, kFull);
        p.persist(&e.state, 8);
        break;
      case Bug::unfenced_flag:
        e.key = key;
        p.flush(&v, sizeof v);
        p.store8(&e.state, kFull);
        p.flush(&e, sizeof e);
        p.fence();
        break;
      case Bug::flag_first:
        p.persist(&v, sizeof v);
        e.state = kFull;
        e.key = key;
        p.persist(&e, sizeof e);
        break;
    }
  }

  bool intact(const Value& v) const { return v.check == checksum_words(&v.key, 7) && payload_is(v.payload, 5, v.seq); }

  Contents after(uint64_t ops) const {
    using Live = std::map<uint64_t, uint64_t>;
    const Live live = replay(ops, Live{}, [this](Live& keys, uint64_t i) {
      if (plan_[i].erase) keys.erase(plan_[i].key);
      else keys[plan_[i].key] = i;
    });
    return {live.begin(), live.end()};
  }

  uint64_t slots_;
  std::vector<Step> plan_;
};

const CorpusDesign<ProbeTable, Bug> registered{"probe-table", {Bug::unfenced_flag, Bug::flag_first}};

}  // namespace
}  // namespace pmlab::crash::corpus
