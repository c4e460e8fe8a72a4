#include "pmlab/common/statistics.hpp"

#include <algorithm>
#include <cmath>

#include "pmlab/common/random.hpp"

namespace pmlab {

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

namespace {

// The median of one resample (with replacement) of `from`, into `scratch`.
double resampled_median(const std::vector<double>& from, std::vector<double>& scratch, Random& rng) {
  scratch.resize(from.size());
  for (double& x : scratch) x = from[rng.next_below(from.size())];
  return median(scratch);
}

Interval percentile_interval(std::vector<double> estimates, double level) {
  std::sort(estimates.begin(), estimates.end());
  const double tail = (1.0 - level) / 2.0;
  const auto at = [&](double q) {
    const double pos = q * static_cast<double>(estimates.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, estimates.size() - 1);
    return estimates[lo] + (pos - static_cast<double>(lo)) * (estimates[hi] - estimates[lo]);
  };
  return {at(tail), at(1.0 - tail)};
}

}  // namespace

Interval bootstrap_median_ci(const std::vector<double>& samples, double level) {
  if (samples.empty()) return {NAN, NAN};
  if (samples.size() == 1) return {samples[0], samples[0]};
  Random rng(kBootstrapSeed);
  std::vector<double> scratch, estimates;
  estimates.reserve(kBootstrapResamples);
  for (int i = 0; i < kBootstrapResamples; ++i) estimates.push_back(resampled_median(samples, scratch, rng));
  return percentile_interval(std::move(estimates), level);
}

Interval bootstrap_ratio_ci(const std::vector<double>& a, const std::vector<double>& b, double level) {
  if (a.empty() || b.empty()) return {NAN, NAN};
  Random rng(kBootstrapSeed);
  std::vector<double> scratch, estimates;
  estimates.reserve(kBootstrapResamples);
  for (int i = 0; i < kBootstrapResamples; ++i) {
    const double num = resampled_median(a, scratch, rng);
    const double den = resampled_median(b, scratch, rng);
    estimates.push_back(den != 0 ? num / den : NAN);
  }
  std::erase_if(estimates, [](double x) { return !std::isfinite(x); });
  if (estimates.empty()) return {NAN, NAN};
  return percentile_interval(std::move(estimates), level);
}

}  // namespace pmlab
