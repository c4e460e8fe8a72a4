// Uniform integers over [lower, upper]: YCSB's UniformLongGenerator.
#pragma once

#include <cstdint>

#include "pmlab/workload/random.hpp"

namespace pmlab::workload {

class UniformGenerator {
 public:
  UniformGenerator(uint64_t lower, uint64_t upper) noexcept : lower_(lower), span_(upper - lower + 1) {}
  uint64_t next(Random& rng) const noexcept { return lower_ + rng.next_below(span_); }

 private:
  uint64_t lower_;
  uint64_t span_;
};

}  // namespace pmlab::workload
