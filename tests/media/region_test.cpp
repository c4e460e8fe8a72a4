// DRAM buffers: base pages by default, 2 MiB transparent huge pages on request, and the smaps reading
// that tells which one a mapping got.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "pmlab/media/region.hpp"

namespace pmlab::media {
namespace {

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(f, text);
  return text;
}

TEST(DramBuffer, BasePagesAreWritableAndNotHuge) {
  DramBuffer b;
  ASSERT_TRUE(b.reserve(8 << 20).ok());
  const Region r = b.region();
  ASSERT_GE(r.size, size_t{8} << 20);
  r.base[r.size - 1] = std::byte{7};
  // Base pages are the default (as a tmpfs pool has them), unless the kernel gives every mapping THP.
  if (thp_mode().find("[always]") == std::string::npos) {
    EXPECT_EQ(huge_mapped_bytes(r.base), 0u);
  }
}

TEST(DramBuffer, HugePagesAreAlignedAndBackedWhereTheKernelGrantsThem) {
  DramBuffer b;
  ASSERT_TRUE(b.reserve(6 << 20, Pages::huge).ok());
  const Region r = b.region();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r.base) % (2 << 20), 0u);
  EXPECT_EQ(r.size % (2 << 20), 0u);
  r.base[r.size - 1] = std::byte{7};
  if (thp_mode().find("[never]") != std::string::npos) GTEST_SKIP() << "transparent huge pages are off here";
  EXPECT_GE(huge_mapped_bytes(r.base), r.size / 2);
  // Asking for base pages again replaces the mapping.
  ASSERT_TRUE(b.reserve(4 << 20).ok());
  if (thp_mode().find("[always]") == std::string::npos) {
    EXPECT_EQ(huge_mapped_bytes(b.region().base), 0u);
  }
}

TEST(DramBuffer, AnAddressOutsideEveryMappingHasNoHugeBytes) {
  EXPECT_EQ(huge_mapped_bytes(reinterpret_cast<const void*>(uintptr_t{16})), 0u);
}

}  // namespace
}  // namespace pmlab::media
