// corpus.wide-counter and its broken twin: four meters, each a 16-byte {count, total} that must change
// as one (an event counted and its amount added). Each meter is one line: a generation word and two
// slots for the pair.
//
// Protocol. Write the new pair into the slot the generation does not name (a 16-byte struct assignment),
// persist it, then advance the generation with one atomic store and persist it. The pair, the spare and
// the generation share a line, so whole-line crashes order nothing here: the fence between the spare and
// the generation does, once aligned words persist on their own. The generation counts the meter's updates
// from kCounterBase, so the stream carries it across 2^32; the check holds it to kCounterBase + the live
// count, which a generation that tore (its new low half under its old high half) is not.
//
// Twin:
//  - torn: updates the live slot in place with the same 16-byte assignment and persists it. x86 makes
//    aligned 8-byte stores failure-atomic, not 16-byte ones, so a crash can keep the new count with the
//    old total: a persistence-atomicity violation [Witcher] of a multi-word update. A line persisting
//    whole cannot show it: caught in word and byte mode, passes in line mode.
#include <array>
#include <utility>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

constexpr uint64_t kMeters = 4;
static_assert(kCounterBase % 2 == 0, "a meter's first generation names slot 0");

struct Pair {
  uint64_t count;
  uint64_t total;
};
struct alignas(64) Meter {
  uint64_t generation;  // kCounterBase + the updates; its low bit names the live slot
  Pair slot[2];
  uint64_t pad[3];
};

using Readings = std::array<std::pair<uint64_t, uint64_t>, kMeters>;

enum class Bug { none, torn };

class WideCounter final : public Design<Bug> {
 public:
  using Design::Design;

  size_t image_bytes() const override { return kMeters * sizeof(Meter); }

  void format(Image image, const persist::Persister& p) override {
    Design::format(image, p);
    Meter* meters = reinterpret_cast<Meter*>(image.base);
    for (uint64_t m = 0; m < kMeters; ++m) meters[m].generation = kCounterBase;  // even: slot 0, {0, 0}, is live
    p.persist(image.base, image.size);
  }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Meter* meters = reinterpret_cast<Meter*>(image.base);
    for (uint64_t i = 0; i < ops_; ++i) {
      Meter& m = meters[meter_of(i)];
      ops.begin(i, "count an event of " + std::to_string(amount_of(i)) + " on meter " + std::to_string(meter_of(i)));
      const Pair live = m.slot[m.generation & 1];
      const Pair next{live.count + 1, live.total + amount_of(i)};
      if (variant_ == Bug::torn) {
        m.slot[m.generation & 1] = next;
        p.persist(&m.slot[m.generation & 1], sizeof(Pair));
      } else {
        m.slot[~m.generation & 1] = next;
        p.persist(&m.slot[~m.generation & 1], sizeof(Pair));
        p.store8(&m.generation, m.generation + 1);
        p.persist(&m.generation, 8);
      }
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the generation word is the commit
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Meter* meters = reinterpret_cast<const Meter*>(image.base);
    Readings found;
    for (uint64_t m = 0; m < kMeters; ++m) {
      const Pair& live = meters[m].slot[meters[m].generation & 1];
      // The twin updates in place and never advances the generation: only the protocol keeps it counting.
      if (variant_ == Bug::none && meters[m].generation != kCounterBase + live.count)
        return broken("meter " + std::to_string(m) + "'s generation reads " + std::to_string(meters[m].generation) +
                      ", not the base + its " + std::to_string(live.count) + " updates: it tore");
      found[m] = {live.count, live.total};
    }
    return durably_linearizable(
        found, at, [this](uint64_t k) { return after(k); }, "the meters' counts and totals");
  }

 private:
  uint64_t meter_of(uint64_t op) const { return payload_word(seed_, op, 1) % kMeters; }
  uint64_t amount_of(uint64_t op) const { return 1 + payload_word(seed_, op, 2) % 100000; }

  Readings after(uint64_t ops) const {
    return replay(ops, Readings{}, [this](Readings& r, uint64_t i) {
      r[meter_of(i)].first += 1;
      r[meter_of(i)].second += amount_of(i);
    });
  }
};

const CorpusDesign<WideCounter, Bug> registered{"wide-counter", {Bug::torn}};

}  // namespace
}  // namespace pmlab::crash::corpus
