// Address streams: the same pattern must put every access on one place (core.persist's same-line
// persists), seq must walk the span and rand must stay inside it, aligned.
#include "pmlab/bench/access_pattern.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace pmlab::bench {
namespace {

TEST(AccessPattern, SameTouchesOneAddress) {
  const auto offsets = make_offsets(Pattern::same, 1 << 20, 64, 1000, 7);
  ASSERT_EQ(offsets.size(), 1024u);  // rounded up to a power of two
  EXPECT_EQ(std::set<uint64_t>(offsets.begin(), offsets.end()), std::set<uint64_t>{0});
}

TEST(AccessPattern, SeqWalksTheSpanAndWraps) {
  const auto offsets = make_offsets(Pattern::seq, 4 * 256, 256, 8, 1);
  const std::vector<uint64_t> expected{0, 256, 512, 768, 0, 256, 512, 768};
  EXPECT_EQ(offsets, expected);
}

TEST(AccessPattern, RandStaysAlignedInsideTheSpan) {
  const auto offsets = make_offsets(Pattern::rand, 1 << 16, 128, 4096, 3);
  std::set<uint64_t> distinct;
  for (uint64_t o : offsets) {
    EXPECT_EQ(o % 128, 0u);
    EXPECT_LT(o, uint64_t{1} << 16);
    distinct.insert(o);
  }
  EXPECT_GT(distinct.size(), 400u);  // 512 slots: a random stream of 4096 visits most of them
  EXPECT_EQ(offsets, make_offsets(Pattern::rand, 1 << 16, 128, 4096, 3));  // reproducible from the seed
}

TEST(AccessPattern, ParsesEveryName) {
  EXPECT_EQ(parse_pattern("seq"), Pattern::seq);
  EXPECT_EQ(parse_pattern("rand"), Pattern::rand);
  EXPECT_EQ(parse_pattern("same"), Pattern::same);
  EXPECT_THROW(parse_pattern("strided"), std::invalid_argument);
}

}  // namespace
}  // namespace pmlab::bench
