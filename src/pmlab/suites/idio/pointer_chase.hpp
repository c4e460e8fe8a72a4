// A dependent-load chain over a working set ([PMemIO] §2.3, Fig. 3): the loads of a latency test must not
// overlap, so each one's address is the value the one before it read, and no line is visited twice before
// every line was, so a working set larger than a cache cannot be served by it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmlab::suites::idio {

inline constexpr size_t kChaseLineBytes = 64;

// Links `lines` cache lines at `base` into one cycle in a random order (Sattolo's algorithm: a permutation
// with a single cycle): the first word of each line holds the address of the next. Returns the first line.
std::byte* build_chase(std::byte* base, size_t lines, uint64_t seed);

// The line after `line` in the chain: one load whose address the next load needs (inline assembly, so the
// compiler can neither drop nor reorder it).
inline const std::byte* chase_step(const std::byte* line) noexcept {
  const std::byte* next;
  __asm__ volatile("movq (%1), %0" : "=r"(next) : "r"(line) : "memory");
  return next;
}

}  // namespace pmlab::suites::idio
