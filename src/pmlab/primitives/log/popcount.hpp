// Set bits in a byte range: the validity count of zero logging (seed 002 §3.3.1). On a zeroed medium bits
// only go from 0 to 1 while a record is written, so a record missing any part reads with a lower count.
// The page micro-log validates its records the same way.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmlab::primitives {

uint64_t popcount_bytes(const void* p, size_t n) noexcept;

}  // namespace pmlab::primitives
