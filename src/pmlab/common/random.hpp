// The project's random sources, in one place: splitmix64 (seeding, hashing a counter into a stream) and
// xoshiro256** (the generator of every workload and randomized test stream). Both are reproducible from
// their seed alone, so a run, a crash state or a fuzz case replays from the numbers it prints.
#pragma once

#include <cstdint>

namespace pmlab {

// splitmix64's finalizer on its own: a well-mixed 64-bit hash of one word (checksums, hashing a counter).
inline uint64_t mix64(uint64_t x) noexcept {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// splitmix64: advances `state` by the golden-ratio increment and returns the mixed value.
inline uint64_t splitmix64(uint64_t& state) noexcept { return mix64(state += 0x9e3779b97f4a7c15ULL); }

// xoshiro256**, seeded through splitmix64.
class Random {
 public:
  explicit Random(uint64_t seed) noexcept {
    uint64_t s = seed;
    for (uint64_t& w : state_) w = splitmix64(s);
  }

  uint64_t next() noexcept {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double next_double() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-64 * n, far under any test's reach).
  uint64_t next_below(uint64_t n) noexcept {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace pmlab
