// What every structure is built from; the single place for their defaults.
#pragma once

#include <cstdint>

namespace pmlab::ds {

struct Options {
  uint32_t value_bytes = 128;  ///< bytes of each value (YCSB-style records: 8-byte key, 128-byte value)
  uint64_t capacity = 1024;    ///< records the structure must hold (array slots, hashtable buckets)
  bool concurrent = false;     ///< take locks: more than one thread uses the structure
  uint32_t leaf_slots = 32;    ///< B+-tree leaf capacity, 4..32 (the crash test uses few to force splits)
};

// Fibonacci hashing: spreads ordered keys (insertorder=ordered) as well as hashed ones.
inline uint64_t mix_key(uint64_t key) noexcept { return key * 0x9E3779B97F4A7C15ULL; }

}  // namespace pmlab::ds
