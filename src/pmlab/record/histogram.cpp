#include "pmlab/record/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace pmlab::record {

// Bucket layout: values below 2*kSub have a bucket each; above, the bucket of v keeps its top kSubBits+1
// bits, so index = kSub*shift + (v >> shift) with v >> shift in [kSub, 2*kSub) and shift >= 1.
uint64_t Histogram::lower_bound(int idx) noexcept {
  if (idx < 2 * kSub) return static_cast<uint64_t>(idx);
  const int shift = idx / kSub - 1;
  const uint64_t top = static_cast<uint64_t>(idx - kSub * shift);
  return top << shift;
}

uint64_t Histogram::width(int idx) noexcept {
  if (idx < 2 * kSub) return 1;
  return 1ULL << (idx / kSub - 1);
}

void Histogram::merge(const Histogram& other) noexcept {
  for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double Histogram::quantile(double q) const noexcept {
  if (count_ == 0) return 0.0;
  if (q <= 0.0) return static_cast<double>(min());
  if (q >= 1.0) return static_cast<double>(max_);
  // The rank of the sample wanted (1-based), then the bucket holding it; interpolate inside the bucket.
  const double rank = std::max(1.0, std::ceil(q * static_cast<double>(count_)));
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    if (counts_[i] == 0) continue;
    if (static_cast<double>(seen + counts_[i]) >= rank) {
      const double into = (rank - static_cast<double>(seen)) / static_cast<double>(counts_[i]);
      double v = static_cast<double>(lower_bound(i)) + into * static_cast<double>(width(i) - 1);
      return std::clamp(v, static_cast<double>(min()), static_cast<double>(max_));
    }
    seen += counts_[i];
  }
  return static_cast<double>(max_);
}

std::vector<std::pair<uint64_t, uint64_t>> Histogram::buckets() const {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (int i = 0; i < kBuckets; ++i)
    if (counts_[i] != 0) out.emplace_back(lower_bound(i), counts_[i]);
  return out;
}

}  // namespace pmlab::record
