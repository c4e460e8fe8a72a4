// core.overhead: the persistence vocabulary against the same work written with raw intrinsics, in the
// same run and thread, interleaved round by round so drift hits both alike. The target is a ratio of at
// most 1.05 (vocabulary time / raw time).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "pmlab/bench/access_pattern.hpp"
#include "pmlab/bench/case.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/cpu.hpp"

namespace pmlab::suites::core {
namespace {

using namespace bench;

constexpr double kTargetRatio = 1.05;

struct Stream {
  std::byte* base;
  const uint64_t* offsets;
  size_t mask;
  const unsigned char* source;
  size_t size;
};

// The raw peers: what a programmer writes by hand with the intrinsics. The flush loop is one template over
// the instruction: its target attribute only permits clflushopt and clwb, and each instantiation compiles to
// the loop with its one instruction, as a function written for it would. The non-temporal loops are one
// function per vector width.
template <persist::FlushInstruction F>
__attribute__((target("clflushopt,clwb"))) void raw_flush(const Stream& s, uint64_t first, uint64_t n) {
  for (uint64_t i = first; i < first + n; ++i) {
    auto* dst = reinterpret_cast<char*>(s.base + s.offsets[i & s.mask]);
    std::memcpy(dst, s.source, s.size);
    for (size_t o = 0; o < s.size; o += 64) {
      if constexpr (F == persist::FlushInstruction::clflush) _mm_clflush(dst + o);
      else if constexpr (F == persist::FlushInstruction::clflushopt) _mm_clflushopt(dst + o);
      else _mm_clwb(dst + o);
    }
    _mm_sfence();
  }
}

__attribute__((target("avx512f"))) void raw_nt_avx512(const Stream& s, uint64_t first, uint64_t n) {
  for (uint64_t i = first; i < first + n; ++i) {
    auto* dst = reinterpret_cast<__m512i*>(s.base + s.offsets[i & s.mask]);
    auto* src = reinterpret_cast<const __m512i*>(s.source);
    for (size_t k = 0; k < s.size / 64; ++k) _mm512_stream_si512(dst + k, _mm512_loadu_si512(src + k));
    _mm_sfence();
  }
}

__attribute__((target("avx2"))) void raw_nt_avx2(const Stream& s, uint64_t first, uint64_t n) {
  for (uint64_t i = first; i < first + n; ++i) {
    auto* dst = reinterpret_cast<__m256i*>(s.base + s.offsets[i & s.mask]);
    auto* src = reinterpret_cast<const __m256i*>(s.source);
    for (size_t k = 0; k < s.size / 32; ++k) _mm256_stream_si256(dst + k, _mm256_loadu_si256(src + k));
    _mm_sfence();
  }
}

void raw_nt_sse2(const Stream& s, uint64_t first, uint64_t n) {
  for (uint64_t i = first; i < first + n; ++i) {
    auto* dst = reinterpret_cast<__m128i*>(s.base + s.offsets[i & s.mask]);
    auto* src = reinterpret_cast<const __m128i*>(s.source);
    for (size_t k = 0; k < s.size / 16; ++k) _mm_stream_si128(dst + k, _mm_loadu_si128(src + k));
    _mm_sfence();
  }
}

void vocabulary(const persist::Persister& p, const Stream& s, uint64_t first, uint64_t n) {
  for (uint64_t i = first; i < first + n; ++i) p.copy_persist(s.base + s.offsets[i & s.mask], s.source, s.size);
}

using RawFn = void (*)(const Stream&, uint64_t, uint64_t);

RawFn raw_for(const persist::Persister& p) {
  switch (p.config().flush) {
    case persist::FlushInstruction::clflush: return raw_flush<persist::FlushInstruction::clflush>;
    case persist::FlushInstruction::clflushopt: return raw_flush<persist::FlushInstruction::clflushopt>;
    case persist::FlushInstruction::clwb: return raw_flush<persist::FlushInstruction::clwb>;
    case persist::FlushInstruction::ntstore: break;
  }
  // Same vector width as the vocabulary's kernel, so the comparison is of the layer, not the ISA.
  const std::string kernel = p.nt_kernel_name();
  if (kernel == "avx512") return raw_nt_avx512;
  if (kernel == "avx2") return raw_nt_avx2;
  return raw_nt_sse2;
}

void body(RunContext& ctx) {
  const persist::Persister& persister = ctx.persister();
  const uint64_t size = ctx.params().size("size");
  if (size % 64 != 0) ctx.fail("size must be a multiple of 64 (the raw loops write whole lines)");
  const uint64_t span = ctx.region().size & ~uint64_t{4095};
  const auto offsets = make_offsets(Pattern::seq, span, size, std::clamp<size_t>(span / size, 1 << 12, 1 << 20), 1);
  std::vector<unsigned char> source(size, 0x5a);
  const Stream stream{ctx.region().base, offsets.data(), offsets.size() - 1, source.data(), static_cast<size_t>(size)};
  const RawFn raw = raw_for(persister);
  const platform::Clock& clock = platform::Clock::get();
  // Many short rounds in the run's time rather than a few long ones: this VM's speed changes in spells
  // longer than a round, so most rounds' ratios fall inside one, and the median's interval, over more
  // rounds, is narrower than the spread of a few (docs/primitives.md, "Benchmarks and targets", measured
  // the same for the page flushers).
  const int rounds = ctx.quick() ? 21 : 45;

  ctx.run_threads([&](ThreadState&) {
    uint64_t next = 0;
    auto timed = [&](auto&& fn, uint64_t n) {
      const uint64_t t0 = platform::Clock::start();
      fn(next, n);
      const uint64_t t1 = platform::Clock::stop();
      next += n;
      return clock.to_ns(t1 - t0) / static_cast<double>(n);
    };
    auto run_raw = [&](uint64_t first, uint64_t n) { raw(stream, first, n); };
    auto run_vocab = [&](uint64_t first, uint64_t n) { vocabulary(persister, stream, first, n); };
    // Calibrate the phase length so the whole comparison takes about the run's duration.
    timed(run_raw, 1000);
    timed(run_vocab, 1000);
    const double trial_ns = timed(run_raw, 2000);
    const double phase_ns = ctx.control().duration_s * 1e9 / (2.0 * rounds);
    const uint64_t n = std::max<uint64_t>(200, static_cast<uint64_t>(phase_ns / std::max(trial_ns, 1.0)));
    std::vector<double> raw_ns, vocab_ns, ratios;
    for (int r = 0; r < rounds; ++r) {
      // Alternate which goes first, so neither always inherits the other's cache state.
      double a, b;
      if (r % 2 == 0) {
        a = timed(run_raw, n);
        b = timed(run_vocab, n);
      } else {
        b = timed(run_vocab, n);
        a = timed(run_raw, n);
      }
      raw_ns.push_back(a);
      vocab_ns.push_back(b);
      ratios.push_back(b / a);
    }
    ctx.metric("raw_ns_per_op", median(raw_ns), "ns");
    ctx.metric("vocabulary_ns_per_op", median(vocab_ns), "ns");
    ctx.metric_samples("overhead_ratio", ratios, "ratio");
    ctx.target("overhead_ratio", kTargetRatio, TargetDirection::at_most,
               "persistence vocabulary vs raw intrinsics (time per persist)");
    ctx.metric("rounds", rounds, "count");
    ctx.metric("ops_per_phase", static_cast<double>(n), "count");
  });
}

const CaseRegistration registration{CaseDef{
    .suite = "core",
    .name = "overhead",
    .summary = "vocabulary copy_persist vs the same loop with raw intrinsics (ratio, target <= 1.05)",
    .params = {std_params::medium(),
               // Under ADR both loops do the same work; other domains would compare unequal loops.
               std_params::choice("domain", "durability domain (adr only: the raw loop always flushes)", {"adr"},
                                  {"adr"}),
               std_params::flush({"clflush", "clflushopt", "clwb", "ntstore"}),
               std_params::size("size", "bytes persisted per operation (a multiple of 64)", {"64", "256", "4K"},
                                {"64", "4K"}, 64, 1 << 20)},
    .region_bytes = [](const Params&) { return uint64_t{64} << 20; },
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::core
