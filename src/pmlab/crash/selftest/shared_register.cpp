// selftest.shared-register and its broken twin: one persistent register, written by one thread and read
// by another (a configuration value published to readers). A write stores the value with a dirty bit
// (compare-exchange), persists it, then clears the bit. A read that finds the bit set persists the value
// before it returns it: once a reader has answered with a value, no crash may take that value back.
// The broken twin's read returns what it sees without helping: the writer is still between its store and
// its fence, the reader's answer is out, and a crash loses the value it answered with. Only a run whose
// threads interleave can show it: with one thread, every read comes after the write it sees returned.
#include <optional>

#include "pmlab/crashtest/linearizability.hpp"
#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

constexpr uint64_t kDirty = 1;

struct alignas(64) Register {
  uint64_t word;  // value << 1 | dirty
  uint64_t pad[7];
};

enum class Bug { none, read_unpersisted };

class SharedRegister final : public FixedLayoutDesign<Bug, Register> {
 public:
  using FixedLayoutDesign::FixedLayoutDesign;

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    const persist::PmWord reg = p.word(&layout(image)->word);
    ops.run_threads(2, [&](unsigned t) {
      for (uint64_t i = 0; i < ops_; ++i) {
        ops.begin(i, t == 0 ? "write " + std::to_string(i + 1) : std::string("read"));
        if (t == 0) {
          const uint64_t value = (i + 1) << 1;
          uint64_t seen = reg.load();
          while (!reg.compare_exchange_strong(seen, value | kDirty)) {}
          p.persist(reg.address(), 8);
          uint64_t dirty = value | kDirty;
          reg.compare_exchange_strong(dirty, value);
          ops.end(i);
        } else {
          uint64_t seen = reg.load();
          if (variant_ != Bug::read_unpersisted && (seen & kDirty)) {
            p.flush(reg.address(), 8);
            p.fence();
          }
          ops.end_returning(i, seen >> 1);
        }
      }
    });
  }

  Status recover(Image image, const persist::Persister& p) override {
    uint64_t& word = layout(image)->word;
    if (word & kDirty) {  // durable, so the bit only says a writer had not finished
      // Clears one bit of the low half: made as two 4-byte halves, the store leaves the old word or the new
      // one, never a torn one, whatever the value (its split mutant is equivalent by design).
      p.store8(&word, word & ~kDirty);
      p.persist(&word, 8);
    }
    return Status::success();
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const uint64_t recovered = layout(image)->word >> 1;
    // Thread 0 writes i+1 at its operation i; thread 1 reads.
    auto step = [](uint64_t value, unsigned t, uint32_t op, std::optional<uint64_t> result) -> std::optional<uint64_t> {
      if (t == 0) return op + 1;
      if (result && *result != value) return std::nullopt;
      return value;
    };
    if (!durably_linearizable(at.history, uint64_t{0}, recovered, step))
      return broken("the register holds " + std::to_string(recovered) + ", but a read that returned saw a later value");
    return Status::success();
  }
};

const SelfTestDesign<SharedRegister, Bug> registered{"shared-register", {Bug::read_unpersisted}};

}  // namespace
}  // namespace pmlab::crash::selftest
