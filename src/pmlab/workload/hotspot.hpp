// YCSB's HotspotIntegerGenerator: a fraction `hot_set` of the range [lower, upper] (its low end) receives
// a fraction `hot_ops` of the draws, uniformly; the rest go uniformly to the cold remainder.
#pragma once

#include <cstdint>

#include "pmlab/workload/random.hpp"

namespace pmlab::workload {

class HotspotGenerator {
 public:
  HotspotGenerator(uint64_t lower, uint64_t upper, double hot_set, double hot_ops) noexcept
      : lower_(lower), hot_ops_(hot_ops) {
    const uint64_t interval = upper - lower + 1;
    hot_ = static_cast<uint64_t>(static_cast<double>(interval) * hot_set);
    cold_ = interval - hot_;
  }
  uint64_t next(Random& rng) const noexcept {
    // As YCSB: a hot draw with an empty hot set (or a cold one with an empty cold set) falls to the other.
    if ((rng.next_double() < hot_ops_ && hot_ > 0) || cold_ == 0) return lower_ + rng.next_below(hot_);
    return lower_ + hot_ + rng.next_below(cold_);
  }
  uint64_t hot_items() const noexcept { return hot_; }

 private:
  uint64_t lower_;
  double hot_ops_;
  uint64_t hot_ = 0;
  uint64_t cold_ = 0;
};

}  // namespace pmlab::workload
