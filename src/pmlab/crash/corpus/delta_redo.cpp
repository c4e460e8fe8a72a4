// corpus.delta-redo and its broken twin: four counters behind a redo log of four one-line records with
// group checkpoints. An operation adds an amount to one counter; it returns once its redo record is
// committed, and the counters themselves are brought up to date only when the log is full.
//
// Protocol. An add writes its record {lsn, counter, operand, checksum}, persists it, then advances the
// committed lsn with one atomic store and persists it. Before an add finds the log full, it checkpoints:
// applies every record after the applied lsn to its counter (plain stores), persists the counters, then
// advances the applied lsn with one atomic store and persists it. Recovery does what a checkpoint does.
// A record's operand is the counter's value after the add (physical redo), so applying a record twice,
// after a crash between the counters and the applied lsn, or inside recovery, changes nothing. Lsns count
// from kCounterBase, so the stream carries both marks across 2^32: a mark that tore (its new low half under
// its old high half) makes the two inconsistent, and recovery refuses them.
//
// Twin:
//  - replays-deltas: the operand is the amount, and applying adds it (logical redo). A crash after a
//    checkpoint's counters persisted and before its applied lsn did makes recovery add every amount of
//    the log again: recovery that is not idempotent, reading a log the run had already retired (a stale
//    log read after the crash, a cross-failure semantic bug [XFDetector]). Caught in line mode under both
//    domains.
#include <array>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

constexpr uint64_t kCounters = 4, kLogSlots = 4;

struct alignas(64) Marks {
  uint64_t committed;  // the last lsn committed (lsn = kCounterBase + 1 + operation; kCounterBase: none)
  uint64_t applied;    // the last lsn whose record the counters hold
  uint64_t pad[6];
};
struct alignas(64) Record {
  uint64_t lsn;
  uint64_t counter;
  uint64_t operand;  // the counter's value after the add; the amount in the broken twin
  uint64_t check;
  uint64_t pad[4];
};
struct alignas(64) Counter {
  uint64_t value;
  uint64_t pad[7];
};
struct Store {
  Marks marks;
  Record log[kLogSlots];
  Counter counters[kCounters];
};

using Values = std::array<uint64_t, kCounters>;

enum class Bug { none, replays_deltas };

class DeltaRedo final : public Design<Bug> {
 public:
  using Design::Design;

  size_t image_bytes() const override { return sizeof(Store); }

  void format(Image image, const persist::Persister& p) override {
    Design::format(image, p);
    Marks& marks = reinterpret_cast<Store*>(image.base)->marks;
    marks.committed = marks.applied = kCounterBase;  // nothing logged
    p.persist(&marks, sizeof marks);
  }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Store* s = reinterpret_cast<Store*>(image.base);
    Values current{};  // DRAM: each counter's value with the log applied
    for (uint64_t i = 0; i < ops_; ++i) {
      const uint64_t c = counter_of(i);
      ops.begin(i, "add " + std::to_string(amount_of(i)) + " to counter " + std::to_string(c));
      if (s->marks.committed - s->marks.applied == kLogSlots) (void)checkpoint(s, p);
      current[c] += amount_of(i);
      const uint64_t lsn = kCounterBase + 1 + i;
      Record& r = s->log[slot_of(lsn)];
      r.lsn = lsn;
      r.counter = c;
      r.operand = physical() ? current[c] : amount_of(i);
      r.check = checksum_words(&r.lsn, 3);
      p.persist(&r, sizeof r);
      p.store8(&s->marks.committed, lsn);
      p.persist(&s->marks.committed, 8);
      ops.end(i);
    }
  }

  Status recover(Image image, const persist::Persister& p) override {
    return checkpoint(reinterpret_cast<Store*>(image.base), p);
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Store* s = reinterpret_cast<const Store*>(image.base);
    Values found;
    for (uint64_t c = 0; c < kCounters; ++c) found[c] = s->counters[c].value;
    return durably_linearizable(
        found, at, [this](uint64_t k) { return after(k); }, "the counters");
  }

 private:
  bool physical() const { return variant_ != Bug::replays_deltas; }
  uint64_t counter_of(uint64_t op) const { return payload_word(seed_, op, 1) % kCounters; }
  uint64_t amount_of(uint64_t op) const { return 1 + payload_word(seed_, op, 2) % 1000; }
  static uint64_t slot_of(uint64_t lsn) { return (lsn - kCounterBase - 1) % kLogSlots; }

  // Applies the committed records after the applied lsn, persists the counters, then the applied lsn.
  Status checkpoint(Store* s, const persist::Persister& p) const {
    const uint64_t applied = s->marks.applied, committed = s->marks.committed;
    if (applied < kCounterBase || applied > committed || committed - applied > kLogSlots ||
        committed - kCounterBase > ops_)
      return broken("the log's marks (applied " + std::to_string(applied) + ", committed " + std::to_string(committed) +
                    ") are inconsistent");
    if (applied == committed) return Status::success();
    for (uint64_t lsn = applied + 1; lsn <= committed; ++lsn) {
      const Record& r = s->log[slot_of(lsn)];
      if (r.lsn != lsn || r.counter >= kCounters || r.check != checksum_words(&r.lsn, 3))
        return broken("committed redo record " + std::to_string(lsn) + " did not persist");
      uint64_t& value = s->counters[r.counter].value;
      // A plain store: a counter a crash tears is durable only before the fence below, while the applied
      // lsn still leaves its record to replay, and recovery rewrites it whole from the log (the redo is
      // physical). So the word need not be whole, and an atomic store would claim what no crash needs.
      value = physical() ? r.operand : value + r.operand;
      p.flush(&value, 8);
    }
    p.fence();
    p.store8(&s->marks.applied, committed);
    p.persist(&s->marks.applied, 8);
    return Status::success();
  }

  Values after(uint64_t ops) const {
    return replay(ops, Values{}, [this](Values& v, uint64_t i) { v[counter_of(i)] += amount_of(i); });
  }
};

const CorpusDesign<DeltaRedo, Bug> registered{"delta-redo", {Bug::replays_deltas}};

}  // namespace
}  // namespace pmlab::crash::corpus
