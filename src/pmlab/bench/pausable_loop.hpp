// A timed loop for logs that fill up.
//
// A log benchmark runs until its log is full, then truncates it and goes on. Truncating is maintenance a
// storage engine does off the append path (checkpointing; for zero logging, zeroing recycled space ahead
// of time — [PMemIO] §3.3.1 "each log file is initialized to zero"), so it must not be timed as part of an
// append. ThreadState::measure would time it; this loop stops the clock for it instead, makes every thread
// pause while one thread does it (a truncation is not concurrent with appends), and reports the pauses
// apart. Warm-up, start barrier, per-operation timing with the timer's cost subtracted, and the counters
// follow ThreadState::measure.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include <immintrin.h>

#include "pmlab/bench/case.hpp"
#include "pmlab/record/histogram.hpp"
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
  Histogram histogram;  // ticks per operation, timer cost subtracted
  uint64_t ops = 0;
  uint64_t active_ticks = 0;  // timed, without the pauses
  uint64_t paused_ticks = 0;
  uint64_t pauses = 0;
  persist::Counters counters{};  // of the timed operations only
};

// Runs op(first), op(first+1), … until n ran or one returned false (it did nothing: the log is full), and
// returns how many ran. Compiled around the operation, so a batch pays for one call.
template <class Op>
uint64_t run_batch(Op& op, uint64_t first, uint64_t n) {
  uint64_t done = 0;
  while (done < n && op(first + done)) ++done;
  return done;
}

// pausable_loop's batch from an operation op(i) -> bool.
template <class Op>
auto batches_of(Op op) {
  return [op = std::move(op)](uint64_t first, uint64_t n) mutable { return run_batch(op, first, n); };
}

// One thread's loop over batches of operations: batch(first, n) runs up to n operations and returns how
// many ran, fewer when the log is full; the loop then requests maintenance and goes on after it. Runs
// control.duration_s of active time or control.ops operations. With control.per_op_timing one operation
// in kSampleEvery is timed on its own, as ThreadState::measure times one: from drained stores (an untimed
// mfence first) to the completion of its own stores and write-backs (Clock::stop_drained); the others run
// untimed between, so the stamps cost the throughput little. Without per_op_timing the histogram stays
// empty, only the active time is measured, and a batch is kOpsPerBatch operations: a call per operation
// through a type-erased function (its frame, its arguments by reference) costs a visible share of an
// operation as short as a log append, and would shrink the faster contender's ratio.
inline constexpr uint64_t kOpsPerBatch = 64;
// A drained stamp pair and the mfence before it cost about as much as a streaming log append itself: timed
// one in 16, the loop pays a few percent of it.
inline constexpr uint64_t kSampleEvery = 16;

template <class Batch>
LoopResult pausable_loop(const RunControl& control, std::barrier<>& sync, Maintenance& maintenance, Batch&& batch) {
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
  constexpr uint64_t kWarmBatch = 16;
  const uint64_t warm_until = platform::Clock::now() + clock.from_ns(control.warmup_s * 1e9);
  while (platform::Clock::now() < warm_until) {
    if (maintenance.requested()) {
      maintenance.pause();
      continue;
    }
    const uint64_t done = batch(i, kWarmBatch);
    i += done;
    if (done < kWarmBatch) maintenance.request();
  }
  // Threads still warming up may need maintenance while others wait here: leave during the wait, and
  // join between two barriers, when nobody appends.
  member.leave();
  sync.arrive_and_wait();
  member.join();
  sync.arrive_and_wait();

  const uint64_t budget = control.ops ? UINT64_MAX : clock.from_ns(control.duration_s * 1e9);
  const uint64_t target = control.ops ? control.ops : UINT64_MAX;
  const uint64_t overhead = clock.from_ns(clock.drained_overhead_ns());
  // Throughput only (per_op_timing off): no fenced timer pair around any operation; the budget is checked
  // after each batch with a plain timestamp.
  const bool timed = control.per_op_timing;
  uint64_t batches = 0;
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
    // Timed runs alternate a batch of one timed operation with kSampleEvery - 1 untimed ones.
    const bool sampled = timed && batches++ % 2 == 0;
    const uint64_t want = std::min(sampled ? 1 : timed ? kSampleEvery - 1 : kOpsPerBatch, target - r.ops);
    if (sampled) _mm_mfence();
    const uint64_t t0 = sampled ? platform::Clock::start() : 0;
    const uint64_t done = batch(i, want);
    const uint64_t t1 = sampled ? platform::Clock::stop_drained() : 0;
    i += done;
    r.ops += done;
    if (done < want) {
      maintenance.request();
      continue;
    }
    if (sampled) {
      const uint64_t d = t1 - t0;
      r.histogram.add(d > overhead ? d - overhead : 0, kSampleEvery);  // it stands for its kSampleEvery operations
      if (r.active_ticks + (t1 - segment) >= budget) break;
    } else if (r.active_ticks + (platform::Clock::now() - segment) >= budget) {
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
