#include "pmlab/suites/idio/common.hpp"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <numeric>

#include "pmlab/common/random.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/platform/topology.hpp"

namespace pmlab::suites::idio {

int all_cpus() { return static_cast<int>(platform::allowed_cpus().size()); }

std::vector<std::string> thread_sweep() {
  const int n = all_cpus();
  std::vector<std::string> out;
  for (int t = 1; t < n; t *= 2) out.push_back(std::to_string(t));
  out.push_back(std::to_string(n));
  return out;
}

std::vector<std::string> thread_ends() {
  const int n = all_cpus();
  if (n == 1) return {"1"};
  return {"1", std::to_string(n)};
}

uint64_t stream_span() {
  const uint64_t want = std::max<uint64_t>(64ULL << 20, 2 * platform::llc_bytes());
  return std::bit_ceil(want);
}

std::vector<uint32_t> permutation(size_t n, uint64_t seed) {
  std::vector<uint32_t> out(n);
  std::iota(out.begin(), out.end(), 0u);
  uint64_t state = seed;
  for (size_t i = n; i > 1; --i) {  // Fisher-Yates
    const size_t j = static_cast<size_t>(splitmix64(state) % i);
    std::swap(out[i - 1], out[j]);
  }
  return out;
}

std::vector<uint64_t> stream_offsets(bench::Pattern pattern, uint64_t span, uint64_t size, uint64_t seed) {
  const size_t slots = std::bit_floor(static_cast<size_t>(span / size));
  std::vector<uint64_t> out(slots);
  if (pattern == bench::Pattern::seq) {
    for (size_t i = 0; i < slots; ++i) out[i] = i * size;
  } else {
    const auto order = permutation(slots, seed);
    for (size_t i = 0; i < slots; ++i) out[i] = uint64_t{order[i]} * size;
  }
  return out;
}

namespace {

// Loads only: the data is not needed, and folding it (an XOR per line, as the AVX2 and SSE2 kernels do) costs
// bandwidth on a core whose 512-bit ALU ops take two passes (docs/idio.md); asm keeps the loads the compiler
// would otherwise drop. Returns the range's first word, so the caller still has a value that depends on the
// memory.
__attribute__((target("avx512f"))) uint64_t read_avx512(const std::byte* p, size_t len) noexcept {
  size_t o = 0;
  for (; o + 512 <= len; o += 512)
    __asm__ volatile(
        "vmovdqa64 (%0), %%zmm16\n\tvmovdqa64 64(%0), %%zmm17\n\tvmovdqa64 128(%0), %%zmm18\n\t"
        "vmovdqa64 192(%0), %%zmm19\n\tvmovdqa64 256(%0), %%zmm20\n\tvmovdqa64 320(%0), %%zmm21\n\t"
        "vmovdqa64 384(%0), %%zmm22\n\tvmovdqa64 448(%0), %%zmm23"
        :
        : "r"(p + o)
        : "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "memory");
  for (; o < len; o += 64) __asm__ volatile("vmovdqa64 (%0), %%zmm16" : : "r"(p + o) : "xmm16", "memory");
  return *reinterpret_cast<const uint64_t*>(p);
}

__attribute__((target("avx2"))) uint64_t read_avx2(const std::byte* p, size_t len) noexcept {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  size_t o = 0;
  for (; o + 128 <= len; o += 128) {
    a = _mm256_xor_si256(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o)));
    b = _mm256_xor_si256(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o + 32)));
    c = _mm256_xor_si256(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o + 64)));
    d = _mm256_xor_si256(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o + 96)));
  }
  for (; o < len; o += 32) a = _mm256_xor_si256(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + o)));
  a = _mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d));
  return static_cast<uint64_t>(_mm256_extract_epi64(a, 0) | _mm256_extract_epi64(a, 1) | _mm256_extract_epi64(a, 2) |
                               _mm256_extract_epi64(a, 3));
}

uint64_t read_sse2(const std::byte* p, size_t len) noexcept {
  __m128i a = _mm_setzero_si128(), b = a;
  for (size_t o = 0; o < len; o += 32) {
    a = _mm_xor_si128(a, _mm_load_si128(reinterpret_cast<const __m128i*>(p + o)));
    b = _mm_xor_si128(b, _mm_load_si128(reinterpret_cast<const __m128i*>(p + o + 16)));
  }
  a = _mm_xor_si128(a, b);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(a) | _mm_cvtsi128_si64(_mm_unpackhi_epi64(a, a)));
}

__attribute__((target("avx512f"))) void write_avx512(std::byte* dst, const std::byte* src, size_t len) noexcept {
  for (size_t o = 0; o < len; o += 64) _mm512_store_si512(dst + o, _mm512_loadu_si512(src + o));
}

__attribute__((target("avx2"))) void write_avx2(std::byte* dst, const std::byte* src, size_t len) noexcept {
  for (size_t o = 0; o < len; o += 32)
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst + o),
                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + o)));
}

void write_sse2(std::byte* dst, const std::byte* src, size_t len) noexcept {
  for (size_t o = 0; o < len; o += 16)
    _mm_store_si128(reinterpret_cast<__m128i*>(dst + o), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + o)));
}

}  // namespace

WriteFn write_kernel() {
  const auto& cpu = platform::CpuFeatures::host();
  if (cpu.avx512f) return write_avx512;
  if (cpu.avx2) return write_avx2;
  return write_sse2;
}

ReadFn read_kernel() {
  const auto& cpu = platform::CpuFeatures::host();
  if (cpu.avx512f) return read_avx512;
  if (cpu.avx2) return read_avx2;
  return read_sse2;
}

const char* read_kernel_name() {
  const auto& cpu = platform::CpuFeatures::host();
  return cpu.avx512f ? "avx512" : cpu.avx2 ? "avx2" : "sse2";
}

std::vector<std::string> size_strings(uint64_t from, uint64_t to) {
  std::vector<std::string> out;
  for (uint64_t s = from; s <= to; s *= 2) out.push_back(std::to_string(s));
  return out;
}

void add_latency_metrics(bench::RunContext& ctx, const record::Histogram& ticks) {
  const platform::Clock& clock = platform::Clock::get();
  auto ns = [&](double t) { return t / clock.ticks_per_ns(); };
  ctx.timed_metric("latency_avg", ns(ticks.mean()));
  ctx.timed_metric("latency_p50", ns(ticks.quantile(0.50)));
  ctx.timed_metric("latency_p99", ns(ticks.quantile(0.99)));
  ctx.timed_metric("latency_p999", ns(ticks.quantile(0.999)));
  ctx.metric("latency_max", ns(static_cast<double>(ticks.max())), "ns");
  ctx.metric("ops", static_cast<double>(ticks.count()), "count");
}

bench::ParamSpec adr_param() {
  return bench::std_params::choice("domain", "durability domain (adr: p-stores flush)", {"adr"}, {"adr"});
}

bench::ParamSpec pattern_param(std::vector<std::string> quick) {
  return bench::std_params::choice("pattern", "seq: consecutive; rand: a random permutation of size-aligned slots",
                                   {"seq", "rand"}, {"seq", "rand"}, std::move(quick));
}

bench::ParamSpec fio_param() {
  return bench::std_params::choice(
      "fio",
      "on: also run fio's libpmem engine with the same access size, pattern and threads on a file beside the "
      "pool (same filesystem) and print its bandwidth beside ours",
      {"off", "on"}, {"off"});
}

}  // namespace pmlab::suites::idio
