// The bit counts that validate zero-log entries and micro-log records: every kernel this CPU runs agrees
// with the portable one for every length and alignment, header words included.
#include "pmlab/primitives/log/popcount.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace pmlab::primitives {
namespace {

TEST(Popcount, EveryKernelCountsLikeThePortableOne) {
  std::vector<unsigned char> bytes(512 + 8);
  uint64_t seed = 0x51ed;
  for (unsigned char& b : bytes) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    b = static_cast<unsigned char>(seed >> 56);
  }
  const auto kernels = popcount_kernels::runnable();
  ASSERT_GE(kernels.size(), 1u);
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; n <= 512; n += (n < 130 ? 1 : 61)) {
      const uint64_t want = popcount_kernels::portable(0x8000000000000001ULL, ~uint64_t{0}, bytes.data() + offset, n);
      for (auto kernel : kernels)
        ASSERT_EQ(kernel(0x8000000000000001ULL, ~uint64_t{0}, bytes.data() + offset, n), want)
            << "offset " << offset << " length " << n;
    }
  }
  EXPECT_EQ(popcount_kernels::portable(3, 0, nullptr, 0), 2u);
  const unsigned char all[3] = {0xff, 0x0f, 0x01};
  EXPECT_EQ(popcount_bytes(all, sizeof all), 13u);
  EXPECT_EQ(popcount_bytes(1, 6, all, sizeof all), 16u);
}

}  // namespace
}  // namespace pmlab::primitives
