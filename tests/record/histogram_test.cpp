#include "pmlab/record/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace pmlab::record {
namespace {

TEST(Histogram, BucketsAreContiguousAndOrdered) {
  for (int i = 1; i < Histogram::kBuckets; ++i)
    ASSERT_EQ(Histogram::lower_bound(i), Histogram::lower_bound(i - 1) + Histogram::width(i - 1)) << i;
  for (uint64_t v : {0ULL, 1ULL, 127ULL, 128ULL, 129ULL, 1000ULL, 123456789ULL, ~0ULL}) {
    const int idx = Histogram::index(v);
    ASSERT_LT(idx, Histogram::kBuckets);
    EXPECT_LE(Histogram::lower_bound(idx), v);
    EXPECT_LE(v - Histogram::lower_bound(idx), Histogram::width(idx) - 1);
  }
}

TEST(Histogram, QuantilesTrackTheExactOrderStatistics) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(6.0, 1.0);
  Histogram h;
  std::vector<uint64_t> values;
  for (int i = 0; i < 100000; ++i) {
    uint64_t v = static_cast<uint64_t>(dist(rng));
    values.push_back(v);
    h.add(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = static_cast<double>(values[static_cast<size_t>(q * values.size()) - 1]);
    EXPECT_NEAR(h.quantile(q), exact, exact * 0.02 + 1) << "q=" << q;
  }
  EXPECT_EQ(h.min(), values.front());
  EXPECT_EQ(h.max(), values.back());
  EXPECT_EQ(h.count(), values.size());
}

TEST(Histogram, MergeEqualsRecordingEverythingInOne) {
  Histogram a, b, all;
  for (uint64_t v = 0; v < 5000; v += 3) {
    (v % 2 ? a : b).add(v);
    all.add(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  EXPECT_DOUBLE_EQ(a.quantile(0.99), all.quantile(0.99));
  EXPECT_EQ(a.buckets(), all.buckets());
}

TEST(Histogram, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.quantile(0.5), 0.0);
  EXPECT_EQ(h.min(), 0u);
}

}  // namespace
}  // namespace pmlab::record
