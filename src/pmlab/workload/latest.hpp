// YCSB's SkewedLatestGenerator: zipfian over recency. With `last` the newest record number, it returns
// last - r for a zipfian rank r over last+1 items, so the most recently inserted records are the hottest
// and the hot set moves as inserts arrive.
#pragma once

#include <cstdint>

#include "pmlab/workload/random.hpp"
#include "pmlab/workload/zipfian.hpp"

namespace pmlab::workload {

class LatestGenerator {
 public:
  explicit LatestGenerator(uint64_t last) : ranks_(0, last + 1) {}
  uint64_t next(Random& rng, uint64_t last) noexcept { return last - ranks_.next_over(rng, last + 1); }

 private:
  ZipfianGenerator ranks_;
};

}  // namespace pmlab::workload
