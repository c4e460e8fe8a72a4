// Address streams for benchmarks, generated before the timed loop (never inside it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pmlab::bench {

// same: every access at the span's first `access` bytes, the pattern of a counter or a size field that is
// persisted over and over ([PMemIO] §2.3, Fig. 4: persisting one line twice in a row waits for the first).
enum class Pattern { seq, rand, same };
Pattern parse_pattern(const std::string& text);  // "seq" | "rand" | "same" (validated by the param spec)

// Offsets of `count` accesses of `access` bytes inside [0, span): consecutive for seq (wrapping),
// uniformly random and `access`-aligned for rand, all 0 for same. count is rounded up to a power of two
// so the loop can index with a mask. Reproducible from the seed.
std::vector<uint64_t> make_offsets(Pattern pattern, uint64_t span, uint64_t access, size_t count, uint64_t seed);

}  // namespace pmlab::bench
