// The orders side-by-side comparisons run their contenders in: every contender first equally often, and
// every contender directly after every other one equally often (a balanced Latin square).
#include "pmlab/suites/primitives/pausable_loop.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

namespace pmlab::suites::primitives {
namespace {

TEST(PhaseOrders, EveryContenderFollowsEveryOtherEquallyOften) {
  for (size_t n = 1; n <= 7; ++n) {
    const auto rows = phase_orders(n);
    ASSERT_EQ(rows.size(), n % 2 ? 2 * n : n) << n;
    std::map<size_t, int> first;
    std::map<std::pair<size_t, size_t>, int> follows;
    for (const auto& row : rows) {
      ASSERT_EQ(std::set<size_t>(row.begin(), row.end()).size(), n) << "a row is a permutation";
      ++first[row[0]];
      for (size_t k = 1; k < n; ++k) ++follows[{row[k - 1], row[k]}];
    }
    for (size_t c = 0; c < n; ++c) EXPECT_EQ(first[c], static_cast<int>(rows.size() / n)) << n;
    if (n == 1) continue;
    const int each = follows.begin()->second;
    EXPECT_EQ(follows.size(), n * (n - 1)) << "every ordered pair of neighbours occurs, n = " << n;
    for (const auto& [pair, count] : follows) EXPECT_EQ(count, each) << pair.first << "->" << pair.second;
  }
  EXPECT_TRUE(phase_orders(0).empty());
}

}  // namespace
}  // namespace pmlab::suites::primitives
