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

  // The cost of an empty pair of stamps, sorted over 2001 tries.
  auto empty_pairs = [](auto stop_stamp) {
    std::vector<uint64_t> samples(2001);
    for (auto& s : samples) {
      const uint64_t a = start();
      s = stop_stamp() - a;
    }
    std::sort(samples.begin(), samples.end());
    return samples;
  };
  const std::vector<uint64_t> plain = empty_pairs([] { return stop(); });
  overhead_ns_ = to_ns(plain[1000]);
  overhead_p10_ns_ = to_ns(plain[200]);
  overhead_p90_ns_ = to_ns(plain[1800]);
  drained_overhead_ns_ = to_ns(empty_pairs([] { return stop_drained(); })[1000]);

  // The effective resolution: the smallest step between the durations a measurement (start() ... stop())
  // can report. A VM may serve rdtscp in coarser steps than the TSC ticks (here: ~10 ns steps of a
  // 0.4 ns tick), so this is measured over durations spread by a short spin of varying length.
  std::vector<uint64_t> durations;
  durations.reserve(20000);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t a = start();
    for (int spin = 0; spin < i % 97; ++spin) __asm__ volatile("" ::: "memory");
    durations.push_back(stop() - a);
  }
  std::sort(durations.begin(), durations.end());
  uint64_t step = UINT64_MAX;
  for (size_t i = 1; i < durations.size(); ++i)
    if (durations[i] != durations[i - 1]) step = std::min(step, durations[i] - durations[i - 1]);
  if (step == UINT64_MAX) step = 1;
  resolution_ns_ = to_ns(step);
}

const Clock& Clock::get() {
  static const Clock clock;
  return clock;
}

}  // namespace pmlab::platform
