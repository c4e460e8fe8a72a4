// The hybrid flusher's cost model ([PMemIO] §3.2.3: "a hybrid technique based on a simple cost model
// should be used to choose the better technique, depending on the number of dirty cache lines (and
// single/multi threading)").
//
// Copy-on-write costs about the same whatever is dirty; the micro-log's cost grows with the dirty lines
// (each is written twice) and so does its share of the media bandwidth when several threads flush. The
// model is the crossover, per number of concurrent flushers: below it the micro-log is cheaper. It is
// measured on the store itself at start, by timing both policies on pages' own content (so calibrating
// a live store changes no data, only page versions), and interpolating where their costs cross.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/primitives/page/policy.hpp"

namespace pmlab::primitives::page {

class PageStore;

struct CalibrationOptions {
  // Timed back to back after one untimed flush; a phase per policy per round. 0: as many as make
  // kAutoBatchBytes of pages (at least 8): a few microseconds of 4 KiB flushes are all timer noise.
  uint32_t flushes_per_batch = 0;
  static constexpr uint64_t kAutoBatchBytes = 256 << 10;
  uint32_t rounds = 15;  // each point takes its fastest round; policies alternate which goes first
};

class FlushCostModel {
 public:
  // ns per flush of each policy at one (threads, dirty lines) point (its fastest round when calibrated).
  struct Sample {
    uint32_t threads = 1;
    uint32_t dirty = 1;
    double cow_ns = 0;
    double ulog_ns = 0;
    // Median over the rounds of ulog's time over cow's in the same round (adjacent phases), which a
    // change of the machine's speed between rounds moves less than either time; 0: not measured, the
    // model then uses ulog_ns / cow_ns.
    double ulog_vs_cow = 0;
  };

  // A model that takes the micro-log below `crossover` dirty lines at any thread count.
  static FlushCostModel fixed(double crossover);
  // A model from samples: per thread count, where ulog's cost relative to cow's turns from below 1 to not, linearly
  // interpolated between the two samples around the turn.
  static FlushCostModel from_samples(std::vector<Sample> samples);
  // Times cow and ulog on the store with 1 … max_threads concurrent flushers at dirty lines 1, 2, 4, …,
  // all. Needs max_threads unclaimed lanes and pages.
  static Result<FlushCostModel> calibrate(PageStore& store, uint32_t max_threads,
                                          const CalibrationOptions& options = {});

  Policy choose(uint32_t dirty, uint32_t threads) const noexcept {
    const size_t t = std::min<size_t>(std::max<uint32_t>(threads, 1), crossover_.size()) - 1;
    return static_cast<double>(dirty) < crossover_[t] ? Policy::ulog : Policy::cow;
  }
  // Dirty lines from which copy-on-write is cheaper, with `threads` concurrent flushers.
  double crossover(uint32_t threads) const noexcept {
    return crossover_[std::min<size_t>(std::max<uint32_t>(threads, 1), crossover_.size()) - 1];
  }
  uint32_t calibrated_threads() const noexcept { return static_cast<uint32_t>(crossover_.size()); }
  const std::vector<Sample>& samples() const noexcept { return samples_; }
  double calibration_seconds() const noexcept { return seconds_; }

 private:
  std::vector<double> crossover_{0.0};  // index: threads - 1
  std::vector<Sample> samples_;
  double seconds_ = 0;
};

}  // namespace pmlab::primitives::page
