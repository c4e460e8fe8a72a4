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
  ParamSpec b{.name = "on",
              .type = ParamType::boolean,
              .doc = "",
              .defaults = {},
              .quick = {},
              .choices = {},
              .min = INT64_MIN,
              .max = INT64_MAX};
  EXPECT_EQ(*b.parse("true"), true);
  EXPECT_FALSE(b.parse("maybe").ok());
  ParamSpec r{.name = "ratio",
              .type = ParamType::real,
              .doc = "",
              .defaults = {},
              .quick = {},
              .choices = {},
              .min = 0,
              .max = 1};
  EXPECT_DOUBLE_EQ(r.parse("0.25")->get<double>(), 0.25);
  EXPECT_FALSE(r.parse("1.5").ok());
  EXPECT_FALSE(r.parse("x").ok());
  ParamSpec i = std_params::threads();
  EXPECT_FALSE(i.parse("0").ok());
  EXPECT_FALSE(i.parse("two").ok());
}

TEST(Params, AMediumIsDramPoolOrANodeWithMemory) {
  const ParamSpec medium = std_params::medium();
  EXPECT_EQ(*medium.parse("numa:0"), "numa:0");
  EXPECT_EQ(*medium.parse("pool"), "pool");
  const Result<nlohmann::ordered_json> absent = medium.parse("numa:1000");
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.status().message().find("no NUMA node 1000 with memory"), std::string::npos)
      << absent.status().message();
  EXPECT_FALSE(medium.parse("numa:x").ok());
  EXPECT_FALSE(medium.parse("numa").ok());
  EXPECT_NE(medium.describe_values().find("numa:N|numa:all"), std::string::npos) << medium.describe_values();
  // numa:all is every node with memory: on any machine node 0's at least, and only nodes.
  const std::vector<std::string> all = medium.expand_value("numa:all");
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), "numa:0");
  for (const std::string& v : all) EXPECT_TRUE(medium.parse(v).ok()) << v;
  EXPECT_EQ(medium.expand_value("dram"), std::vector<std::string>{"dram"});
  // A choice of the kinds: a case on the pool alone refuses the others.
  ParamSpec pool_only = medium;
  pool_only.choices = {"pool"};
  EXPECT_FALSE(pool_only.parse("numa:0").ok());
  EXPECT_FALSE(pool_only.parse("dram").ok());
}

TEST(Params, NumaAllExpandsInTheSweep) {
  Overrides o;
  ASSERT_TRUE(parse_override("medium=dram,numa:all", o));
  auto runs = expand(specs(), o, true);
  ASSERT_TRUE(runs.ok());
  std::vector<std::string> media;
  for (const Params& p : *runs) media.push_back(p.text("medium"));
  EXPECT_EQ(media.front(), "dram");
  EXPECT_EQ(media.at(1), "numa:0");
}

}  // namespace
}  // namespace pmlab::bench
