#include "pmlab/crash/shards.hpp"

#include <gtest/gtest.h>

namespace pmlab::crash {
namespace {

using json = nlohmann::ordered_json;

json metric(double v) { return {{"value", v}, {"unit", "count"}, {"kind", "measured"}}; }

// A shard of a run of one design: `checked` states, a failure at each crash point in `failing`.
ShardDocument shard(uint64_t index, uint64_t of, double checked, std::vector<uint64_t> failing, uint64_t budget = 100) {
  json failures = json::array();
  for (uint64_t point : failing) failures.push_back({{"crash_point", point}, {"state", 0}, {"property", "broken"}});
  json run = {{"name", "crash.selftest.x/domain:adr/granularity:line"},
              {"status", failing.empty() ? "ok" : "error"},
              {"reason", failing.empty() ? json(nullptr) : json("broken")},
              {"metrics",
               {{"states_checked", metric(checked)},
                {"failures", metric(static_cast<double>(failing.size()))},
                {"seconds", metric(1.0)},
                {"state_space", metric(400)},
                {"crash_points", metric(9)},
                {"states_per_second", metric(checked)},
                {"coverage", metric(checked / 400)}}},
              {"failures", failures}};
  json doc = {{"context", {{"crash", {{"budget", budget}, {"shard", {{"index", index}, {"of", of}}}}}}},
              {"runs", json::array({run})}};
  return {"shard-" + std::to_string(index), doc};
}

TEST(CrashShards, AddUpToTheRunTheyStandFor) {
  auto merged = merge_shards({shard(2, 2, 30, {7}), shard(1, 2, 50, {3, 5})});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->shards, 2u);
  EXPECT_EQ(merged->failures, 3u);
  ASSERT_EQ(merged->runs.size(), 1u);
  const json& run = merged->runs[0];
  EXPECT_EQ(run["metrics"]["states_checked"]["value"], 80.0);
  EXPECT_EQ(run["metrics"]["seconds"]["value"], 2.0);
  EXPECT_EQ(run["metrics"]["crash_points"]["value"], 9.0);  // the exploration's own, not summed
  EXPECT_EQ(run["metrics"]["states_per_second"]["value"], 40.0);
  EXPECT_EQ(run["metrics"]["coverage"]["value"], 0.2);
  EXPECT_EQ(run["status"], "error");
  ASSERT_EQ(run["failures"].size(), 3u);
  EXPECT_EQ(run["failures"][0]["crash_point"], 3u);  // in crash-point order
  EXPECT_EQ(run["failures"][2]["crash_point"], 7u);
  EXPECT_EQ(merged->context["crash"]["shard"]["of"], 2u);
  EXPECT_TRUE(merged->context["crash"]["shard"]["index"].is_null());
  EXPECT_EQ(merged->context["crash"]["shard"]["merged_from"], (json{"shard-2", "shard-1"}));
}

TEST(CrashShards, RefuseWhatIsNotOneWholeRun) {
  auto twice = merge_shards({shard(1, 2, 1, {}), shard(1, 2, 1, {})});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos);
  auto missing = merge_shards({shard(1, 3, 1, {}), shard(2, 3, 1, {})});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("every shard is needed"), std::string::npos);
  auto other = merge_shards({shard(1, 2, 1, {}), shard(2, 2, 1, {}, 500)});
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("shard-2 was run with other settings"), std::string::npos);
  auto foreign = merge_shards({shard(1, 1, 1, {}), {"elsewhere", json{{"runs", json::array()}}}});
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("elsewhere is not the results of a sharded"), std::string::npos);
  EXPECT_FALSE(merge_shards({}).ok());
}

// A merged run given again, or a shard whose runs were edited: an error naming the problem, no crash.
TEST(CrashShards, AMergedRunOrMisshapenRunsAreErrors) {
  auto merged = merge_shards({shard(1, 2, 1, {}), shard(2, 2, 1, {})});
  ASSERT_TRUE(merged.ok());
  json whole = {{"context", merged->context}, {"runs", merged->runs}};
  auto again = merge_shards({{"merged", whole}});
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("merged is not the results of a sharded"), std::string::npos);

  ShardDocument odd = shard(2, 2, 1, {});
  odd.document["runs"][0].erase("metrics");
  auto broken = merge_shards({shard(1, 2, 1, {}), odd});
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), Errc::corrupted);
  EXPECT_NE(broken.status().message().find("not as pmlab crash writes them"), std::string::npos);
}

}  // namespace
}  // namespace pmlab::crash
