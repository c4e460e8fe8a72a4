// The time source for every measurement: the TSC, calibrated against CLOCK_MONOTONIC_RAW at start.
//
// The TSC frequency is never assumed (PMIdioBench hard-codes 2.7 GHz); it is measured. Without an
// invariant TSC the clock falls back to clock_gettime and says so.
#pragma once

#include <x86intrin.h>

#include <cstdint>
#include <string>

namespace pmlab::platform {

class Clock {
 public:
  // Calibrates once (about 20 ms) on first use.
  static const Clock& get();

  // Start and end stamps for timing a short region; the fences keep the measured work inside them.
  static inline uint64_t start() noexcept {
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
  }
  static inline uint64_t stop() noexcept {
    unsigned aux;
    uint64_t t = __rdtscp(&aux);
    _mm_lfence();
    return t;
  }
  // An end stamp taken once the region's stores and write-backs are complete. rdtscp waits for earlier
  // instructions and loads only; a store, a flush or a non-temporal store may still be draining (sfence
  // orders them, it need not wait), so a p-store timed with stop() reads whether the *previous* one had
  // drained, and the same point depends on what ran before it.
  static inline uint64_t stop_drained() noexcept {
    _mm_mfence();
    _mm_lfence();
    return stop();
  }
  // Cheap stamp for coarse checks (deadline polling); not ordered with surrounding work.
  static inline uint64_t now() noexcept { return __rdtsc(); }

  double ticks_per_ns() const noexcept { return ticks_per_ns_; }
  double to_ns(uint64_t ticks) const noexcept { return static_cast<double>(ticks) / ticks_per_ns_; }
  uint64_t from_ns(double ns) const noexcept { return static_cast<uint64_t>(ns * ticks_per_ns_); }
  // Median cost of an empty start()/stop() pair, in ns: the floor of any per-operation latency.
  double overhead_ns() const noexcept { return overhead_ns_; }
  // The same for an empty start()/stop_drained() pair.
  double drained_overhead_ns() const noexcept { return drained_overhead_ns_; }
  // What one TSC tick is worth; a VM may advance its time stamps in coarser steps than that.
  double tick_ns() const noexcept { return 1.0 / ticks_per_ns_; }
  // The effective resolution, measured: the smallest non-zero difference of back-to-back stamps. A latency
  // within a few of these is at the timer's floor.
  double resolution_ns() const noexcept { return resolution_ns_; }
  // The spread of an empty start()/stop() pair (10th and 90th percentile, ns) beside its median.
  double overhead_p10_ns() const noexcept { return overhead_p10_ns_; }
  double overhead_p90_ns() const noexcept { return overhead_p90_ns_; }
  const std::string& source() const noexcept { return source_; }
  bool uses_tsc() const noexcept { return source_ == "tsc"; }

  static uint64_t monotonic_ns() noexcept;

 private:
  Clock();
  double ticks_per_ns_ = 1.0;
  double overhead_ns_ = 0.0;
  double drained_overhead_ns_ = 0.0;
  double overhead_p10_ns_ = 0.0;
  double overhead_p90_ns_ = 0.0;
  double resolution_ns_ = 0.0;
  std::string source_;
};

}  // namespace pmlab::platform
