// Crash-test subjects for the persistent ring buffer: lockfree.ring.{tx,txfree}.
//
// One thread pushes and pops a seeded mix on a 4-slot ring (so slots are reused within the stream).
// Each element's data is six words derived from its sequence number, so a torn slot is caught. After a
// crash the ring must hold exactly the queue after the operations that returned, or after the one in
// flight as well, in FIFO order, with intact data; and it must keep working.
#include <deque>

#include "pmlab/common/random.hpp"
#include "pmlab/crash/subject.hpp"
#include "pmlab/lockfree/ring/ring_buffer.hpp"

namespace pmlab::lockfree {
namespace {

constexpr uint32_t kCapacity = 4;
constexpr uint32_t kSlotBytes = 48;
constexpr int kWords = kSlotBytes / 8;

uint64_t data_word(uint64_t element, int k) { return element * 0x100000001b3ULL + static_cast<uint64_t>(k) * 0x9e3779b9ULL + 1; }

class RingSubject final : public crash::Subject {
 public:
  RingSubject(RingDesign d, const crash::SubjectOptions& o) : design_(d) {
    uint64_t state = o.seed * 0x2545f4914f6cdd1dULL + 3;
    uint64_t size = 0;
    for (uint64_t i = 0; i < o.ops; ++i) {
      const bool push = size == 0 || (size < kCapacity && splitmix64(state) % 3 != 0);
      pushes_.push_back(push);
      size += push ? 1 : -1;
    }
  }

  size_t image_bytes() const override { return RingBuffer::bytes_needed(kCapacity, kSlotBytes, 1); }

  void format(crash::Image image, const persist::Persister& p) override {
    RingBuffer ring(design_, image.base, image.size, p);
    if (Status s = ring.format(kCapacity, kSlotBytes, {false, 1}); !s) std::abort();
  }

  void run(crash::Image image, const persist::Persister& p, crash::OpTracker& ops) override {
    RingBuffer ring(design_, image.base, image.size, p);
    if (Status s = ring.recover({false, 1}); !s) std::abort();
    uint64_t next = 0;
    uint64_t buf[kWords];
    for (uint64_t i = 0; i < pushes_.size(); ++i) {
      if (pushes_[i]) {
        ops.begin(i, "push " + std::to_string(next));
        for (int k = 0; k < kWords; ++k) buf[k] = data_word(next, k);
        ring.push(0, buf);
        ++next;
      } else {
        ops.begin(i, "pop");
        ring.pop(0, buf);
      }
      ops.end(i);
    }
  }

  Status recover_and_check(crash::Image image, const persist::Persister& p, const crash::CrashPoint& at) override {
    RingBuffer ring(design_, image.base, image.size, p);
    if (Status s = ring.recover({false, 1}); !s) return error(Errc::failed, "recovery: " + s.message());
    crash::recovery_done();
    const std::vector<std::byte> bytes = ring.contents();
    std::vector<uint64_t> got;
    for (size_t e = 0; e * kSlotBytes < bytes.size(); ++e) {
      uint64_t w[kWords];
      std::memcpy(w, bytes.data() + e * kSlotBytes, kSlotBytes);
      const uint64_t id = (w[0] - 1) / 0x100000001b3ULL;
      for (int k = 0; k < kWords; ++k)
        if (w[k] != data_word(id, k)) return error(Errc::failed, "element " + std::to_string(e) + " has torn or stale data");
      got.push_back(id);
    }
    const std::deque<uint64_t> before = queue_after(at.ops_completed);
    bool ok = std::equal(got.begin(), got.end(), before.begin(), before.end());
    if (!ok && at.op_in_flight) {
      const std::deque<uint64_t> after = queue_after(at.ops_completed + 1);
      ok = std::equal(got.begin(), got.end(), after.begin(), after.end());
    }
    if (!ok) {
      std::string text;
      for (uint64_t id : got) text += " " + std::to_string(id);
      return error(Errc::failed, "recovered queue [" + text + " ] is not the queue after " + std::to_string(at.ops_completed) +
                                     " operations" + (at.op_in_flight ? " (or one more)" : ""));
    }
    // It keeps working: fill it, then drain it in order.
    uint64_t buf[kWords];
    for (uint64_t id = 1000; ring.size() < kCapacity; ++id) {
      for (int k = 0; k < kWords; ++k) buf[k] = data_word(id, k);
      ring.push(0, buf);
    }
    for (size_t e = 0; ring.size() > 0; ++e) {
      ring.pop(0, buf);
      const uint64_t expect = e < got.size() ? got[e] : 1000 + (e - got.size());
      if (buf[0] != data_word(expect, 0)) return error(Errc::failed, "after recovery the ring does not pop in FIFO order");
    }
    return Status::success();
  }

 private:
  std::deque<uint64_t> queue_after(uint64_t n) const {
    std::deque<uint64_t> q;
    uint64_t next = 0;
    for (uint64_t i = 0; i < n && i < pushes_.size(); ++i) {
      if (pushes_[i]) q.push_back(next++);
      else q.pop_front();
    }
    return q;
  }

  RingDesign design_;
  std::vector<bool> pushes_;
};

crash::SubjectInfo info(RingDesign d, std::string description) {
  crash::SubjectInfo i;
  i.name = std::string("lockfree.ring.") + to_string(d);
  i.description = std::move(description);
  i.domains = claimed_domains(d);
  i.make = [d](const crash::SubjectOptions& o) { return std::make_unique<RingSubject>(d, o); };
  return i;
}

const crash::SubjectRegistration tx{
    info(RingDesign::tx, "Krizhanovsky ring, push/pop in per-thread undo-log transactions ([PMIdioBench] TX)")};
const crash::SubjectRegistration txfree{
    info(RingDesign::txfree,
         "Krizhanovsky ring, slot stamps + persistent push positions, eADR only ([PMIdioBench] TX-free)")};

}  // namespace
}  // namespace pmlab::lockfree
