// YCSB's ScrambledZipfianGenerator: zipfian popularity, but the popular items are scattered over the key
// space instead of clustered at its low end. It draws a zipfian rank over a fixed 10^10 items (theta 0.99,
// with YCSB's precomputed zeta) and maps it through FNV-1a modulo the real item count, so the hottest item
// has probability ~1/zeta(10^10) ~ 3.8% whatever the record count.
#pragma once

#include <cstdint>

#include "pmlab/workload/random.hpp"
#include "pmlab/workload/zipfian.hpp"

namespace pmlab::workload {

inline constexpr uint64_t kScrambledItemCount = 10'000'000'000ULL;
// zeta(10^10, 0.99), as YCSB hard-codes it (the sum is too long to compute at start-up).
inline constexpr double kScrambledZeta = 26.46902820178302;

class ScrambledZipfianGenerator {
 public:
  ScrambledZipfianGenerator(uint64_t lower, uint64_t upper)
      : lower_(lower),
        items_(upper - lower + 1),
        ranks_(0, kScrambledItemCount, kYcsbZipfianConstant, kScrambledZeta) {}

  uint64_t next(Random& rng) const noexcept { return lower_ + fnv_hash64(ranks_.next(rng)) % items_; }
  // Where rank r of the underlying zipfian lands (tests compare observed frequencies against this map).
  uint64_t item_of_rank(uint64_t r) const noexcept { return lower_ + fnv_hash64(r) % items_; }

 private:
  uint64_t lower_;
  uint64_t items_;
  ZipfianGenerator ranks_;
};

}  // namespace pmlab::workload
