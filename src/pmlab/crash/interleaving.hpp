// Threads of a crash-tested run, run one at a time in a seeded interleaving.
//
// The simulator must replay a run exactly (every crash point is found again by the second run), so the
// threads of a concurrent subject never run at once: one holds the turn, and at each handover point (a
// persistence call, an atomic store, an operation's start or return) a seeded choice keeps it or passes it
// on. What the threads do between two handover points is therefore atomic to the others; the points are
// where lock-free designs synchronize (their atomic words go through the vocabulary), so interleavings that
// matter to durability are reachable. Plain loads and stores are not handover points.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "pmlab/common/random.hpp"

namespace pmlab::crash {

class Interleaving {
 public:
  static constexpr unsigned kMaxThreads = 4;

  // At each handover point the turn passes with probability 1/`switch_every`.
  explicit Interleaving(uint64_t seed, unsigned switch_every = 3) : random_(seed), switch_every_(switch_every) {}

  // Runs body(t) for t < threads (at most kMaxThreads), one thread at a time; returns when all have returned.
  void run(unsigned threads, const std::function<void(unsigned)>& body);
  // A handover point: on a thread of run(), maybe passes the turn. Elsewhere a no-op.
  void point();
  // The thread (of run()) making the call; 0 outside run().
  static unsigned current() noexcept;
  bool running() const noexcept { return active_; }

 private:
  void pass_from(unsigned me);  // with the lock held: the turn to the next thread still running
  void wait_turn(std::unique_lock<std::mutex>& lock, unsigned me);

  Random random_;
  unsigned switch_every_;
  std::mutex mutex_;
  std::condition_variable turn_changed_;
  unsigned turn_ = 0;
  std::vector<bool> done_;
  bool active_ = false;
};

}  // namespace pmlab::crash
