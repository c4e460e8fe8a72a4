#include "pmlab/platform/clock.hpp"

#include <time.h>

#include <algorithm>
#include <vector>

#include "pmlab/platform/cpu.hpp"

namespace pmlab::platform {

uint64_t Clock::monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

Clock::Clock() {
  const auto& cpu = CpuFeatures::host();
  // rdtscp is part of stop(); a TSC that changes rate with the core clock would make ns meaningless.
  if (!cpu.invariant_tsc || !cpu.rdtscp) {
    // Without an invariant TSC the stamps still come from rdtsc (they are what start()/stop() return),
    // but the calibration below then only holds on average; the context says so.
    source_ = "tsc-not-invariant";
  } else {
    source_ = "tsc";
  }
  // Three 7 ms windows; the median rate rejects a window disturbed by preemption.
  std::vector<double> rates;
  for (int i = 0; i < 3; ++i) {
    uint64_t n0 = monotonic_ns(), t0 = __rdtsc();
    uint64_t n1 = n0;
    while (n1 - n0 < 7'000'000) n1 = monotonic_ns();
    uint64_t t1 = __rdtsc();
    rates.push_back(static_cast<double>(t1 - t0) / static_cast<double>(n1 - n0));
  }
  std::sort(rates.begin(), rates.end());
  ticks_per_ns_ = rates[1] > 0 ? rates[1] : 1.0;

  std::vector<uint64_t> samples(2001);
  for (auto& s : samples) {
    uint64_t a = start();
    uint64_t b = stop();
    s = b - a;
  }
  std::nth_element(samples.begin(), samples.begin() + 1000, samples.end());
  overhead_ns_ = to_ns(samples[1000]);
}

const Clock& Clock::get() {
  static const Clock clock;
  return clock;
}

}  // namespace pmlab::platform
