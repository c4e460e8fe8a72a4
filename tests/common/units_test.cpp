#include "pmlab/common/hash.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/common/status.hpp"

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

// Success is a null pointer inside; what callers see of a Status must not depend on that.
TEST(Status, CopiesKeepTheErrorAndMovesLeaveSuccess) {
  const Status ok = Status::success();
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.code(), Errc::ok);
  EXPECT_EQ(ok.message(), "");
  EXPECT_TRUE(Status(Errc::ok, "ignored").ok());

  Status full = error(Errc::pool_full, "lane 3 is full");
  Status copy = full;
  EXPECT_EQ(copy.code(), Errc::pool_full);
  EXPECT_EQ(copy.message(), "lane 3 is full");
  copy = ok;
  EXPECT_TRUE(copy.ok());
  EXPECT_EQ(full.message(), "lane 3 is full") << "a copy is independent of its source";
  Status moved = std::move(full);
  EXPECT_EQ(moved.code(), Errc::pool_full);
  EXPECT_TRUE(full.ok());  // NOLINT(bugprone-use-after-move): documented moved-from state

  Result<uint64_t> value = uint64_t{7};
  EXPECT_TRUE(value.ok());
  EXPECT_TRUE(value.status().ok());
  Result<uint64_t> failed = moved;
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Errc::pool_full);
  EXPECT_EQ(failed.status().message(), "lane 3 is full");
}

}  // namespace
}  // namespace pmlab
