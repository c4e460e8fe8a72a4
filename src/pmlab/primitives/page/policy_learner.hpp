// The hybrid flusher's online refinement of its calibrated cost model: one lane's learner, which times a
// few of the lane's own flushes and now and then tries the other policy, per (concurrent flushers, dirty
// lines) cell.
//
// Why: the model is calibrated once, at start, on phases the calibration makes up; the workload then
// flushes other pages in another order, and on a machine whose speed shifts the crossover moves (on the
// development VM the 4 KiB crossover came out anywhere between 1.6 and 4.4 dirty lines between runs, and
// at 16 KiB a wrong side cost a third of the throughput). Only the workload's own flushes say which
// policy is cheaper for it, now.
//
// How, per cell: the cell runs the policy it believes cheaper (the model's choice until it has evidence);
// every `interval` flushes it times the last kWindow flushes of that policy, then explores: the next
// kExplore flushes of the cell use the other policy, all but the first timed. The ratio of the two
// windows' medians (ulog over cow, phases adjacent in time, so a change of the machine's speed moves
// both) joins the cell's last kRatios ratios, and the median of those decides. A flush is timed from
// its start to the start of the lane's next flush: what the workload pays for it, including the drain of
// its non-temporal stores that goes on after the flush returns (timing the call alone made copy-on-write,
// whose 64-line drain outlives its return, look up to 1.8x cheaper against the micro-log at 4 KiB than
// the throughputs say). The work between flushes is the same whichever policy runs; it dilutes the
// ratio, never turns it. A flush is timed only when the lane's previous flush used the same policy: a
// micro-log flush leaves its record's re-zeroing for the next flush to wait on, which belongs to the
// micro-log's cost, not to a copy-on-write after it.
// The interval grows with how far apart the policies are, so exploring costs about kExploreBudget of
// the throughput whatever the gap: near the crossover exploring is cheap and done often, far from it
// the choice is clear and rarely questioned.
//
// A learner is used by its lane's thread only (lanes are claimed exclusively); it keeps no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "pmlab/primitives/page/cost_model.hpp"

namespace pmlab::primitives::page {

class PolicyLearner {
 public:
  static constexpr uint32_t kWindow = 3;             // timed flushes of each policy per comparison
  static constexpr uint32_t kExplore = kWindow + 1;  // the first after a switch is not timed
  static constexpr uint32_t kRatios = 7;             // a cell decides by the median of its last comparisons
  static constexpr uint32_t kDecideAfter = 3;        // comparisons before the evidence overrides the model
  static constexpr uint32_t kBootstrapInterval = 16;
  static constexpr uint32_t kMinInterval = 64;
  static constexpr uint32_t kMaxInterval = 1 << 20;  // (a 10x gap asks for ~80000)
  // The nominal share of the throughput spent exploring. Exploring costs more than nominal: the flushes
  // after a switch pay the other policy's drain, and the learner's ratios understate large gaps. Hence a
  // small budget (the measurements behind it: docs/primitives.md, "Online refinement").
  static constexpr double kExploreBudget = 0.0005;

  explicit PolicyLearner(FlushCostModel prior) : prior_(std::move(prior)) {}

  // The policy of the lane's next flush of `dirty` lines (> 0) with `threads` concurrent flushers. Between
  // a cell's samples and explorations, flushes of the same point take the inline path: on a short flush
  // the full one costs a visible share of what the hybrid may lose.
  Policy plan(uint32_t dirty, uint32_t threads) {
    if (continues_run(dirty, threads)) return continue_run();
    return plan_at_cell(dirty, threads);
  }
  // plan()'s inline path on its own, for a caller that keeps it apart from the rest: the lane's run of one
  // policy goes on at the same (dirty lines, threads) point. continue_run() is plan() there.
  bool continues_run(uint32_t dirty, uint32_t threads) const noexcept {
    return run_left_ > 0 && dirty == run_dirty_ && threads == run_threads_;
  }
  Policy continue_run() noexcept {  // one store: a run's flushes were counted when it began
    --run_left_;
    return last_policy_;
  }
  // Whether the flush just planned wants stamp() called with the time right before it (it is timed, or
  // it ends a timed flush's cycle), and whether it is one of a comparison's samples. (Not one struct
  // returned by plan(): GCC 12 assembles that from byte stores through the stack, and the load stalls on
  // store forwarding.)
  bool wants_stamp() const noexcept { return time_next_ || cycle_open_; }
  bool sampling() const noexcept { return time_next_; }
  // The time (ns, any origin) right before the flush the last plan() was for.
  void stamp(double now_ns);

  // What the cell of (dirty, threads) decides now: the learned policy once it has kDecideAfter
  // comparisons, the model's until then.
  Policy current(uint32_t dirty, uint32_t threads) const;
  // Its median ratio of ulog's time over cow's (0 before any comparison), and comparisons so far.
  double ulog_vs_cow(uint32_t dirty, uint32_t threads) const;
  uint64_t comparisons() const noexcept { return comparisons_; }
  // Flushes planned per policy (index: Policy::cow, Policy::ulog) and of them, explorations.
  uint64_t flushes(Policy p) const noexcept { return flushes_[slot(p)] - (p == last_policy_ ? run_left_ : 0); }
  uint64_t explored() const noexcept { return explored_; }

  // The cell of a dirty-line count: powers of two and the points halfway between (1, 2, 3, 4, 6, 8, 12, …),
  // the grid the model is calibrated on.
  static uint32_t bucket(uint32_t dirty) noexcept;

 private:
  static constexpr uint32_t kBuckets = 2 * 32;
  static constexpr uint32_t kMaxThreads = 64;
  struct Cell {
    bool decided = false;
    Policy learned = Policy::cow;
    uint32_t until_explore = kBootstrapInterval;
    uint32_t exploring = 0;        // flushes of the other policy left
    bool compare_pending = false;  // explored; compared once the last explored flush's cycle closes
    std::array<std::array<double, kWindow>, 2> window{};  // [policy][sample]
    std::array<uint32_t, 2> in_window{};
    std::array<double, kRatios> ratios{};
    uint32_t ratio_count = 0;     // all comparisons; the last kRatios are kept
    double median_ratio() const;  // of the kept ones; 0 before any
  };
  static size_t index(uint32_t dirty, uint32_t threads) noexcept;
  static size_t slot(Policy p) noexcept { return p == Policy::ulog ? 1 : 0; }
  Policy plan_at_cell(uint32_t dirty, uint32_t threads);
  void compare(Cell& c);

  FlushCostModel prior_;
  std::vector<Cell> cells_;              // [threads - 1][bucket], grown as thread counts appear
  Policy last_policy_ = Policy::hybrid;  // the lane's previous flush (hybrid: none yet)
  // A run: flushes of one (dirty, threads) point left before its cell's next sample, taken from the
  // cell's countdown up front and given back when another point interrupts the run.
  uint32_t run_left_ = 0;
  uint32_t run_dirty_ = 0;
  uint32_t run_threads_ = 0;
  size_t run_cell_ = 0;
  bool time_next_ = false;  // the flush just planned is timed: its stamp opens a cycle
  size_t next_cell_ = 0;
  bool cycle_open_ = false;  // a timed flush's cycle, closed by the lane's next stamp
  double cycle_start_ = 0;
  size_t cycle_cell_ = 0;
  Policy cycle_policy_ = Policy::cow;
  uint64_t comparisons_ = 0;
  uint64_t explored_ = 0;
  std::array<uint64_t, 2> flushes_{};
};

}  // namespace pmlab::primitives::page
