#include "pmlab/common/statistics.hpp"

#include <gtest/gtest.h>

namespace pmlab {
namespace {

TEST(Median, TakesTheMiddleOrTheMeanOfTheTwoMiddleValues) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({3.0}), 3.0);
  EXPECT_EQ(median({5.0, 1.0, 3.0}), 3.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
}

TEST(BootstrapMedianCi, IsAPointForOneSampleOrIdenticalOnes) {
  const Interval one = bootstrap_median_ci({4.0});
  EXPECT_EQ(one.low, 4.0);
  EXPECT_EQ(one.high, 4.0);
  const Interval same = bootstrap_median_ci({2.0, 2.0, 2.0, 2.0});
  EXPECT_EQ(same.low, 2.0);
  EXPECT_EQ(same.high, 2.0);
}

TEST(BootstrapMedianCi, HoldsTheMedianWithinTheSamplesAndNarrowsWithMoreOfThem) {
  const std::vector<double> few = {9.0, 10.0, 11.0, 10.5, 9.5};
  const Interval a = bootstrap_median_ci(few);
  EXPECT_LE(a.low, median(few));
  EXPECT_GE(a.high, median(few));
  EXPECT_GE(a.low, 9.0);
  EXPECT_LE(a.high, 11.0);
  std::vector<double> many;
  for (int i = 0; i < 200; ++i) many.push_back(few[static_cast<size_t>(i) % few.size()]);
  const Interval b = bootstrap_median_ci(many);
  EXPECT_LT(b.high - b.low, a.high - a.low);
  // A fixed seed: the same samples give the same interval.
  const Interval again = bootstrap_median_ci(few);
  EXPECT_EQ(again.low, a.low);
  EXPECT_EQ(again.high, a.high);
}

TEST(BootstrapRatioCi, BracketsTheRatioOfMedians) {
  const Interval r = bootstrap_ratio_ci({20.0, 21.0, 19.0, 20.5}, {10.0, 10.2, 9.8, 10.1});
  EXPECT_LT(r.low, 2.05);
  EXPECT_GT(r.high, 1.95);
  EXPECT_GT(r.low, 1.8);
  EXPECT_LT(r.high, 2.2);
}

}  // namespace
}  // namespace pmlab
