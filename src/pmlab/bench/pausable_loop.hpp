// A timed loop for logs that fill up.
//
// A log benchmark runs until its log is full, then truncates it and goes on. Truncating is maintenance a
// storage engine does off the append path (checkpointing; for zero logging, zeroing recycled space ahead
// of time — seed 002 §3.3.1 "each log file is initialized to zero"), so it must not be timed as part of an
// append. ThreadState::measure would time it; this loop stops the clock for it instead, makes every thread
// pause while one thread does it (a truncation is not concurrent with appends), and reports the pauses
// apart. Warm-up, start barrier, per-operation timing with the timer's cost subtracted, and the counters
// follow ThreadState::measure.
#pragma once

#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/histogram.hpp"
#include "pmlab/persist/counters.hpp"
#include "pmlab/platform/clock.hpp"

namespace pmlab::bench {

// A maintenance request every thread of a run pauses for; the last to pause does the work.
class Maintenance {
 public:
  Maintenance(int threads, std::function<void()> work) : active_(threads), work_(std::move(work)) {}

  void request() noexcept { requested_.store(true, std::memory_order_release); }
  bool requested() const noexcept { return requested_.load(std::memory_order_relaxed); }
  // Waits until every thread still looping has paused and the work is done.
  void pause();
  // Leaves (a thread done looping, or waiting at a barrier) and comes back; the work never waits for a
  // thread that left, and a thread that left does not append.
  void leave();
  void join();

 private:
  void finish_locked();  // runs the work, wakes the waiters
  std::mutex mutex_;
  std::condition_variable done_;
  std::atomic<bool> requested_{false};
  int active_;
  int paused_ = 0;
  uint64_t generation_ = 0;
  std::function<void()> work_;
  std::exception_ptr failure_;
};

struct LoopResult {
  Histogram histogram;           // ticks per operation, timer cost subtracted
  uint64_t ops = 0;
  uint64_t active_ticks = 0;     // timed, without the pauses
  uint64_t paused_ticks = 0;
  uint64_t pauses = 0;
  persist::Counters counters{};  // of the timed operations only
};

// One thread's loop: `op(i)` returns false when it did nothing because the log is full; the loop then
// requests maintenance and retries after it. Runs control.duration_s of active time or control.ops ops.
// With control.per_op_timing off the histogram stays empty and only the active time is measured.
template <class Op>
LoopResult pausable_loop(const RunControl& control, std::barrier<>& sync, Maintenance& maintenance, Op&& op) {
  const platform::Clock& clock = platform::Clock::get();
  // A thread that leaves by an exception must not keep the others waiting for it.
  struct Membership {
    Maintenance& m;
    bool in = true;
    void leave() { m.leave(), in = false; }
    void join() { m.join(), in = true; }
    ~Membership() {
      if (in) m.leave();
    }
  } member{maintenance};
  LoopResult r;
  uint64_t i = 0;
  const uint64_t warm_until = platform::Clock::now() + clock.from_ns(control.warmup_s * 1e9);
  while (platform::Clock::now() < warm_until) {
    for (int k = 0; k < 16; ++k) {
      if (maintenance.requested()) maintenance.pause();
      else if (op(i)) ++i;
      else maintenance.request();
    }
  }
  // Threads still warming up may need maintenance while others wait here: leave during the wait, and
  // join between two barriers, when nobody appends.
  member.leave();
  sync.arrive_and_wait();
  member.join();
  sync.arrive_and_wait();

  const uint64_t budget = control.ops ? UINT64_MAX : clock.from_ns(control.duration_s * 1e9);
  const uint64_t target = control.ops ? control.ops : UINT64_MAX;
  const uint64_t overhead = clock.from_ns(clock.overhead_ns());
  persist::Counters in_pauses{};
  const persist::Counters before = persist::thread_counters();
  uint64_t segment = platform::Clock::start();
  while (r.ops < target) {
    if (maintenance.requested()) {
      const uint64_t stopped = platform::Clock::stop();
      r.active_ticks += stopped - segment;
      const persist::Counters c0 = persist::thread_counters();
      maintenance.pause();
      in_pauses += persist::thread_counters() - c0;
      ++r.pauses;
      segment = platform::Clock::start();
      r.paused_ticks += segment - stopped;
      continue;
    }
    // Throughput only (per_op_timing off): no fenced timer pair around each operation (~50 ns here); the
    // budget is checked every 64 operations with a plain timestamp.
    const bool timed = control.per_op_timing;
    const uint64_t t0 = timed ? platform::Clock::start() : 0;
    const bool done = op(i);
    const uint64_t t1 = timed ? platform::Clock::stop() : 0;
    if (!done) {
      maintenance.request();
      continue;
    }
    ++i;
    ++r.ops;
    if (timed) {
      const uint64_t d = t1 - t0;
      r.histogram.add(d > overhead ? d - overhead : 0);
      if (r.active_ticks + (t1 - segment) >= budget) break;
    } else if (r.ops % 64 == 0 && r.active_ticks + (platform::Clock::now() - segment) >= budget) {
      break;
    }
  }
  r.active_ticks += platform::Clock::stop() - segment;
  r.counters = (persist::thread_counters() - before) - in_pauses;
  member.leave();
  return r;
}

// Aggregate throughput (each thread's ops over its active time, summed), latency percentiles, bandwidth
// when bytes_per_op > 0, persistence counters per operation, and the pauses: the metric names
// RunContext::run_threads uses, plus pauses and paused_s.
void record_loops(RunContext& ctx, const std::vector<LoopResult>& results, double bytes_per_op);

}  // namespace pmlab::bench
