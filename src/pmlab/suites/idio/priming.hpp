// Cache-state control for I1 (latency versus LLC hit ratio, [PMIdioBench] §4.1): evict a region with
// clflushopt, then load a chosen fraction f of it, so that a fraction f of the tested lines is cached —
// and measure that it is, instead of assuming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pmlab::suites::idio {

// The unit of the experiment: a 128-byte slot whose first line is the one tested. The second line is
// never touched, so the adjacent-line prefetcher (which fetches the 128-byte buddy of a missed line)
// cannot turn one tested line's miss into another tested line's hit.
inline constexpr size_t kSlotBytes = 128;
// Priming loads the chosen lines this many times: a line touched once is a poor candidate for the
// victim caches of some CPUs (seen here: a single pass left a fraction of the primed lines cached).
inline constexpr int kPrimePasses = 3;

// Writes back and invalidates every line of [base, base+bytes) (clflushopt, else clflush), then fences.
void evict(std::byte* base, size_t bytes) noexcept;

// Loads the tested line of the first round(f × order.size()) slots of `order`, kPrimePasses times.
// Returns how many slots were primed.
size_t prime(const std::byte* base, const std::vector<uint32_t>& order, double f) noexcept;

// The timer-corrected latency (ns) of one load of the tested line of every slot in `order`, in order.
std::vector<double> timed_loads(const std::byte* base, const std::vector<uint32_t>& order);

// Where a load stops being a cache hit: midway between the median latency of just-primed lines and of
// just-evicted lines, measured on the memory under test.
struct HitThreshold {
  double hit_ns = 0;
  double miss_ns = 0;
  double threshold_ns = 0;
};
HitThreshold calibrate_threshold(std::byte* base, size_t bytes, uint64_t seed);

double hit_fraction(const std::vector<double>& latencies_ns, double threshold_ns) noexcept;

// One priming experiment on [base, base+bytes): evict, prime a fraction f, then time one load per slot
// in another random order. Returns the measured fraction of hits.
double primed_hit_ratio(std::byte* base, size_t bytes, double f, const HitThreshold& threshold, uint64_t seed);

// The cache as this experiment sees it: half of the largest region, from half the nominal LLC down by
// halves, whose full priming keeps at least `kMinFullHitRatio` of its tested lines cached and whose half
// priming measures within `kMaxHalfError` of 0.5. On a shared or virtualized cache it can be far below the
// nominal size (on the 2-vCPU development VM: 256–512 KiB of a nominal 32 MiB L3).
inline constexpr double kMinFullHitRatio = 0.9;
inline constexpr double kMaxHalfError = 0.12;
struct PrimableRegion {
  size_t bytes = 0;
  double full_hit_ratio = 0;  // measured at f = 1 on the chosen size
  double half_hit_ratio = 0;  // measured at f = 0.5
  size_t nominal_llc_bytes = 0;
};
PrimableRegion find_primable_region(std::byte* scratch, size_t scratch_bytes, uint64_t seed);
// The same, measured once per process on `scratch` and then remembered (a property of the CPU).
const PrimableRegion& primable_region(std::byte* scratch, size_t scratch_bytes);

}  // namespace pmlab::suites::idio
