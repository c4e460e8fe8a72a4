// Small statistics every estimator in pmlab shares.
#pragma once

#include <cstdint>
#include <vector>

namespace pmlab {

// The middle value (the mean of the two middle ones for an even count); 0 for none.
double median(std::vector<double> values);

// A percentile bootstrap confidence interval of a median. With repetitions this small (3-10) a normal
// approximation has no footing; resampling needs no assumption about the distribution, and a fixed seed
// makes the interval a function of the samples alone (two reports of one results.json agree).
struct Interval {
  double low = 0;
  double high = 0;
};
inline constexpr int kBootstrapResamples = 2000;
inline constexpr uint64_t kBootstrapSeed = 0x5eed'b007'57a9ULL;

// Interval of median(samples) at `level` (e.g. 0.95); one sample gives [x, x].
Interval bootstrap_median_ci(const std::vector<double>& samples, double level = 0.95);
// Interval of median(a) / median(b), each side resampled on its own (the two were measured apart).
Interval bootstrap_ratio_ci(const std::vector<double>& a, const std::vector<double>& b, double level = 0.95);

}  // namespace pmlab
