// I1's priming: after evicting a region and loading a fraction f of its tested lines, the hit ratio
// measured from load latencies tracks f.
#include "pmlab/suites/idio/priming.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "pmlab/media/region.hpp"
#include "pmlab/suites/idio/common.hpp"

namespace pmlab::suites::idio {
namespace {

double median_of_three(std::byte* base, size_t bytes, double f, const HitThreshold& threshold, uint64_t seed) {
  double r[3];
  for (int i = 0; i < 3; ++i) r[i] = primed_hit_ratio(base, bytes, f, threshold, seed + static_cast<uint64_t>(i));
  std::sort(r, r + 3);
  return r[1];
}

class Priming : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(buffer_.reserve(16 << 20).ok()); }
  media::DramBuffer buffer_;
};

TEST_F(Priming, EvictedLinesAreSlowerThanPrimedOnes) {
  // A process beside it on the shared cache (a parallel ctest, a build) can evict the primed lines
  // mid-calibration: up to three calibrations, the widest separation counts. Broken priming fails all.
  HitThreshold t = calibrate_threshold(buffer_.region().base, 1 << 20, 7);
  for (uint64_t seed = 8; seed < 10 && !(t.miss_ns > 2 * t.hit_ns); ++seed) {
    const HitThreshold again = calibrate_threshold(buffer_.region().base, 1 << 20, seed);
    if (again.miss_ns / again.hit_ns > t.miss_ns / t.hit_ns) t = again;
  }
  EXPECT_GT(t.miss_ns, 2 * t.hit_ns) << "hit " << t.hit_ns << " ns, miss " << t.miss_ns << " ns";
  EXPECT_GT(t.threshold_ns, t.hit_ns);
  EXPECT_LT(t.threshold_ns, t.miss_ns);
}

TEST_F(Priming, MeasuredHitRatioTracksTheTargetFraction) {
  const PrimableRegion region = find_primable_region(buffer_.region().base, buffer_.region().size, 11);
  ASSERT_GE(region.bytes, size_t{64} << 10);
  ASSERT_LE(region.bytes, buffer_.region().size);
  const HitThreshold t = calibrate_threshold(buffer_.region().base, region.bytes, 13);
  double previous = -1;
  for (double f : {0.0, 0.5, 1.0}) {
    // Another process on the shared cache can evict primed lines mid-measurement (ctest runs the suite in
    // parallel, beside crash campaigns that stream through memory): up to six attempts, the one nearest the
    // target counts; each retry calibrates again, since the neighbour may have skewed the threshold too.
    // Broken priming misses in all.
    double measured = median_of_three(buffer_.region().base, region.bytes, f, t, 100);
    for (uint64_t attempt = 1; attempt < 6 && std::abs(measured - f) > 0.2; ++attempt) {
      const HitThreshold retry = calibrate_threshold(buffer_.region().base, region.bytes, 13 + attempt);
      const double again = median_of_three(buffer_.region().base, region.bytes, f, retry, 100 + 10 * attempt);
      if (std::abs(again - f) < std::abs(measured - f)) measured = again;
    }
    EXPECT_NEAR(measured, f, 0.2) << "f=" << f << " on a " << region.bytes << " B region";
    EXPECT_GT(measured, previous) << "f=" << f;
    previous = measured;
  }
}

TEST(PrimingOrder, PermutationVisitsEverySlotOnce) {
  auto p = permutation(1000, 5);
  std::sort(p.begin(), p.end());
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(p[i], i);
  EXPECT_NE(permutation(1000, 5), permutation(1000, 6));
  EXPECT_EQ(permutation(1000, 5), permutation(1000, 5));
}

TEST(PrimingOrder, PrimeLoadsTheRequestedShare) {
  media::DramBuffer b;
  ASSERT_TRUE(b.reserve(1 << 20).ok());
  const auto order = permutation(1000, 1);
  EXPECT_EQ(prime(b.region().base, order, 0.0), 0u);
  EXPECT_EQ(prime(b.region().base, order, 0.25), 250u);
  EXPECT_EQ(prime(b.region().base, order, 1.0), 1000u);
  EXPECT_EQ(prime(b.region().base, order, 7.0), 1000u);  // clamped
}

}  // namespace
}  // namespace pmlab::suites::idio
