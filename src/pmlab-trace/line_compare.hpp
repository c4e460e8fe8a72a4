// Which lines of a page changed: the one pass every capture and every base page makes over a page's bytes.
// Internal to the runtime (src/pmlab-trace); a header so that a test can hold both ways of comparing
// against a byte-by-byte reference, since a machine without AVX2 runs the one this machine never does.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pmlab/crash/exec/trace_format.hpp"

namespace pmlab_trace::detail {

// Bit k: line k of the `lines` (at most 64) lines at `a` differs from line k at `b`. Every page a capture
// compares is read once, whole, and its changed lines come out of the same pass; with AVX2 the pass is as
// fast as memcmp's, which would stop at the first difference and leave the lines to a second pass.
__attribute__((target("avx2"))) inline uint64_t changed_lines_avx2(const std::byte* a, const std::byte* b,
                                                                   size_t lines) {
  constexpr size_t kLine = pmlab::crash::exec::trace::kLineBytes;
  uint64_t changed = 0;
  for (size_t k = 0; k < lines; ++k) {
    const auto* x = reinterpret_cast<const __m256i*>(a + k * kLine);
    const auto* y = reinterpret_cast<const __m256i*>(b + k * kLine);
    const __m256i d = _mm256_or_si256(_mm256_xor_si256(_mm256_loadu_si256(x), _mm256_loadu_si256(y)),
                                      _mm256_xor_si256(_mm256_loadu_si256(x + 1), _mm256_loadu_si256(y + 1)));
    changed |= uint64_t{_mm256_testz_si256(d, d) == 0} << k;
  }
  return changed;
}

// The same without AVX2: a memcmp a line.
inline uint64_t changed_lines_memcmp(const std::byte* a, const std::byte* b, size_t lines) {
  constexpr size_t kLine = pmlab::crash::exec::trace::kLineBytes;
  uint64_t changed = 0;
  for (size_t k = 0; k < lines; ++k) changed |= uint64_t{std::memcmp(a + k * kLine, b + k * kLine, kLine) != 0} << k;
  return changed;
}

}  // namespace pmlab_trace::detail
