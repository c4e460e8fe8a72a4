#include "pmlab/workload/zipfian.hpp"

#include <cmath>

namespace pmlab::workload {

double zeta_extend(uint64_t from, uint64_t n, double theta, double zeta_from) noexcept {
  double sum = zeta_from;
  for (uint64_t i = from + 1; i <= n; ++i) sum += 1.0 / std::pow(static_cast<double>(i), theta);
  return sum;
}

double zeta(uint64_t n, double theta) noexcept { return zeta_extend(0, n, theta, 0.0); }

ZipfianGenerator::ZipfianGenerator(uint64_t base, uint64_t items, double theta)
    : ZipfianGenerator(base, items, theta, zeta(items, theta)) {}

ZipfianGenerator::ZipfianGenerator(uint64_t base, uint64_t items, double theta, double zeta_items)
    : base_(base),
      items_(items),
      theta_(theta),
      alpha_(1.0 / (1.0 - theta)),
      zeta2_(zeta(2, theta)),
      zeta_n_(zeta_items),
      eta_(eta_for(items, zeta_items)) {}

double ZipfianGenerator::eta_for(uint64_t items, double zeta_n) const noexcept {
  return (1.0 - std::pow(2.0 / static_cast<double>(items), 1.0 - theta_)) / (1.0 - zeta2_ / zeta_n);
}

uint64_t ZipfianGenerator::rank(Random& rng, uint64_t items, double zeta_n, double eta) const noexcept {
  const double u = rng.next_double();
  const double uz = u * zeta_n;
  // The two hottest ranks exactly; the rest by inverting the approximate CDF.
  if (uz < 1.0) return 0;
  if (uz < 1.0 + std::pow(0.5, theta_)) return 1;
  const auto r = static_cast<uint64_t>(static_cast<double>(items) * std::pow(eta * u - eta + 1.0, alpha_));
  return r < items ? r : items - 1;
}

uint64_t ZipfianGenerator::next_over(Random& rng, uint64_t items) noexcept {
  if (items != items_) {
    zeta_n_ = items > items_ ? zeta_extend(items_, items, theta_, zeta_n_) : zeta(items, theta_);
    items_ = items;
    eta_ = eta_for(items_, zeta_n_);
  }
  return base_ + rank(rng, items_, zeta_n_, eta_);
}

}  // namespace pmlab::workload
