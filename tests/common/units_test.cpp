#include "pmlab/common/units.hpp"

#include <gtest/gtest.h>

namespace pmlab {
namespace {

TEST(Units, ParsesSizesWithBinarySuffixes) {
  EXPECT_EQ(*parse_size("64"), 64u);
  EXPECT_EQ(*parse_size("4K"), 4096u);
  EXPECT_EQ(*parse_size("16KiB"), 16384u);
  EXPECT_EQ(*parse_size("1g"), 1ULL << 30);
  EXPECT_EQ(*parse_size(" 2M "), 2ULL << 20);
}

TEST(Units, RejectsBadSizes) {
  EXPECT_EQ(parse_size("").status().code(), Errc::invalid_argument);
  EXPECT_EQ(parse_size("-1").status().code(), Errc::invalid_argument);
  EXPECT_EQ(parse_size("4Q").status().code(), Errc::invalid_argument);
  EXPECT_EQ(parse_size("1.5K").status().code(), Errc::invalid_argument);
  EXPECT_EQ(parse_size("99999999999999999999").status().code(), Errc::invalid_argument);
  EXPECT_EQ(parse_size("17179869184G").status().code(), Errc::invalid_argument);  // 2^34 GiB overflows
}

TEST(Units, FormatsSizesExactly) {
  EXPECT_EQ(format_size(4096), "4K");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_EQ(format_size(1ULL << 30), "1G");
  EXPECT_EQ(format_size(0), "0");
}

TEST(Units, ParsesDurations) {
  EXPECT_DOUBLE_EQ(*parse_seconds("1.5s"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_seconds("250ms"), 0.25);
  EXPECT_DOUBLE_EQ(*parse_seconds("2"), 2.0);
  EXPECT_FALSE(parse_seconds("fast").ok());
  EXPECT_FALSE(parse_seconds("-1s").ok());
}

TEST(Units, HashIsStableAndSensitive) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ULL);
  EXPECT_EQ(hex64(fnv1a64("a", 1)), "af63dc4c8601ec8c");  // FNV-1a test vector
  EXPECT_NE(fnv1a64("ab", 2), fnv1a64("ba", 2));
}

TEST(Status, CodesMapToDocumentedExitCodes) {
  EXPECT_EQ(Status().exit_code(), 0);
  EXPECT_EQ(error(Errc::invalid_argument, "x").exit_code(), 2);
  EXPECT_EQ(error(Errc::busy, "x").exit_code(), 3);
  EXPECT_EQ(error(Errc::unsupported, "x").exit_code(), 4);
  EXPECT_STREQ(errc_name(Errc::not_a_pool), "not_a_pool");
}

}  // namespace
}  // namespace pmlab
