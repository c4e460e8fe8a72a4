// selftest.register-file and its broken twin: a file of registers, each a value kept in two slots and a
// state word naming the live one. A write fills the other slot and persists it; then it counts the write
// in a journal line (flushed, not fenced) and flips the state word with one atomic store; one fence makes
// both durable. The state word holds its code in both halves, so every flip changes both: a flip that tore
// (its new low half under its old high half) leaves a word that names no slot, and the check says so.
//
// The broken twin marks the register busy in its state word, for readers, between the slot's fence and
// the flip. Nothing flushes the mark and the flip overwrites it before the next fence, but nothing stops
// the cache from evicting the line while it holds it: a crash then leaves a register whose last completed
// write is gone. The value is transient: it is neither the line's durable content, nor its content at a
// flush or a fence, only what the line held at a persistence call in between.
#include <cstring>

#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {
namespace {

constexpr uint64_t kRegisters = 4;
constexpr uint64_t kBusy = ~uint64_t{0};

// The state word naming slot `slot` live.
constexpr uint64_t live_state(uint64_t slot) { return in_both_halves(static_cast<uint32_t>(1 + slot)); }

struct alignas(64) Slot {
  uint64_t version;  // the write that filled it
  uint64_t payload[6];
  uint64_t check;
};
struct alignas(64) Register {
  uint64_t state;  // 0: never written; live_state(slot); kBusy in the broken twin, transiently
  uint64_t pad[7];
  Slot slots[2];
};
struct alignas(64) Journal {
  uint64_t writes;  // the number of writes begun, an audit trail recovery does not need
  uint64_t pad[7];
};
struct File {
  Journal journal;
  Register registers[kRegisters];
};

enum class Bug { none, busy_mark };

class RegisterFile final : public FixedLayoutDesign<Bug, File> {
 public:
  using FixedLayoutDesign::FixedLayoutDesign;

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    File* f = layout(image);
    for (uint64_t i = 0; i < ops_; ++i) {
      Register& r = f->registers[i % kRegisters];
      ops.begin(i, "write register " + std::to_string(i % kRegisters) + ", version " + std::to_string(i + 1));
      const uint64_t spare_slot = r.state == live_state(1) ? 0 : 1;  // slot 0 counts as live before any write
      Slot& spare = r.slots[spare_slot];
      spare.version = i + 1;
      fill_payload(spare.payload, 6, i + 1);
      spare.check = checksum_words(&spare.version, 7);
      p.persist(&spare, sizeof spare);
      if (variant_ == Bug::busy_mark) r.state = kBusy;  // a plain store for readers, overwritten before the next fence
      f->journal.writes = i + 1;
      p.flush(&f->journal, sizeof f->journal);  // made durable by the flip's fence
      p.store8(&r.state, live_state(spare_slot));
      p.persist(&r.state, 8);
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the state words are the commits
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const File* f = layout(image);
    // The journal is made durable by the flip's fence: it counts at least every write that returned.
    if (f->journal.writes < at.ops_completed)
      return broken("the journal counts " + std::to_string(f->journal.writes) + " writes, " +
                    std::to_string(at.ops_completed) + " returned");
    for (uint64_t reg = 0; reg < kRegisters; ++reg) {
      const Register& r = f->registers[reg];
      // The versions this register may hold: the last write that returned, or the one in flight.
      const uint64_t want = last_write(reg, at.ops_completed);
      const uint64_t flight =
          at.op_in_flight && at.ops_completed < ops_ && at.ops_completed % kRegisters == reg ? at.ops_completed + 1 : 0;
      uint64_t holds = 0;
      if (r.state == live_state(0) || r.state == live_state(1)) {
        const Slot& s = r.slots[r.state == live_state(0) ? 0 : 1];
        if (s.check != checksum_words(&s.version, 7))
          return broken("register " + std::to_string(reg) + "'s live slot is torn");
        holds = s.version;
      } else if (r.state == kBusy) {
        return broken("register " + std::to_string(reg) + " was left busy: its last completed write is lost");
      } else if (r.state != 0) {
        return broken("register " + std::to_string(reg) + "'s state word reads " + std::to_string(r.state) +
                      ", which names no slot: it tore");
      }
      if (holds != want && (flight == 0 || holds != flight))
        return broken("register " + std::to_string(reg) + " holds version " + std::to_string(holds) + ", not " +
                      std::to_string(want));
    }
    return Status::success();
  }

 private:
  // The version register `reg` holds once the first `ops` writes returned (0: never written).
  uint64_t last_write(uint64_t reg, uint64_t ops) const {
    uint64_t v = 0;
    for (uint64_t i = reg; i < ops && i < ops_; i += kRegisters) v = i + 1;
    return v;
  }
};

const SelfTestDesign<RegisterFile, Bug> registered{"register-file", {Bug::busy_mark}};

}  // namespace
}  // namespace pmlab::crash::selftest
