#include "pmlab/persist/x86_64/nt_copy.hpp"

#include <immintrin.h>

namespace pmlab::persist::x86_64 {

void nt_copy_sse2(void* dst, const void* src, size_t len) noexcept {
  auto* d = static_cast<__m128i*>(dst);
  auto* s = static_cast<const __m128i*>(src);
  for (size_t i = 0; i < len / 16; i += 4) {
    __m128i a = _mm_loadu_si128(s + i), b = _mm_loadu_si128(s + i + 1);
    __m128i c = _mm_loadu_si128(s + i + 2), e = _mm_loadu_si128(s + i + 3);
    _mm_stream_si128(d + i, a);
    _mm_stream_si128(d + i + 1, b);
    _mm_stream_si128(d + i + 2, c);
    _mm_stream_si128(d + i + 3, e);
  }
}

__attribute__((target("avx2"))) void nt_copy_avx2(void* dst, const void* src, size_t len) noexcept {
  auto* d = static_cast<__m256i*>(dst);
  auto* s = static_cast<const __m256i*>(src);
  for (size_t i = 0; i < len / 32; i += 2) {
    __m256i a = _mm256_loadu_si256(s + i), b = _mm256_loadu_si256(s + i + 1);
    _mm256_stream_si256(d + i, a);
    _mm256_stream_si256(d + i + 1, b);
  }
  _mm256_zeroupper();
}

__attribute__((target("avx512f"))) void nt_copy_avx512(void* dst, const void* src, size_t len) noexcept {
  auto* d = static_cast<__m512i*>(dst);
  auto* s = static_cast<const __m512i*>(src);
  for (size_t i = 0; i < len / 64; ++i) _mm512_stream_si512(d + i, _mm512_loadu_si512(s + i));
  _mm256_zeroupper();
}

}  // namespace pmlab::persist::x86_64
