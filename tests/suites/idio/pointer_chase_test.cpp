// The dependent-load chain: one cycle through every line, each visited once per cycle, in an order a
// prefetcher cannot follow.
#include "pmlab/suites/idio/pointer_chase.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>

namespace pmlab::suites::idio {
namespace {

struct FreeBytes {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};

struct Lines {
  explicit Lines(size_t n)
      : memory(static_cast<std::byte*>(std::aligned_alloc(kChaseLineBytes, n * kChaseLineBytes))) {}
  std::unique_ptr<std::byte, FreeBytes> memory;
  size_t index(const std::byte* line) const { return static_cast<size_t>(line - memory.get()) / kChaseLineBytes; }
};

TEST(PointerChase, VisitsEveryLineOncePerCycle) {
  for (size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{64}, size_t{4096}}) {
    Lines lines(n);
    const std::byte* start = build_chase(lines.memory.get(), n, 42);
    std::vector<int> visits(n, 0);
    const std::byte* line = start;
    for (size_t k = 0; k < n; ++k) {
      ASSERT_EQ(reinterpret_cast<uintptr_t>(line) % kChaseLineBytes, 0u);
      const size_t i = lines.index(line);
      ASSERT_LT(i, n);
      ++visits[i];
      line = chase_step(line);
    }
    EXPECT_EQ(line, start) << n << " lines: the chain is not one cycle of all of them";
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(visits[i], 1) << "line " << i << " of " << n;
  }
}

TEST(PointerChase, OrderIsNotSequential) {
  constexpr size_t n = 4096;
  Lines lines(n);
  const std::byte* line = build_chase(lines.memory.get(), n, 7);
  size_t next_door = 0;
  for (size_t k = 0; k < n; ++k) {
    const std::byte* next = chase_step(line);
    next_door += lines.index(next) == lines.index(line) + 1;
    line = next;
  }
  EXPECT_LT(next_door, n / 64);  // a random cycle steps to the adjacent line about once
}

TEST(PointerChase, SeedChangesTheOrder) {
  constexpr size_t n = 256;
  Lines a(n), b(n);
  build_chase(a.memory.get(), n, 1);
  build_chase(b.memory.get(), n, 2);
  size_t same = 0;
  for (size_t i = 0; i < n; ++i)
    same += a.index(chase_step(a.memory.get() + i * kChaseLineBytes)) ==
            b.index(chase_step(b.memory.get() + i * kChaseLineBytes));
  EXPECT_LT(same, n / 8);
}

}  // namespace
}  // namespace pmlab::suites::idio
