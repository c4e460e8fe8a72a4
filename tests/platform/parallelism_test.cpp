// The probes every multi-thread run takes, against placements whose answer is known: two threads pinned to
// one CPU take turns (one core, and a line handed over only at a context switch).
#include "pmlab/platform/parallelism.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <vector>
#include <cmath>

#include "pmlab/platform/topology.hpp"

namespace pmlab::platform {
namespace {

// The smallest of five probes. A competitor that shares the CPU while the stretch runs alone and leaves it
// while the two threads run together (the scheduler moves it off the CPU that has two) makes a probe read
// up to 2: beside `ctest -j2` and a busy loop on this 2-CPU VM, the median of five reached 1.6 in 2 of 25
// sets, while the smallest stayed at or below 0.65 (idle: 0.94-0.97). Timed per thread (each thread's
// stretch alone), the same placement read 1.87.
TEST(Parallelism, TwoThreadsOnOneCpuCountAsOneCore) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  std::vector<double> probes;
  for (int i = 0; i < 5; ++i) probes.push_back(cores_available({cpus[0], cpus[0]}));
  std::sort(probes.begin(), probes.end());
  EXPECT_GT(probes.front(), 0.0);
  EXPECT_LT(probes.front(), 1.3);
  EXPECT_EQ(cores_available({cpus[0]}), 1.0);
}

TEST(Parallelism, DistinctCpusCountAtMostTheirNumber) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed";
  const double cores = cores_available({cpus[0], cpus[1]});
  EXPECT_GT(cores, 0.0);
  EXPECT_LE(cores, 2.0);
  const double ns = core_to_core_ns(cpus[0], cpus[1]);
  EXPECT_TRUE(std::isfinite(ns));
  EXPECT_GT(ns, 0.0);
}

// On one CPU a line moves only when the scheduler switches threads: the exchange stops at its time budget
// instead of running its round trips at a time slice each.
TEST(Parallelism, ALineHandedOverOnOneCpuEndsAtItsBudget) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  const auto t0 = std::chrono::steady_clock::now();
  const double ns = core_to_core_ns(cpus[0], cpus[0]);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(ns, 1000.0);  // a context switch, not a cache transfer
  EXPECT_LT(seconds, 2.0);
}

}  // namespace
}  // namespace pmlab::platform
