#include "pmlab/persist/x86_64/nt_copy.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

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

namespace {
// Bytes [lo, hi) of a line, lo < hi <= 64.
inline uint64_t byte_mask(uint64_t lo, uint64_t hi) noexcept {
  const uint64_t below_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return below_hi & ~((uint64_t{1} << lo) - 1);
}
}  // namespace

__attribute__((target("avx512f,avx512bw"))) void nt_record_avx512bw(void* line, const void* prefix, uint64_t word0,
                                                                    uint64_t word1, const void* body, uint64_t shape,
                                                                    void* last_line) noexcept {
  const LineRecord r = unpack_record(prefix, word0, word1, body, shape);
  const uint64_t head_begin = r.prefix_len;
  const uint64_t word_count = r.word_count;
  const uint64_t body_begin = head_begin + 8 * word_count;
  const uint64_t end = r.end();
  // The words sit at 8-byte boundaries, a qword lane each, in the first line or (the second word after
  // a 56-byte prefix) at the start of the second.
  const unsigned word_lane = static_cast<unsigned>(head_begin / 8);
  const unsigned word0_lanes = word_count >= 1 ? 1u << word_lane : 0u;
  const unsigned word1_lanes = word_count >= 2 ? 2u << word_lane : 0u;  // bit 8: the second line's lane 0
  // Where byte `from` of the record would be in the body, were the body longer (a masked load never
  // touches the bytes outside it).
  const uintptr_t body_origin = reinterpret_cast<uintptr_t>(body) - body_begin;
  auto* dst = static_cast<unsigned char*>(line);
  // Not even a masked load without a prefix: one with an empty mask still waits for the store that wrote
  // the buffer last (the previous record's last line, behind the fence).
  __m512i v = head_begin > 0 ? _mm512_maskz_loadu_epi8(byte_mask(0, head_begin), prefix) : _mm512_setzero_si512();
  v = _mm512_mask_set1_epi64(v, static_cast<__mmask8>(word0_lanes), static_cast<long long>(word0));
  v = _mm512_mask_set1_epi64(v, static_cast<__mmask8>(word1_lanes), static_cast<long long>(word1));
  for (uint64_t from = 0; from < end; from += 64) {
    if (from == 64) v = _mm512_maskz_set1_epi64(static_cast<__mmask8>(word1_lanes >> 8), static_cast<long long>(word1));
    else if (from > 64) v = _mm512_setzero_si512();
    const uint64_t lo = std::max(body_begin, from), hi = std::min(end, from + 64);
    if (lo < hi)
      v = _mm512_mask_loadu_epi8(v, byte_mask(lo - from, hi - from), reinterpret_cast<const void*>(body_origin + from));
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + from), v);
  }
  if (last_line != nullptr) _mm512_storeu_si512(last_line, end % 64 != 0 ? v : _mm512_setzero_si512());
  _mm256_zeroupper();
}

}  // namespace pmlab::persist::x86_64
