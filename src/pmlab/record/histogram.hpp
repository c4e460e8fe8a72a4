// Latency histogram: log-linear buckets (64 per power of two, so any value is within 1.6% of its
// bucket), exact count, sum, min and max. Per-thread, merged after the run; recording is an increment.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace pmlab::record {

class Histogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = (64 - kSubBits + 1) * kSub;

  void add(uint64_t value) noexcept {
    ++counts_[index(value)];
    ++count_;
    sum_ += value;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }
  // `times` samples of one value (an operation timed in a batch: each of its operations gets the mean).
  void add(uint64_t value, uint64_t times) noexcept {
    if (times == 0) return;
    counts_[index(value)] += times;
    count_ += times;
    sum_ += value * times;
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }
  void merge(const Histogram& other) noexcept;

  uint64_t count() const noexcept { return count_; }
  uint64_t min() const noexcept { return count_ ? min_ : 0; }
  uint64_t max() const noexcept { return max_; }
  double mean() const noexcept { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  // The value below which a fraction q of the samples lie (q in [0,1]), to the bucket's precision;
  // exact at the extremes.
  double quantile(double q) const noexcept;
  // Non-empty buckets as (lower bound, count), for plotting.
  std::vector<std::pair<uint64_t, uint64_t>> buckets() const;

  static int index(uint64_t v) noexcept {
    if (v < 2 * kSub) return static_cast<int>(v);
    const int msb = 63 - __builtin_clzll(v);
    const int shift = msb - kSubBits;
    return static_cast<int>(kSub * shift + (v >> shift));
  }
  static uint64_t lower_bound(int idx) noexcept;
  static uint64_t width(int idx) noexcept;

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace pmlab::record
