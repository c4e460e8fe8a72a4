#include "pmlab/bench/access_pattern.hpp"
#include "pmlab/common/random.hpp"

#include <stdexcept>

namespace pmlab::bench {

Pattern parse_pattern(const std::string& text) {
  if (text == "seq") return Pattern::seq;
  if (text == "rand") return Pattern::rand;
  if (text == "same") return Pattern::same;
  throw std::invalid_argument("unknown access pattern '" + text + "'");
}

std::vector<uint64_t> make_offsets(Pattern pattern, uint64_t span, uint64_t access, size_t count, uint64_t seed) {
  if (access == 0 || span < access) throw std::invalid_argument("access size must be non-zero and fit the span");
  size_t n = 1;
  while (n < count) n <<= 1;
  std::vector<uint64_t> out(n);
  const uint64_t slots = span / access;
  uint64_t state = seed;
  for (size_t i = 0; i < n; ++i) {
    switch (pattern) {
      case Pattern::seq: out[i] = (i % slots) * access; break;
      case Pattern::rand: out[i] = (splitmix64(state) % slots) * access; break;
      case Pattern::same: out[i] = 0; break;
    }
  }
  return out;
}

}  // namespace pmlab::bench
