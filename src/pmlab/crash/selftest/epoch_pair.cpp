// selftest.epoch-pair and its broken twin: a configuration block kept as two copies, updated by writing the
// copy not in use and then naming it with a 64-bit epoch in a selector word (shadow paging in miniature).
// The selector must change in one atomic store. The broken twin writes it as two 4-byte halves with plain
// stores: each half is atomic, the word is not, and a torn epoch names a copy that does not hold it. Only a
// model that knows how the word was written (not where it lies) can see this.
#include <cstring>

#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

constexpr uint64_t kEpochStep = 0x100000001ULL;  // both halves change at every update

struct alignas(64) Copy {
  uint64_t epoch;
  uint64_t payload[6];
  uint64_t check;
};
struct alignas(64) Selector {
  uint64_t epoch;  // names copy (epoch / kEpochStep) % 2
  uint64_t pad[7];
};
struct Block {
  Selector selector;
  Copy copies[2];
};

enum class Bug { none, halves };

class EpochPair final : public FixedLayoutDesign<Bug, Block> {
 public:
  using FixedLayoutDesign::FixedLayoutDesign;

  void format(Image image, const persist::Persister& p) override {
    std::memset(image.base, 0, image.size);
    write_copy(layout(image)->copies[0], 0);
    p.persist(image.base, image.size);
  }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Block* b = layout(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      ops.begin(i, "publish configuration " + std::to_string(i + 1));
      const uint64_t epoch = (i + 1) * kEpochStep;
      Copy& spare = b->copies[(i + 1) % 2];
      write_copy(spare, i + 1);
      p.persist(&spare, sizeof spare);
      if (variant_ == Bug::halves) {
        auto* half = reinterpret_cast<uint32_t*>(&b->selector.epoch);
        half[0] = static_cast<uint32_t>(epoch);
        half[1] = static_cast<uint32_t>(epoch >> 32);
      } else {
        p.store8(&b->selector.epoch, epoch);
      }
      p.persist(&b->selector.epoch, 8);
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the selector's epoch is the commit
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Block* b = layout(image);
    const uint64_t epoch = b->selector.epoch;
    const uint64_t version = epoch / kEpochStep;
    const Copy& named = b->copies[version % 2];
    if (epoch % kEpochStep != 0 || named.epoch != epoch || named.check != checksum_words(&named.epoch, 7))
      return broken("the selector's epoch " + std::to_string(epoch) + " names a copy that does not hold it");
    if (!payload_is(named.payload, 6, version)) return broken("the named copy holds another payload");
    if (version == at.ops_completed || (at.op_in_flight && version == at.ops_completed + 1)) return Status::success();
    return broken("configuration " + std::to_string(version) + " is current, but " + std::to_string(at.ops_completed) +
                  " updates returned");
  }

 private:
  void write_copy(Copy& c, uint64_t version) const {
    c.epoch = version * kEpochStep;
    fill_payload(c.payload, 6, version);
    c.check = checksum_words(&c.epoch, 7);
  }
};

const SelfTestDesign<EpochPair, Bug> registered{"epoch-pair", {Bug::halves}};

}  // namespace
}  // namespace pmlab::crash::selftest
