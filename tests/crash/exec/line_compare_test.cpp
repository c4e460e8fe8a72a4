#include "pmlab-trace/line_compare.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace pmlab_trace::detail {
namespace {

constexpr size_t kLine = pmlab::crash::exec::trace::kLineBytes;
constexpr size_t kLines = pmlab::crash::exec::trace::kPageBytes / kLine;

// What both ways must find: a line is changed when any of its bytes is.
uint64_t changed_lines_bytewise(const std::byte* a, const std::byte* b, size_t lines) {
  uint64_t changed = 0;
  for (size_t k = 0; k < lines; ++k)
    for (size_t i = 0; i < kLine; ++i)
      if (a[k * kLine + i] != b[k * kLine + i]) changed |= uint64_t{1} << k;
  return changed;
}

bool has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}

// Every byte position of every line, alone, one bit flipped; then random sets of changed lines, with pages
// at offsets that are not 32-byte aligned (a shadow and a mapping need not share alignment) and runs of
// fewer lines than a page (a write-back's range).
TEST(ExecLineCompare, BothWaysFindEveryChangedLineAndNoOther) {
  std::mt19937_64 rng(7);
  std::vector<std::byte> a_store(kLines * kLine + 64), b_store(kLines * kLine + 64);
  for (auto& x : a_store) x = static_cast<std::byte>(rng());
  const bool avx2 = has_avx2();
  for (size_t shift_a : {0, 1, 32}) {
    for (size_t shift_b : {0, 7}) {
      std::byte* a = a_store.data() + shift_a;
      std::byte* b = b_store.data() + shift_b;
      std::memcpy(b, a, kLines * kLine);
      EXPECT_EQ(changed_lines_memcmp(a, b, kLines), 0u);
      if (avx2) { EXPECT_EQ(changed_lines_avx2(a, b, kLines), 0u); }
      for (size_t at = 0; at < kLines * kLine; ++at) {
        const auto bit = static_cast<std::byte>(1u << (at % 8));
        b[at] ^= bit;
        const uint64_t want = uint64_t{1} << (at / kLine);
        ASSERT_EQ(changed_lines_memcmp(a, b, kLines), want) << "byte " << at;
        if (avx2) { ASSERT_EQ(changed_lines_avx2(a, b, kLines), want) << "byte " << at; }
        b[at] ^= bit;
      }
      for (int round = 0; round < 2000; ++round) {
        std::memcpy(b, a, kLines * kLine);
        const size_t lines = 1 + rng() % kLines;
        const uint64_t lines_to_change = rng() & rng();
        for (size_t k = 0; k < kLines; ++k)
          if ((lines_to_change >> k & 1) != 0) b[k * kLine + rng() % kLine] ^= static_cast<std::byte>(1 + rng() % 255);
        const uint64_t want = changed_lines_bytewise(a, b, lines);
        ASSERT_EQ(changed_lines_memcmp(a, b, lines), want) << "round " << round;
        if (avx2) { ASSERT_EQ(changed_lines_avx2(a, b, lines), want) << "round " << round; }
      }
    }
  }
  if (!avx2) GTEST_SKIP() << "this CPU has no AVX2: only the memcmp way was compared";
}

}  // namespace
}  // namespace pmlab_trace::detail
