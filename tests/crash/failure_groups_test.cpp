// Failures grouped by their cause's key, and the numbers a key leaves out.
#include "pmlab/crash/failure_groups.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace pmlab::crash {
namespace {

TEST(FailureGroups, NumbersAreMaskedWhateverTheirBase) {
  const std::pair<const char*, const char*> cases[] = {{"head 92 past tail 91", "head # past tail #"},
                                                       {"slot 0x1f0 at 0Xab, not 0xg", "slot # at #, not #xg"},
                                                       {"record7 of 12:3", "record# of #:#"},
                                                       {"no numbers", "no numbers"},
                                                       {"", ""}};
  for (const auto& [text, masked] : cases) EXPECT_EQ(numbers_masked(text), masked) << text;
}

TEST(FailureGroups, GroupsAreInTheOrderOfTheirFirstMember) {
  EXPECT_EQ(group_alike({7, 3, 7, 9, 3, 7}), (std::vector<std::vector<size_t>>{{0, 2, 5}, {1, 4}, {3}}));
  EXPECT_TRUE(group_alike({}).empty());
}

}  // namespace
}  // namespace pmlab::crash
