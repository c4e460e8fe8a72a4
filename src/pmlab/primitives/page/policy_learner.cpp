#include "pmlab/primitives/page/policy_learner.hpp"

#include <algorithm>
#include <bit>

#include "pmlab/common/statistics.hpp"

namespace pmlab::primitives::page {
namespace {

Policy other(Policy p) noexcept { return p == Policy::ulog ? Policy::cow : Policy::ulog; }

}  // namespace

uint32_t PolicyLearner::bucket(uint32_t dirty) noexcept {
  if (dirty <= 1) return 0;
  const uint32_t octave = static_cast<uint32_t>(std::bit_width(dirty)) - 1;  // 2^octave <= dirty
  const uint32_t halfway = octave >= 1 && dirty - (1u << octave) >= (1u << (octave - 1)) ? 1 : 0;
  return 2 * octave + halfway;
}

size_t PolicyLearner::index(uint32_t dirty, uint32_t threads) noexcept {
  const uint32_t t = std::clamp<uint32_t>(threads, 1, kMaxThreads);
  return static_cast<size_t>(t - 1) * kBuckets + bucket(dirty);
}

Policy PolicyLearner::plan_at_cell(uint32_t dirty, uint32_t threads) {
  if (run_left_ > 0) {  // another point interrupts a run: its cell gets the flushes it did not take back
    cells_[run_cell_].until_explore += run_left_;
    flushes_[slot(last_policy_)] -= run_left_;
    run_left_ = 0;
  }
  const size_t i = index(dirty, threads);
  if (i >= cells_.size()) cells_.resize((i / kBuckets + 1) * kBuckets);
  Cell& c = cells_[i];
  const bool awaiting_cycle = cycle_open_ && cycle_cell_ == i;
  if (c.compare_pending && c.exploring == 0 && !awaiting_cycle) compare(c);
  const Policy believed = c.decided ? c.learned : prior_.choose(dirty, threads);
  Policy policy = believed;
  bool window = false;
  if (c.exploring > 0) {
    policy = other(believed);
    --c.exploring;
    window = true;
    ++explored_;
  } else if (!c.compare_pending) {
    if (c.until_explore == kWindow) c.in_window = {};  // the window before this exploration starts afresh
    window = c.until_explore <= kWindow;
    if (--c.until_explore == 0) {
      c.exploring = kExplore;
      c.compare_pending = true;
    }
  }
  const bool timed = window && last_policy_ == policy;
  time_next_ = timed;
  next_cell_ = i;
  last_policy_ = policy;
  ++flushes_[slot(policy)];
  // The flushes up to the cell's next window need no bookkeeping but their count: a run.
  if (c.exploring == 0 && !c.compare_pending && c.until_explore > kWindow + 1) {
    run_left_ = c.until_explore - kWindow - 1;
    c.until_explore -= run_left_;
    flushes_[slot(policy)] += run_left_;
    run_dirty_ = dirty;
    run_threads_ = threads;
    run_cell_ = i;
  }
  return policy;
}

void PolicyLearner::stamp(double now_ns) {
  if (cycle_open_) {
    cycle_open_ = false;
    Cell& c = cells_[cycle_cell_];
    uint32_t& n = c.in_window[slot(cycle_policy_)];
    if (n < kWindow) c.window[slot(cycle_policy_)][n++] = now_ns - cycle_start_;
    if (c.compare_pending && c.exploring == 0) compare(c);
  }
  if (time_next_) {
    time_next_ = false;
    cycle_open_ = true;
    cycle_start_ = now_ns;
    cycle_cell_ = next_cell_;
    cycle_policy_ = last_policy_;
  }
}

void PolicyLearner::compare(Cell& c) {
  c.compare_pending = false;
  const auto window_median = [&](Policy p) {
    const size_t s = slot(p);
    return median(std::vector<double>(c.window[s].begin(), c.window[s].begin() + c.in_window[s]));
  };
  // Two samples of each at least: one disturbed flush (an interrupt) must not decide a comparison.
  const bool enough = c.in_window[0] >= 2 && c.in_window[1] >= 2;
  const double cow = enough ? window_median(Policy::cow) : 0, ulog = enough ? window_median(Policy::ulog) : 0;
  c.in_window = {};
  if (cow > 0 && ulog > 0) {
    c.ratios[c.ratio_count % kRatios] = ulog / cow;
    ++c.ratio_count;
    ++comparisons_;
  }
  if (c.ratio_count < kDecideAfter) {
    c.until_explore = kBootstrapInterval;
    return;
  }
  const double r = c.median_ratio();
  c.decided = true;
  c.learned = r < 1 ? Policy::ulog : Policy::cow;
  // How much slower the other policy is; exploring it kExplore flushes every `interval` costs about
  // kExplore * gap / interval of the throughput.
  const double gap = r < 1 ? 1 / r - 1 : r - 1;
  const double interval = kExplore * gap / kExploreBudget;
  c.until_explore = static_cast<uint32_t>(std::clamp<double>(interval, kMinInterval, kMaxInterval));
}

Policy PolicyLearner::current(uint32_t dirty, uint32_t threads) const {
  const size_t i = index(dirty, threads);
  if (i < cells_.size() && cells_[i].decided) return cells_[i].learned;
  return prior_.choose(dirty, threads);
}

double PolicyLearner::ulog_vs_cow(uint32_t dirty, uint32_t threads) const {
  const size_t i = index(dirty, threads);
  return i < cells_.size() ? cells_[i].median_ratio() : 0;
}

double PolicyLearner::Cell::median_ratio() const {
  const uint32_t kept = std::min(ratio_count, kRatios);
  return kept == 0 ? 0 : median(std::vector<double>(ratios.begin(), ratios.begin() + kept));
}

}  // namespace pmlab::primitives::page
