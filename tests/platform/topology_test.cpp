#include "pmlab/platform/topology.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace pmlab::platform {
namespace {

TEST(Topology, CpuListsParseAsTheKernelWritesThem) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("3-1"), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("x"), std::vector<int>{});
  // No kernel numbers a CPU so high: refused, not counted out one by one into memory.
  EXPECT_EQ(parse_cpu_list("2147483647-2147483647"), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("0-50000000"), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list("-1"), std::vector<int>{});
}

// A tree as the kernel writes it for 4 CPUs on 2 cores with two threads each (CPU n and n + 2 share a core);
// CPU 5 has no topology directory.
class SmtTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("pmlab-smt-" + std::to_string(getpid()));
    for (int cpu = 0; cpu < 4; ++cpu) {
      const auto dir = root_ / ("sys/devices/system/cpu/cpu" + std::to_string(cpu)) / "topology";
      std::filesystem::create_directories(dir);
      // CPU 3 as before Linux 5.7, which named the file thread_siblings_list.
      std::ofstream(dir / (cpu == 3 ? "thread_siblings_list" : "core_cpus_list")) << (cpu % 2 ? "1,3" : "0,2") << "\n";
    }
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root() const { return root_.string(); }
  std::filesystem::path root_;
};

TEST_F(SmtTree, SiblingsCountAsOneCore) {
  EXPECT_EQ(physical_cores({0, 1, 2, 3}, root()), 2);
  EXPECT_EQ(physical_cores({0, 2}, root()), 1);
  EXPECT_EQ(physical_cores({0, 1}, root()), 2);
  EXPECT_EQ(physical_cores({1, 3}, root()), 1);
}

TEST_F(SmtTree, ACpuWithoutTopologyIsACoreOfItsOwn) {
  EXPECT_EQ(physical_cores({0, 2, 5}, root()), 2);
  EXPECT_EQ(physical_cores({}, root()), 0);
}

// This machine: never more cores than CPUs, at least one for one CPU.
TEST(Topology, PhysicalCoresOfThisMachineAreAtMostItsCpus) {
  const std::vector<int> cpus = allowed_cpus();
  const int cores = physical_cores(cpus);
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, static_cast<int>(cpus.size()));
}

}  // namespace
}  // namespace pmlab::platform
