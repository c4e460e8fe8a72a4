// Threads of a crash-tested run, run one at a time in a seeded interleaving.
//
// The simulator must replay a run exactly (every crash point is found again by the second run), so the
// threads of a concurrent subject never run at once: one holds the turn, and at each handover point (a
// persistence call, an atomic store, an operation's start or return) a seeded choice keeps it or passes it
// on. What the threads do between two handover points is therefore atomic to the others; the points are
// where lock-free designs synchronize (their atomic words go through the vocabulary), so interleavings that
// matter to durability are reachable. Plain loads and stores are not handover points.
//
// A random schedule reaches a race of two threads around one call only sometimes. Mutation testing knows
// the call that matters (the mutated one), so it can also preempt there, as PCT places its priority
// change points (Burckhardt et al., "A Randomized Scheduler with Probabilistic Guarantees of Finding
// Bugs", ASPLOS 2010): `park_after(depth, hold)` parks the thread that made the call at its depth-th
// handover point after it, while the others run for `hold` of theirs, so they act on what it left not
// yet durable. `run_alone_after(hold)` is the other side of the same race: the thread that made the call
// keeps the turn for `hold` of its handover points, so the others stay wherever the call found them (a
// helper that met another thread's unfinished update acts on it, and goes on, before that thread
// finishes it). Spin-waits (wait()) pass the turn so that a thread waiting for another cannot hold it.
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
  // Targeted preemption after a hot call (0: off).
  void park_after(unsigned depth, unsigned hold) noexcept {
    park_depth_ = depth;
    park_hold_ = hold;
  }
  // Targeted: after a hot call its thread keeps the turn for `hold` of its handover points (0: off).
  void run_alone_after(unsigned hold) noexcept { alone_hold_ = hold; }
  // The calling thread just made the call that matters (the mutated one): arms its parking, or lets it
  // run alone.
  void hot_call();
  // The calling thread waits for another: the turn passes (when another thread can take it).
  void wait();
  // The thread (of run()) making the call; 0 outside run().
  static unsigned current() noexcept;
  bool running() const noexcept { return active_; }

 private:
  void pass_from(unsigned me);  // with the lock held: the turn to the next thread still running, the parked one last
  void wait_turn(std::unique_lock<std::mutex>& lock, unsigned me);
  void count_towards_release(unsigned me);  // with the lock held: a handover point of a thread not parked

  Random random_;
  unsigned switch_every_;
  std::mutex mutex_;
  std::condition_variable turn_changed_;
  unsigned turn_ = 0;
  std::vector<bool> done_;
  bool active_ = false;
  unsigned park_depth_ = 0, park_hold_ = 0;
  unsigned countdown_[kMaxThreads] = {};  // per thread: handover points until it is parked (0: not armed)
  int parked_ = -1;                       // the parked thread, -1 when none
  unsigned parked_left_ = 0;              // handover points of the others before it may run again
  unsigned alone_hold_ = 0;
  int alone_ = -1;           // the thread running alone after its hot call, -1 when none
  unsigned alone_left_ = 0;  // its handover points before the turn may pass again
};

}  // namespace pmlab::crash
