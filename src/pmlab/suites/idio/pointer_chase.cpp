#include "pmlab/suites/idio/pointer_chase.hpp"

#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "pmlab/common/random.hpp"

namespace pmlab::suites::idio {

std::byte* build_chase(std::byte* base, size_t lines, uint64_t seed) {
  if (lines == 0) return nullptr;
  std::vector<uint32_t> next(lines);
  std::iota(next.begin(), next.end(), 0u);
  uint64_t state = seed;
  // Sattolo: j strictly below i, so the result is one cycle through every line (Fisher-Yates, which allows
  // j == i, would leave short cycles a chase could spin in).
  for (size_t i = lines - 1; i > 0; --i) std::swap(next[i], next[static_cast<size_t>(splitmix64(state) % i)]);
  for (size_t i = 0; i < lines; ++i) {
    std::byte* target = base + size_t{next[i]} * kChaseLineBytes;
    std::memcpy(base + i * kChaseLineBytes, &target, sizeof target);
  }
  return base;
}

}  // namespace pmlab::suites::idio
