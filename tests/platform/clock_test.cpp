// The timer's measured floor: what a per-operation latency can resolve on this machine.
#include "pmlab/platform/clock.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace pmlab::platform {
namespace {

// The resolution claims that every duration a measurement reports is a whole number of its steps, and
// that an empty start()/stop() pair spans at least one of them.
TEST(Clock, MeasuredDurationsComeInStepsOfTheMeasuredResolution) {
  const Clock& clock = Clock::get();
  const double step_ticks = clock.resolution_ns() * clock.ticks_per_ns();
  ASSERT_GE(step_ticks, 0.999);
  EXPECT_LE(clock.resolution_ns(), clock.overhead_ns() + 1e-9);
  int off_grid = 0;
  for (int i = 0; i < 2000; ++i) {
    const uint64_t a = Clock::start();
    for (int spin = 0; spin < i % 31; ++spin) __asm__ volatile("" ::: "memory");
    const double d = static_cast<double>(Clock::stop() - a) / step_ticks;
    off_grid += std::abs(d - std::round(d)) > 1e-6 ? 1 : 0;
  }
  EXPECT_EQ(off_grid, 0);
  EXPECT_LE(clock.overhead_p10_ns(), clock.overhead_ns());
  EXPECT_GE(clock.overhead_p90_ns(), clock.overhead_ns());
}

}  // namespace
}  // namespace pmlab::platform
