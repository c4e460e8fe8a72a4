#include "pmlab/primitives/log/popcount.hpp"

#include <immintrin.h>

#include <bit>
#include <cstring>

#include "pmlab/platform/cpu.hpp"

namespace pmlab::primitives {
namespace popcount_kernels {

// Four counts in flight: one chain of adds would wait on each POPCNT's latency.
__attribute__((target("popcnt"))) uint64_t scalar(uint64_t word0, uint64_t word1, const unsigned char* b,
                                                  size_t n) noexcept {
  uint64_t c0 = static_cast<uint64_t>(__builtin_popcountll(word0));
  uint64_t c1 = static_cast<uint64_t>(__builtin_popcountll(word1));
  uint64_t c2 = 0, c3 = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    uint64_t w[4];
    std::memcpy(w, b + i, 32);
    c0 += static_cast<uint64_t>(__builtin_popcountll(w[0]));
    c1 += static_cast<uint64_t>(__builtin_popcountll(w[1]));
    c2 += static_cast<uint64_t>(__builtin_popcountll(w[2]));
    c3 += static_cast<uint64_t>(__builtin_popcountll(w[3]));
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    c0 += static_cast<uint64_t>(__builtin_popcountll(w));
  }
  for (; i < n; ++i) c1 += static_cast<uint64_t>(__builtin_popcount(b[i]));
  return c0 + c1 + c2 + c3;
}

// 64 bytes per instruction where the CPU has VPOPCNTQ; the last partial line by a masked load, which
// reads no byte outside the range.
__attribute__((target("avx512f,avx512bw,avx512vpopcntdq"))) uint64_t vector(uint64_t word0, uint64_t word1,
                                                                            const unsigned char* b, size_t n) noexcept {
  __m512i counts = _mm512_popcnt_epi64(
      _mm512_set_epi64(0, 0, 0, 0, 0, 0, static_cast<long long>(word1), static_cast<long long>(word0)));
  size_t i = 0;
  for (; i + 64 <= n; i += 64) counts = _mm512_add_epi64(counts, _mm512_popcnt_epi64(_mm512_loadu_si512(b + i)));
  if (i < n) {
    const __mmask64 tail = (__mmask64{1} << (n - i)) - 1;
    counts = _mm512_add_epi64(counts, _mm512_popcnt_epi64(_mm512_maskz_loadu_epi8(tail, b + i)));
  }
  alignas(64) uint64_t lanes[8];  // (GCC 12's _mm512_reduce_add_epi64 trips -Wuninitialized)
  _mm512_store_si512(lanes, counts);
  uint64_t count = 0;
  for (uint64_t lane : lanes) count += lane;
  return count;
}

uint64_t portable(uint64_t word0, uint64_t word1, const unsigned char* b, size_t n) noexcept {
  uint64_t count = static_cast<uint64_t>(std::popcount(word0) + std::popcount(word1));
  for (size_t i = 0; i < n; ++i) count += static_cast<uint64_t>(std::popcount(b[i]));
  return count;
}

namespace {
bool cpu_runs_vector(const platform::CpuFeatures& cpu) noexcept { return cpu.avx512bw && cpu.avx512vpopcntdq; }
}  // namespace

std::vector<Kernel> runnable() {
  std::vector<Kernel> out{portable};
  if (__builtin_cpu_supports("popcnt")) out.push_back(scalar);
  if (cpu_runs_vector(platform::CpuFeatures::detect_raw())) out.push_back(vector);
  return out;
}

// POPCNT is in every x86_64 CPU since 2008; the portable loop is the fallback for the rest.
// PMLAB_NO_AVX512 turns the vector path off, as it does the non-temporal copy kernels.
Kernel choose() noexcept {
  if (cpu_runs_vector(platform::CpuFeatures::host())) return vector;
  return __builtin_cpu_supports("popcnt") ? scalar : portable;
}

}  // namespace popcount_kernels

}  // namespace pmlab::primitives
