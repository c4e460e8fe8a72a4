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

}  // namespace
}  // namespace pmlab
