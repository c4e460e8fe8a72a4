// The random source of every workload generator (pmlab::Random, common/random.hpp), seeded per thread, so
// a stream is reproducible from (seed, thread) and threads never share state; and YCSB's key hash.
#pragma once

#include <cstdint>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/random.hpp"

namespace pmlab::workload {

using pmlab::Random;

// YCSB's key hash, as Java YCSB 0.17's Utils.fnvhash64: FNV-1a over the eight bytes of a value, low byte
// first, then Math.abs of the result read as a Java long. It scrambles zipfian ranks and turns record
// numbers into hashed keys; the abs matters: a hash with its top bit set lands elsewhere modulo the item
// count (Java's Long.MIN_VALUE, which abs leaves negative, is kept as its bit pattern).
constexpr uint64_t fnv_hash64(uint64_t value) noexcept {
  const uint64_t h = fnv1a64_word(value);
  return h >> 63 && h != (uint64_t{1} << 63) ? ~h + 1 : h;
}

}  // namespace pmlab::workload
