#include "pmlab/platform/topology.hpp"

#include <gtest/gtest.h>

namespace pmlab::platform {
namespace {

TEST(Topology, CpuListsParseAsTheKernelWritesThem) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("3-1"), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("x"), std::vector<int>{});
}

}  // namespace
}  // namespace pmlab::platform
