// The random source of every workload generator (pmlab::Random, common/random.hpp), seeded per thread, so
// a stream is reproducible from (seed, thread) and threads never share state; and YCSB's key hash.
#pragma once

#include <cstdint>

#include "pmlab/common/random.hpp"

namespace pmlab::workload {

using pmlab::Random;

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
