#include "pmlab/suites/idio/priming.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>

#include "pmlab/common/statistics.hpp"
#include "pmlab/persist/instructions.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/suites/idio/common.hpp"

namespace pmlab::suites::idio {
namespace {

inline void full_fence() noexcept { __asm__ volatile("mfence" ::: "memory"); }

}  // namespace

void evict(std::byte* base, size_t bytes) noexcept {
  const bool opt = platform::CpuFeatures::host().clflushopt;
  for (size_t o = 0; o < bytes; o += persist::kCacheLine) {
    if (opt) persist::isa::clflushopt(base + o);
    else persist::isa::clflush(base + o);
  }
  full_fence();
}

size_t prime(const std::byte* base, const std::vector<uint32_t>& order, double f) noexcept {
  const size_t n = static_cast<size_t>(std::llround(std::clamp(f, 0.0, 1.0) * static_cast<double>(order.size())));
  uint64_t sink = 0;
  for (int pass = 0; pass < kPrimePasses; ++pass)
    for (size_t i = 0; i < n; ++i) sink += load_word(base + size_t{order[i]} * kSlotBytes);
  full_fence();
  __asm__ volatile("" : : "r"(sink));
  return n;
}

std::vector<double> timed_loads(const std::byte* base, const std::vector<uint32_t>& order) {
  const platform::Clock& clock = platform::Clock::get();
  const uint64_t overhead = clock.from_ns(clock.overhead_ns());
  std::vector<double> out(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const std::byte* line = base + size_t{order[i]} * kSlotBytes;
    const uint64_t t0 = platform::Clock::start();
    load_word(line);
    const uint64_t t1 = platform::Clock::stop();
    const uint64_t d = t1 - t0;
    out[i] = clock.to_ns(d > overhead ? d - overhead : 0);
  }
  return out;
}

HitThreshold calibrate_threshold(std::byte* base, size_t bytes, uint64_t seed) {
  // A small sample (at most 2048 slots, 256 KiB) stays cached between priming and timing on any CPU.
  const size_t slots = std::min<size_t>(bytes / kSlotBytes, 2048);
  const auto order = permutation(slots, seed);
  evict(base, slots * kSlotBytes);
  const double miss = median(timed_loads(base, order));
  prime(base, order, 1.0);
  const double hit = median(timed_loads(base, order));
  return {hit, miss, (hit + miss) / 2};
}

double hit_fraction(const std::vector<double>& latencies_ns, double threshold_ns) noexcept {
  if (latencies_ns.empty()) return 0.0;
  size_t hits = 0;
  for (double l : latencies_ns) hits += l < threshold_ns ? 1 : 0;
  return static_cast<double>(hits) / static_cast<double>(latencies_ns.size());
}

double primed_hit_ratio(std::byte* base, size_t bytes, double f, const HitThreshold& threshold, uint64_t seed) {
  const size_t slots = bytes / kSlotBytes;
  const auto primed_order = permutation(slots, seed);
  const auto visit_order = permutation(slots, seed ^ 0x9e3779b97f4a7c15ULL);
  evict(base, slots * kSlotBytes);
  prime(base, primed_order, f);
  return hit_fraction(timed_loads(base, visit_order), threshold.threshold_ns);
}

PrimableRegion find_primable_region(std::byte* scratch, size_t scratch_bytes, uint64_t seed) {
  PrimableRegion out;
  out.nominal_llc_bytes = platform::llc_bytes();
  constexpr size_t kSmallest = 64 << 10;
  size_t candidate =
      std::bit_floor(std::max<size_t>(std::min<size_t>(out.nominal_llc_bytes / 2, scratch_bytes), kSmallest));
  candidate = std::min(candidate, std::bit_floor(scratch_bytes));
  const HitThreshold threshold = calibrate_threshold(scratch, scratch_bytes, seed);
  const size_t smallest = std::min(kSmallest, candidate);
  for (; candidate >= smallest; candidate /= 2) {
    // Best of two: another process thrashing the cache for a moment must not shrink the region for good.
    double full = primed_hit_ratio(scratch, candidate, 1.0, threshold, seed + candidate);
    if (full < kMinFullHitRatio) full = std::max(full, primed_hit_ratio(scratch, candidate, 1.0, threshold, seed + 1));
    // Half primed, the timed pass's misses compete with the primed lines for the same cache: the region
    // must hold both, or the measured ratio falls short of f.
    double half = primed_hit_ratio(scratch, candidate, 0.5, threshold, seed + 2);
    if (std::fabs(half - 0.5) > kMaxHalfError) {
      const double again = primed_hit_ratio(scratch, candidate, 0.5, threshold, seed + 3);
      if (std::fabs(again - 0.5) < std::fabs(half - 0.5)) half = again;
    }
    out.bytes = candidate;
    out.full_hit_ratio = full;
    out.half_hit_ratio = half;
    if (full >= kMinFullHitRatio && std::fabs(half - 0.5) <= kMaxHalfError) {
      // Half of the largest size that passed: a probe that passed narrowly (the size just fits, or the
      // machine was quiet for a moment) must not put every later run on the edge.
      if (candidate / 2 >= smallest) {
        out.bytes = candidate / 2;
        out.full_hit_ratio = primed_hit_ratio(scratch, out.bytes, 1.0, threshold, seed + 4);
        out.half_hit_ratio = primed_hit_ratio(scratch, out.bytes, 0.5, threshold, seed + 5);
      }
      break;
    }
  }
  return out;
}

const PrimableRegion& primable_region(std::byte* scratch, size_t scratch_bytes) {
  static std::once_flag once;
  static PrimableRegion region;
  std::call_once(once, [&] { region = find_primable_region(scratch, scratch_bytes, 0x1d10ULL); });
  return region;
}

}  // namespace pmlab::suites::idio
