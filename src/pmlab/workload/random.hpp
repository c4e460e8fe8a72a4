// The random source of every workload generator: xoshiro256**, seeded per thread through splitmix64, so a
// stream is reproducible from (seed, thread) and threads never share state.
#pragma once

#include <cstdint>

#include "pmlab/bench/access_pattern.hpp"

namespace pmlab::workload {

class Random {
 public:
  explicit Random(uint64_t seed) noexcept {
    uint64_t s = seed;
    for (uint64_t& w : state_) w = bench::splitmix64(s);
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

// YCSB's 64-bit FNV-1a over the eight bytes of a value, low byte first: how it scrambles zipfian ranks
// and turns record numbers into hashed keys.
constexpr uint64_t fnv_hash64(uint64_t value) noexcept {
  uint64_t hash = 0xCBF29CE484222325ULL;
  for (int i = 0; i < 8; ++i) {
    hash ^= value & 0xff;
    hash *= 1099511628211ULL;
    value >>= 8;
  }
  return hash;
}

}  // namespace pmlab::workload
