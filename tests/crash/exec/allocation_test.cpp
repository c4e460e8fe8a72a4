#include <gtest/gtest.h>

#include <numeric>

#include "pmlab/crash/enumerator.hpp"
#include "pmlab/crash/exec/campaign.hpp"

namespace pmlab::crash::exec {
namespace {

uint64_t sum(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

TEST(ExecBudget, AsTheSimulatorWhenEveryPointGetsSixteenStates) {
  const std::vector<double> sizes = {3, 100, 1, 40};
  EXPECT_EQ(allocate_exec_budget(sizes, {}, 200, 1), allocate_budget(sizes, 200));
}

TEST(ExecBudget, ManyPointsGetBreadthAndASampleGetsDepth) {
  const std::vector<double> sizes(1000, 64.0);
  const auto a = allocate_exec_budget(sizes, {}, 2000, 7);
  EXPECT_LE(sum(a), 2000u);
  EXPECT_GE(sum(a), 1990u);
  EXPECT_EQ(std::count_if(a.begin(), a.end(), [](uint64_t v) { return v == 0; }), 0)
      << "every point gets its first state";
  const auto deep = std::count_if(a.begin(), a.end(), [](uint64_t v) { return v == 16; });
  EXPECT_GE(deep, 60);
  EXPECT_NE(a, allocate_exec_budget(sizes, {}, 2000, 8)) << "the sample follows the seed";
  EXPECT_EQ(a, allocate_exec_budget(sizes, {}, 2000, 7)) << "and only the seed";
}

TEST(ExecBudget, MorePointsThanHalfTheBudgetAreStridedNotCutOff) {
  const std::vector<double> sizes(5000, 4.0);
  const auto a = allocate_exec_budget(sizes, {}, 2000, 1);
  EXPECT_LE(sum(a), 2000u);
  // The breadth pass reaches the end of the run, not only its first points.
  EXPECT_GT(std::count_if(a.begin() + 4000, a.end(), [](uint64_t v) { return v > 0; }), 150);
  EXPECT_EQ(*std::max_element(a.begin(), a.end()), 4u) << "a deep point gets what it has";
}

TEST(ExecBudget, EveryFenceStackIsExploredDeepBeforeAnyTwice) {
  // 990 points at one fence (an insert's), 10 at another (a rehash's): the rare fence gets deep points.
  std::vector<double> sizes(1000, 64.0);
  std::vector<uint32_t> groups(1000, 1);
  for (size_t i = 100; i < 1000; i += 100) groups[i] = 2;
  groups[5] = 2;
  const auto a = allocate_exec_budget(sizes, groups, 2000, 3);
  uint64_t rare_deep = 0;
  for (size_t i = 0; i < a.size(); ++i) rare_deep += groups[i] == 2 && a[i] == 16;
  EXPECT_EQ(rare_deep, 10u) << "the depth half (1000 states, 62 points) reaches all ten";
}

}  // namespace
}  // namespace pmlab::crash::exec
