// Designs of your own, crash-tested by pmlab out of tree: the persistent stack of stack.hpp and a broken
// twin that publishes a record before it is durable (the same push runs on a real pool in stack.cpp); and
// a total two threads add to, with a broken twin whose lost update only an interleaving shows.
//
//   cmake -S . -B build -DCMAKE_PREFIX_PATH=<pmlab prefix> && cmake --build build
//   pmlab crash --load build/libcrash_design.so mine.stack mine.broken-stack mine.tally mine.broken-tally
#include <pmlab/crash.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "stack.hpp"

namespace {

template <bool kBroken>
class Stack final : public pmlab::CrashSubject {
 public:
  explicit Stack(const pmlab::CrashOptions& o) : ops_(o.ops) {}

  size_t image_bytes() const override { return stack::bytes_for(ops_); }

  void format(pmlab::CrashImage image, const pmlab::Persister& p) override { stack::format(image.base, p); }

  void run(pmlab::CrashImage image, const pmlab::Persister& p, pmlab::CrashOps& ops) override {
    for (uint64_t op = 0; op < ops_; ++op) {
      ops.begin(op, "push");
      stack::push(image.base, image.size, p, op, kBroken);
      ops.end(op);
    }
  }

  std::string recover(pmlab::CrashImage, const pmlab::Persister&) override { return {}; }

  std::string check(pmlab::CrashImage image, const pmlab::Persister&, const pmlab::CrashPoint& at) override {
    uint64_t count = 0;
    if (std::string why = stack::walk(image.base, image.size, &count); !why.empty()) return why;
    if (count != at.ops_completed && !(at.op_in_flight && count == at.ops_completed + 1))
      return std::to_string(count) + " pushes survived, " + std::to_string(at.ops_completed) + " had returned";
    return {};
  }

 private:
  uint64_t ops_;
};

}  // namespace

PMLAB_CRASH_SUBJECT(stack, "mine.stack", "a persistent stack of records (example)", false, Stack<false>);
PMLAB_CRASH_SUBJECT(broken_stack, "mine.broken-stack", "BROKEN: the stack, publishing nodes never written back", true,
                    Stack<true>);

namespace {

// A concurrent design: two threads add amounts to one durable total. The correct one adds with a
// compare-and-swap and persists the total before it returns; its broken twin reads the total, logs its
// intent (a persist, where the other thread may run), then stores its sum over whatever the other added.
template <bool kBroken>
class Tally final : public pmlab::CrashSubject {
 public:
  static constexpr unsigned kThreads = 2;

  explicit Tally(const pmlab::CrashOptions& o) : ops_(o.ops / kThreads + 1) {}

  size_t image_bytes() const override { return 64 * (kThreads + 1); }  // the total's line, an intent line each

  void format(pmlab::CrashImage image, const pmlab::Persister& p) override { p.persist(image.base, 8); }

  void run(pmlab::CrashImage image, const pmlab::Persister& p, pmlab::CrashOps& ops) override {
    auto* total = reinterpret_cast<uint64_t*>(image.base);
    ops.run_threads(kThreads, [&](unsigned t) {
      auto* intent = reinterpret_cast<uint64_t*>(image.base + 64 * (t + 1));
      for (uint64_t op = 0; op < ops_; ++op) {
        ops.begin(op, "add");
        const uint64_t amount = amount_of(t, op);
        if (kBroken) {
          const uint64_t seen = __atomic_load_n(total, __ATOMIC_ACQUIRE);
          p.store8(intent, seen + amount);
          p.persist(intent, 8);
          p.store8(total, seen + amount);
        } else {
          uint64_t seen = __atomic_load_n(total, __ATOMIC_ACQUIRE);
          while (!p.compare_exchange(total, seen, seen + amount)) {}
        }
        p.persist(total, 8);
        ops.end(op);
      }
    });
  }

  std::string recover(pmlab::CrashImage, const pmlab::Persister&) override { return {}; }

  // The total must be the sum of every add that returned and of some of those in flight.
  std::string check(pmlab::CrashImage image, const pmlab::Persister&, const pmlab::CrashPoint& at) override {
    const uint64_t total = *reinterpret_cast<const uint64_t*>(image.base);
    uint64_t returned = 0;
    std::vector<uint64_t> in_flight;
    for (const pmlab::CrashEvent& e : at.history) {
      const uint64_t amount = amount_of(e.thread, e.op);
      if (e.returned) {
        returned += amount;
        in_flight.erase(std::find(in_flight.begin(), in_flight.end(), amount));
      } else {
        in_flight.push_back(amount);
      }
    }
    for (uint64_t subset = 0; subset < (uint64_t{1} << in_flight.size()); ++subset) {
      uint64_t sum = returned;
      for (size_t i = 0; i < in_flight.size(); ++i)
        if (subset >> i & 1) sum += in_flight[i];
      if (sum == total) return {};
    }
    return "the total " + std::to_string(total) + " is no sum of the adds that returned (" + std::to_string(returned) +
           ") and some of those in flight";
  }

 private:
  // An amount per (thread, op), all distinct, so the check tells each add in flight by its amount.
  static uint64_t amount_of(uint64_t thread, uint64_t op) { return (op + 1) * 1000003 + thread * 7919; }
  uint64_t ops_;
};

}  // namespace

PMLAB_CRASH_SUBJECT(tally, "mine.tally", "two threads adding to one durable total (example)", false, Tally<false>);
PMLAB_CRASH_SUBJECT(broken_tally, "mine.broken-tally", "BROKEN: the total, added to by read, log, then store", true,
                    Tally<true>);
