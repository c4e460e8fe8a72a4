// Crash-test subjects for the persistent ring buffer: lockfree.ring.{tx,txfree}.
//
// Two producers and two consumers share a 4-slot ring (so slots are reused within the stream), run one at
// a time in a seeded interleaving by the simulator; each producer pushes its own numbered elements and
// each consumer pops as many, so pushes and pops both overlap (in-flight operations leave holes for
// recovery to consolidate). Each element's data is six words derived from its number, so a torn slot is
// caught. After a crash the ring must hold, in FIFO order and with intact data, the queue after some
// linearization of the operations that returned (with the elements pops returned) and any in flight
// (durable linearizability, crashtest/linearizability.hpp); and it must keep working.
#include <deque>
#include <functional>
#include <optional>

#include "pmlab/crashtest/linearizability.hpp"
#include "pmlab/crashtest/subject.hpp"
#include "pmlab/lockfree/ring/ring_buffer.hpp"

namespace pmlab::lockfree {
namespace {

constexpr uint32_t kCapacity = 4;
constexpr uint32_t kSlotBytes = 48;
constexpr int kWords = kSlotBytes / 8;
constexpr unsigned kProducers = 2, kConsumers = 2, kThreads = kProducers + kConsumers;

uint64_t data_word(uint64_t element, int k) {
  return element * 0x100000001b3ULL + static_cast<uint64_t>(k) * 0x9e3779b9ULL + 1;
}
// The element whose data starts with `word0` (the inverse of data_word(·, 0)).
uint64_t element_of(uint64_t word0) { return (word0 - 1) / 0x100000001b3ULL; }
// Producer t's i-th element.
uint64_t element_id(unsigned t, uint64_t i) { return 1 + t * 1000 + i; }

// The queue a linearization has built: element numbers, front first.
struct Fifo {
  std::deque<uint64_t> ids;
  bool operator==(const Fifo&) const = default;
};
struct FifoHash {
  size_t operator()(const Fifo& f) const noexcept {
    uint64_t h = f.ids.size();
    for (uint64_t id : f.ids) h = h * 0x100000001b3ULL ^ id;
    return static_cast<size_t>(h);
  }
};

std::string describe(const std::deque<uint64_t>& ids) {
  std::string text;
  for (uint64_t id : ids) text += " " + std::to_string(id);
  return "[" + text + " ]";
}

class RingSubject final : public crash::Subject {
 public:
  RingSubject(RingDesign d, const crash::SubjectOptions& o)
      : design_(d), per_thread_(std::max<uint64_t>(2, o.ops / kThreads)) {}

  size_t image_bytes() const override { return RingBuffer::bytes_needed(kCapacity, kSlotBytes, kThreads); }

  void format(crash::Image image, const persist::Persister& p) override {
    RingBuffer ring(design_, image.base, image.size, p);
    // Tickets start just below 2^32: the stamps of the stream's pushes and pops cross it, so a torn
    // stamp (its new low half under its old high half) is a state recovery is shown.
    static_assert(crash::kCounterBase % kCapacity == 0, "the first ticket is a multiple of the capacity");
    const RingOptions options{.flush_slots = false, .max_threads = kThreads, .first_ticket = crash::kCounterBase};
    if (Status s = ring.format(kCapacity, kSlotBytes, options); !s) std::abort();
  }

  void run(crash::Image image, const persist::Persister& p, crash::OpTracker& ops) override {
    RingBuffer ring(design_, image.base, image.size, p);
    if (Status s = ring.recover({false, kThreads}); !s) std::abort();
    ops.run_threads(kThreads, [&](unsigned t) {
      uint64_t buf[kWords];
      for (uint64_t i = 0; i < per_thread_; ++i) {
        if (t < kProducers) {
          const uint64_t id = element_id(t, i);
          ops.begin(i, "thread " + std::to_string(t) + ": push " + std::to_string(id));
          for (int k = 0; k < kWords; ++k) buf[k] = data_word(id, k);
          ring.push(static_cast<int>(t), buf);
          ops.end(i);
        } else {
          ops.begin(i, "thread " + std::to_string(t) + ": pop");
          ring.pop(static_cast<int>(t), buf);
          ops.end_returning(i, element_of(buf[0]));
        }
      }
    });
  }

  // The ring's recovery rolls back the operations in flight and consolidates the elements left; the
  // recovered ring is kept for the check.
  Status recover(crash::Image image, const persist::Persister& p) override {
    RingBuffer& ring = recovered_ring_.emplace(design_, image.base, image.size, p);
    if (Status s = ring.recover({false, kThreads}); !s) return error(Errc::failed, "recovery: " + s.message());
    return Status::success();
  }

  Status check(crash::Image, const persist::Persister&, const crash::CrashPoint& at) override {
    RingBuffer& ring = *recovered_ring_;
    const std::vector<std::byte> bytes = ring.contents();
    Fifo got;
    for (size_t e = 0; e * kSlotBytes < bytes.size(); ++e) {
      uint64_t w[kWords];
      std::memcpy(w, bytes.data() + e * kSlotBytes, kSlotBytes);
      const uint64_t id = element_of(w[0]);
      for (int k = 0; k < kWords; ++k)
        if (w[k] != data_word(id, k))
          return error(Errc::failed, "element " + std::to_string(e) + " has torn or stale data");
      got.ids.push_back(id);
    }
    auto step = [&](const Fifo& q, unsigned t, uint32_t op, std::optional<uint64_t> result) -> std::optional<Fifo> {
      Fifo next = q;
      if (t < kProducers) {
        next.ids.push_back(element_id(t, op));
        return next;
      }
      if (q.ids.empty() || (result && *result != q.ids.front())) return std::nullopt;
      next.ids.pop_front();
      return next;
    };
    if (!crash::durably_linearizable<Fifo, FifoHash>(at.history, Fifo{}, got, step))
      return error(Errc::failed,
                   "recovered queue " + describe(got.ids) + ": no order of the " + std::to_string(at.ops_completed) +
                       " operations that returned (and those in flight), with the elements pops returned, leaves it");
    // It keeps working: fill it, then drain it in order.
    uint64_t buf[kWords];
    for (uint64_t id = 5000; ring.size() < kCapacity; ++id) {
      for (int k = 0; k < kWords; ++k) buf[k] = data_word(id, k);
      ring.push(0, buf);
    }
    for (size_t e = 0; ring.size() > 0; ++e) {
      ring.pop(0, buf);
      const uint64_t expect = e < got.ids.size() ? got.ids[e] : 5000 + (e - got.ids.size());
      if (buf[0] != data_word(expect, 0))
        return error(Errc::failed, "after recovery the ring does not pop in FIFO order");
    }
    return Status::success();
  }

 private:
  RingDesign design_;
  uint64_t per_thread_;
  std::optional<RingBuffer> recovered_ring_;  // what recover() opened and recovered; check() goes on with it
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
