#include "pmlab/primitives/log/popcount.hpp"

#include <bit>
#include <cstring>

namespace pmlab::primitives {
namespace {

__attribute__((target("popcnt"))) uint64_t popcount_hw(const unsigned char* b, size_t n) noexcept {
  uint64_t count = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    count += static_cast<uint64_t>(__builtin_popcountll(w));
  }
  for (; i < n; ++i) count += static_cast<uint64_t>(__builtin_popcount(b[i]));
  return count;
}

uint64_t popcount_sw(const unsigned char* b, size_t n) noexcept {
  uint64_t count = 0;
  for (size_t i = 0; i < n; ++i) count += static_cast<uint64_t>(std::popcount(b[i]));
  return count;
}

}  // namespace

uint64_t popcount_bytes(const void* p, size_t n) noexcept {
  // POPCNT is in every x86_64 CPU since 2008; the portable loop is the fallback for the rest.
  static const bool hw = __builtin_cpu_supports("popcnt");
  const auto* b = static_cast<const unsigned char*>(p);
  return hw ? popcount_hw(b, n) : popcount_sw(b, n);
}

}  // namespace pmlab::primitives
