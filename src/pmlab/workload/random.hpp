// The random source of every workload generator (pmlab::Random, common/random.hpp), seeded per thread, so
// a stream is reproducible from (seed, thread) and threads never share state; and YCSB's key hash.
#pragma once

#include <cstdint>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/random.hpp"

namespace pmlab::workload {

using pmlab::Random;

// YCSB's key hash: FNV-1a over the eight bytes of a value, low byte first; how it scrambles zipfian
// ranks and turns record numbers into hashed keys.
constexpr uint64_t fnv_hash64(uint64_t value) noexcept { return fnv1a64_word(value); }

}  // namespace pmlab::workload
