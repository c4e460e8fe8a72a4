// Pieces every family of the idiosyncrasy suite shares [PMIdioBench]: the sweeps, the spans
// that make streams reach memory, address orders that defeat prefetchers, and the kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pmlab/bench/access_pattern.hpp"
#include "pmlab/bench/case.hpp"

namespace pmlab::suites::idio {

inline constexpr const char* kSuite = "idio";

// 1, 2, 4, … and the number of CPUs this process may use (PMIdioBench hard-codes 28 cores; we ask).
std::vector<std::string> thread_sweep();
// {"1", "<all CPUs>"}: the two ends of the sweep, for --quick.
std::vector<std::string> thread_ends();
int all_cpus();

// Per-thread span of bandwidth runs: twice the nominal last-level cache and at least 64 MiB, a power of
// two, so streams go to memory instead of hitting lines the cache still holds.
uint64_t stream_span();

// Every slot once, in a random order: no repeats for a cache to exploit, no stride for a prefetcher.
std::vector<uint32_t> permutation(size_t n, uint64_t seed);

// Offsets of the accesses of one thread inside [0, span): consecutive for seq, a random permutation of the
// size-aligned slots for rand. The count is a power of two (indexed with a mask in the timed loop).
std::vector<uint64_t> stream_offsets(bench::Pattern pattern, uint64_t span, uint64_t size, uint64_t seed);

// Reads [p, p+len) with the widest vector loads the CPU has (len a multiple of 64, p 64-byte aligned) and
// returns a value folded from every byte, so no load can be elided.
using ReadFn = uint64_t (*)(const std::byte* p, size_t len) noexcept;
ReadFn read_kernel();
const char* read_kernel_name();

// Writes [dst, dst+len) from src with ordinary (cached, write-allocate) vector stores — not memcpy, whose
// large-copy paths may switch to non-temporal or no-RFO stores behind our back.
using WriteFn = void (*)(std::byte* dst, const std::byte* src, size_t len) noexcept;
WriteFn write_kernel();

// One 8-byte load whose latency is the memory's, not the sanitizer's (inline assembly is not instrumented).
inline uint64_t load_word(const void* p) noexcept {
  uint64_t v;
  __asm__ volatile("movq (%1), %0" : "=r"(v) : "r"(p) : "memory");
  return v;
}

// Sizes as sweep strings, e.g. {"64", "128", …}.
std::vector<std::string> size_strings(uint64_t from, uint64_t to);

// latency_avg, _p50, _p99, _p999, _max (ns) from a histogram of timer ticks, for cases that time each
// operation themselves (their loop cannot be ThreadState::measure's: it must not warm up or repeat).
void add_latency_metrics(bench::RunContext& ctx, const record::Histogram& ticks);

// "domain", fixed to adr: every p-store of these families flushes (eADR is I8's subject).
bench::ParamSpec adr_param();
// "pattern": seq (consecutive) or rand (a random permutation of the size-aligned slots).
bench::ParamSpec pattern_param(std::vector<std::string> quick = {"seq", "rand"});

// The standard "fio" parameter of the bandwidth families: off, or also run fio's libpmem engine.
bench::ParamSpec fio_param();

}  // namespace pmlab::suites::idio
