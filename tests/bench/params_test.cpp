#include "pmlab/bench/params.hpp"

#include <gtest/gtest.h>

#include "pmlab/bench/case.hpp"

namespace pmlab::bench {
namespace {

std::vector<ParamSpec> specs() {
  return {std_params::medium(), std_params::size("size", "bytes", {"64", "4K"}, {"64"}, 8, 1 << 20),
          std_params::threads({"1"})};
}

TEST(Params, ExpandsTheCartesianProductInDeclarationOrder) {
  auto runs = expand(specs(), {}, false);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 4u);
  EXPECT_EQ((*runs)[0].name_suffix(), "/medium:dram/size:64/threads:1");
  EXPECT_EQ((*runs)[1].name_suffix(), "/medium:dram/size:4096/threads:1");
  EXPECT_EQ((*runs)[3].name_suffix(), "/medium:pool/size:4096/threads:1");
  EXPECT_EQ((*runs)[1].size("size"), 4096u);
}

TEST(Params, QuickUsesTheQuickSweep) {
  auto runs = expand(specs(), {}, true);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 2u);
}

TEST(Params, OverridesReplaceTheSweepAndAreValidated) {
  Overrides o;
  ASSERT_TRUE(parse_override("size=256,1K,256", o).ok());
  ASSERT_TRUE(parse_override("medium=pool", o).ok());
  auto runs = expand(specs(), o, true);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);  // duplicates folded
  EXPECT_EQ((*runs)[1].name_suffix(), "/medium:pool/size:1024/threads:1");

  Overrides bad;
  ASSERT_TRUE(parse_override("size=2M", bad).ok());
  auto out_of_range = expand(specs(), bad, false);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("size=2M"), std::string::npos);

  Overrides wrong_choice;
  ASSERT_TRUE(parse_override("medium=tape", wrong_choice).ok());
  auto r = expand(specs(), wrong_choice, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dram|pool"), std::string::npos);
}

TEST(Params, MalformedOverridesAreRejected) {
  Overrides o;
  EXPECT_FALSE(parse_override("size", o).ok());
  EXPECT_FALSE(parse_override("=64", o).ok());
  EXPECT_FALSE(parse_override("size=", o).ok());
  EXPECT_FALSE(parse_override("size=64,,128", o).ok());
}

TEST(Params, ParsesEachType) {
  ParamSpec b{.name = "on", .type = ParamType::boolean, .doc = "", .defaults = {}, .quick = {}, .choices = {}, .min = INT64_MIN, .max = INT64_MAX};
  EXPECT_EQ(*b.parse("true"), true);
  EXPECT_FALSE(b.parse("maybe").ok());
  ParamSpec r{.name = "ratio", .type = ParamType::real, .doc = "", .defaults = {}, .quick = {}, .choices = {}, .min = 0, .max = 1};
  EXPECT_DOUBLE_EQ(r.parse("0.25")->get<double>(), 0.25);
  EXPECT_FALSE(r.parse("1.5").ok());
  EXPECT_FALSE(r.parse("x").ok());
  ParamSpec i = std_params::threads();
  EXPECT_FALSE(i.parse("0").ok());
  EXPECT_FALSE(i.parse("two").ok());
}

}  // namespace
}  // namespace pmlab::bench
