// The timer's measured floor: what a per-operation latency can resolve on this machine.
#include "pmlab/platform/clock.hpp"

#include <gtest/gtest.h>

namespace pmlab::platform {
namespace {

TEST(Clock, MeasuredResolutionIsAWholeNumberOfTicksAndNoFinerThanOne) {
  const Clock& clock = Clock::get();
  ASSERT_GT(clock.tick_ns(), 0.0);
  EXPECT_GE(clock.resolution_ns(), clock.tick_ns() * 0.999);
  const double ticks = clock.resolution_ns() / clock.tick_ns();
  EXPECT_NEAR(ticks, static_cast<double>(static_cast<uint64_t>(ticks + 0.5)), 1e-6);
  EXPECT_LE(clock.overhead_p10_ns(), clock.overhead_ns());
  EXPECT_GE(clock.overhead_p90_ns(), clock.overhead_ns());
}

}  // namespace
}  // namespace pmlab::platform
