// Set bits in a byte range: the validity count of zero logging (seed 002 §3.3.1). On a zeroed medium bits
// only go from 0 to 1 while a record is written, so a record missing any part reads with a lower count.
// The page micro-log validates its records the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pmlab::primitives {

uint64_t popcount_bytes(const void* p, size_t n) noexcept;
// The bits of two words and of a byte range, in one pass: a record's header words and its payload.
uint64_t popcount_bytes(uint64_t word0, uint64_t word1, const void* p, size_t n) noexcept;

// The kernels behind them, one of which popcount_bytes picks once (exposed for tests).
namespace popcount_kernels {
using Kernel = uint64_t (*)(uint64_t word0, uint64_t word1, const unsigned char* p, size_t n) noexcept;
uint64_t portable(uint64_t word0, uint64_t word1, const unsigned char* p, size_t n) noexcept;
uint64_t scalar(uint64_t word0, uint64_t word1, const unsigned char* p, size_t n) noexcept;  // needs POPCNT
// Needs AVX-512 F, BW and VPOPCNTDQ.
uint64_t vector(uint64_t word0, uint64_t word1, const unsigned char* p, size_t n) noexcept;
// The kernels this CPU can run, portable first.
std::vector<Kernel> runnable();
}  // namespace popcount_kernels

}  // namespace pmlab::primitives
