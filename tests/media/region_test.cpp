// DRAM buffers: base pages by default, 2 MiB transparent huge pages on request, and the smaps reading
// that tells which one a mapping got; media as run parameters name them; memory bound to a NUMA node.
#include <gtest/gtest.h>

#include <algorithm>
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
  // Base pages (as a tmpfs pool has them) whatever the kernel's THP mode: also under `always`.
  EXPECT_EQ(mapping_pages(r.base).huge_bytes, 0u) << "THP " << thp_mode();
  EXPECT_GE(mapping_pages(r.base).bytes, r.size);
  EXPECT_TRUE(mapping_pages(r.base).has_flag("nh"));
}

TEST(DramBuffer, HugePagesAreAlignedAndBackedWhereTheKernelGrantsThem) {
  DramBuffer b;
  ASSERT_TRUE(b.reserve(6 << 20, Pages::huge).ok());
  const Region r = b.region();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r.base) % (2 << 20), 0u);
  EXPECT_EQ(r.size % (2 << 20), 0u);
  r.base[r.size - 1] = std::byte{7};
  if (thp_mode().find("[never]") != std::string::npos) GTEST_SKIP() << "transparent huge pages are off here";
  EXPECT_GE(mapping_pages(r.base).huge_bytes, r.size / 2);
  EXPECT_GE(mapping_pages(r.base).bytes, r.size);
  // Asking for base pages again replaces the mapping.
  ASSERT_TRUE(b.reserve(4 << 20).ok());
  EXPECT_EQ(mapping_pages(b.region().base).huge_bytes, 0u);
}

TEST(DramBuffer, ASmallerReservationOfTheSamePagesKeepsTheMapping) {
  DramBuffer b;
  ASSERT_TRUE(b.reserve(4 << 20).ok());
  const Region first = b.region();
  first.base[0] = std::byte{42};
  ASSERT_TRUE(b.reserve(1 << 20).ok());
  EXPECT_EQ(b.region().base, first.base);
  EXPECT_EQ(b.region().size, first.size);
  EXPECT_EQ(b.region().base[0], std::byte{42});
  ASSERT_TRUE(b.reserve(8 << 20).ok());  // larger: a new mapping, of the size asked for
  EXPECT_GE(b.region().size, size_t{8} << 20);
}

TEST(DramBuffer, AnAddressOutsideEveryMappingHasNoMapping) {
  const MappingPages none = mapping_pages(reinterpret_cast<const void*>(uintptr_t{16}));
  EXPECT_EQ(none.bytes, 0u);
  EXPECT_EQ(none.huge_bytes, 0u);
}

TEST(Medium, ParsesTheThreeKinds) {
  EXPECT_EQ(*parse_medium("dram"), (Medium{Kind::dram, -1}));
  EXPECT_EQ(*parse_medium("pool"), (Medium{Kind::pool, -1}));
  EXPECT_EQ(*parse_medium("numa:0"), (Medium{Kind::numa, 0}));
  EXPECT_EQ(*parse_medium("numa:12"), (Medium{Kind::numa, 12}));
  EXPECT_EQ(to_string(Medium{Kind::numa, 12}), "numa:12");
  EXPECT_EQ(to_string(Medium{Kind::pool, -1}), "pool");
  for (const char* bad : {"numa", "numa:", "numa:x", "numa:-1", "numa:1024", "numa:1 ", "numa:01x", "nvme", ""})
    EXPECT_FALSE(parse_medium(bad).ok()) << bad;
  EXPECT_NE(parse_medium("numa").status().message().find("numa:N"), std::string::npos);
  EXPECT_TRUE(names_a_node("numa:3"));
  for (const char* other : {"dram", "pool", "numa", "numa:x", ""}) EXPECT_FALSE(names_a_node(other)) << other;
}

// This machine's node 0 has memory wherever the kernel was built with NUMA support (one node or many).
TEST(NodeBuffer, EveryPageIsOnItsNode) {
  NodeBuffer buffer(0);
  const Status s = buffer.reserve(3 * 4096 + 1);
  if (!s && s.code() == Errc::unsupported) GTEST_SKIP() << s.message();
  ASSERT_TRUE(s) << s.message();
  const Region r = buffer.region();
  EXPECT_EQ(r.kind, Kind::numa);
  EXPECT_EQ(r.node, 0);
  EXPECT_EQ(r.size, 4u * 4096);
  r.base[r.size - 1] = std::byte{7};  // writable to its end
  auto nodes = nodes_of_pages(r.base, r.size);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  EXPECT_EQ(*nodes, std::vector<int>(4, 0));
}

// Node memory is compared with DRAM and the pool: the same page size, whatever the kernel's THP mode.
TEST(NodeBuffer, BasePagesAsTheDramMediumHas) {
  NodeBuffer buffer(0);
  const Status s = buffer.reserve(8 << 20);
  if (!s && s.code() == Errc::unsupported) GTEST_SKIP() << s.message();
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(mapping_pages(buffer.region().base).huge_bytes, 0u) << "THP " << thp_mode();
  EXPECT_TRUE(mapping_pages(buffer.region().base).has_flag("nh"));
}

// Huge pages on request, to match a pool a DAX file system maps in 2 MiB pages; asking for base pages again
// replaces the mapping.
TEST(NodeBuffer, HugePagesOnRequestWhereTheKernelGrantsThem) {
  NodeBuffer buffer(0);
  const Status s = buffer.reserve(6 << 20, Pages::huge);
  if (!s && s.code() == Errc::unsupported) GTEST_SKIP() << s.message();
  ASSERT_TRUE(s) << s.message();
  const Region r = buffer.region();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r.base) % (2 << 20), 0u);
  EXPECT_EQ(r.size % (2 << 20), 0u);
  EXPECT_TRUE(mapping_pages(r.base).has_flag("hg"));
  if (thp_mode().find("[never]") == std::string::npos) { EXPECT_GE(mapping_pages(r.base).huge_bytes, r.size / 2); }
  ASSERT_TRUE(buffer.reserve(4 << 20).ok());
  EXPECT_EQ(mapping_pages(buffer.region().base).huge_bytes, 0u);
}

TEST(Medium, PageSizesParseByName) {
  EXPECT_EQ(parse_pages("base").value(), Pages::base);
  EXPECT_EQ(parse_pages("huge").value(), Pages::huge);
  EXPECT_STREQ(to_string(Pages::huge), "huge");
  EXPECT_FALSE(parse_pages("2M").ok());
}

TEST(NodeBuffer, ANodeWithoutMemoryIsAnErrorNotAFallback) {
  NodeBuffer buffer(1000);  // no machine this runs on has a node 1000
  const Status s = buffer.reserve(4096);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("node 1000"), std::string::npos) << s.message();
  EXPECT_EQ(buffer.region().base, nullptr);
}

TEST(NodeBuffer, PresentPagesAreOnANode) {
  DramBuffer untouched;  // pre-faulted: every page present, placed by the default policy
  ASSERT_TRUE(untouched.reserve(2 * 4096));
  auto present = nodes_of_pages(untouched.region().base, 2 * 4096);
  if (!present.ok()) GTEST_SKIP() << present.status().message();
  EXPECT_TRUE(std::all_of(present->begin(), present->end(), [](int n) { return n >= 0; }));
}

}  // namespace
}  // namespace pmlab::media
