// Zipfian integers over [base, base + items): rank r (from 0) is drawn with probability
// (1/(r+1)^theta) / zeta(items, theta). This is Gray et al.'s constant-time method ("Quickly generating
// billion-record synthetic databases", SIGMOD 1994) as YCSB 0.17's ZipfianGenerator uses it, including its
// incremental zeta when the item count grows (the `latest` distribution draws over a growing range).
#pragma once

#include <cstdint>

#include "pmlab/workload/random.hpp"

namespace pmlab::workload {

inline constexpr double kYcsbZipfianConstant = 0.99;

// zeta(n, theta) = sum over i = 1..n of 1 / i^theta.
double zeta(uint64_t n, double theta) noexcept;
// zeta(n, theta) from a known zeta(from, theta): adds the terms from+1 .. n.
double zeta_extend(uint64_t from, uint64_t n, double theta, double zeta_from) noexcept;

class ZipfianGenerator {
 public:
  ZipfianGenerator(uint64_t base, uint64_t items, double theta = kYcsbZipfianConstant);
  // With zeta(items, theta) already known (YCSB's scrambled generator passes a precomputed constant).
  ZipfianGenerator(uint64_t base, uint64_t items, double theta, double zeta_items);

  uint64_t next(Random& rng) const noexcept { return base_ + rank(rng, items_, zeta_n_, eta_); }
  // A draw over the first `items` ranks; grows the cached zeta when the count grows (never shrinks it:
  // as in YCSB, a shrinking count recomputes from scratch).
  uint64_t next_over(Random& rng, uint64_t items) noexcept;

  uint64_t items() const noexcept { return items_; }
  double theta() const noexcept { return theta_; }
  double zeta_items() const noexcept { return zeta_n_; }

 private:
  uint64_t rank(Random& rng, uint64_t items, double zeta_n, double eta) const noexcept;
  double eta_for(uint64_t items, double zeta_n) const noexcept;

  uint64_t base_;
  uint64_t items_;
  double theta_;
  double alpha_;
  double zeta2_;
  double zeta_n_;
  double eta_;
};

}  // namespace pmlab::workload
