// Set bits in a byte range: the validity count of zero logging ([PMemIO] §3.3.1). On a zeroed medium bits
// only go from 0 to 1 while a record is written, so a record missing any part reads with a lower count.
// The page micro-log validates its records the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pmlab::primitives {

// The kernels behind popcount_bytes, one of which it picks once (exposed for tests).
namespace popcount_kernels {
using Kernel = uint64_t (*)(uint64_t word0, uint64_t word1, const unsigned char* p, size_t n) noexcept;
// The fastest this CPU runs (PMLAB_NO_AVX512 turns the vector one off).
Kernel choose() noexcept;
uint64_t portable(uint64_t word0, uint64_t word1, const unsigned char* p, size_t n) noexcept;
uint64_t scalar(uint64_t word0, uint64_t word1, const unsigned char* p, size_t n) noexcept;  // needs POPCNT
// Needs AVX-512 F, BW and VPOPCNTDQ.
uint64_t vector(uint64_t word0, uint64_t word1, const unsigned char* p, size_t n) noexcept;
// The kernels this CPU can run, portable first.
std::vector<Kernel> runnable();
}  // namespace popcount_kernels

// The bits of two words and of a byte range, in one pass: a record's header words and its payload.
// Inline, so a zero-log append calls the kernel directly (a call frame more is stores that wait for the
// previous fence's drain, see Log::reserve). Chosen on first use, not at static initialization: other
// objects' constructors may count bits.
inline uint64_t popcount_bytes(uint64_t word0, uint64_t word1, const void* p, size_t n) noexcept {
  static const popcount_kernels::Kernel kernel = popcount_kernels::choose();
  return kernel(word0, word1, static_cast<const unsigned char*>(p), n);
}
inline uint64_t popcount_bytes(const void* p, size_t n) noexcept { return popcount_bytes(0, 0, p, n); }

}  // namespace pmlab::primitives
