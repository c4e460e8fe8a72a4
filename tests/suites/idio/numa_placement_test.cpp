// I4's placement and its skip path: one NUMA node means every run is skipped with the reason.
#include "pmlab/suites/idio/numa_placement.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../../support/temp_dir.hpp"
#include "pmlab/bench/runner.hpp"
#include "pmlab/platform/topology.hpp"

namespace pmlab::suites::idio {
namespace {

const CpusByNode kTwoNodes = {{0, {0, 1, 2, 3}}, {1, {4, 5, 6, 7}}};

TEST(NumaPlacement, OneNodeIsASkipReasonTwoAreNot) {
  const auto why = numa_skip_reason({0});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("one NUMA node"), std::string::npos);
  EXPECT_FALSE(numa_skip_reason({0, 1}).has_value());
}

TEST(NumaPlacement, LocalUsesTheMemorysNodeRemoteAnother) {
  auto local = place_threads(Locality::local, 1, kTwoNodes, 2);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(*local, (std::vector<int>{4, 5}));
  auto remote = place_threads(Locality::remote, 1, kTwoNodes, 3);
  ASSERT_TRUE(remote.ok());
  EXPECT_EQ(*remote, (std::vector<int>{0, 1, 2}));
}

TEST(NumaPlacement, SaysWhyWhenThreadsCannotBePlaced) {
  EXPECT_EQ(place_threads(Locality::local, 0, kTwoNodes, 5).status().code(), Errc::unsupported);
  EXPECT_EQ(place_threads(Locality::local, -1, kTwoNodes, 1).status().code(), Errc::unsupported);
  const CpusByNode one = {{0, {0, 1}}};
  auto remote = place_threads(Locality::remote, 0, one, 1);
  ASSERT_FALSE(remote.ok());
  EXPECT_NE(remote.status().message().find("no allowed CPU outside"), std::string::npos);
}

TEST(NumaPlacement, MemoryNodeOfOwnMemoryIsKnown) {
  std::vector<char> page(8192, 1);
  const int node = memory_node_of(page.data());
  const auto nodes = platform::numa_nodes();
  EXPECT_TRUE(node == -1 || std::find(nodes.begin(), nodes.end(), node) != nodes.end()) << node;
}

TEST(NumaPlacement, OnOneNodeI4RunsAreSkippedAndClassifiedNotApplicable) {
  if (platform::numa_nodes().size() >= 2) GTEST_SKIP() << "this machine has several NUMA nodes";
  pmlab::testing::TempDir dir;
  bench::RunOptions o{};
  o.selectors = {"idio.i4_numa"};
  o.quick = true;
  o.ops = 100;
  o.out_dir = dir.file("out");
  o.progress = false;
  o.command_line = "test";
  for (const char* set : {"medium=dram", "size=256", "threads=1", "locality=local,remote"})
    ASSERT_TRUE(bench::parse_override(set, o.overrides).ok());
  auto summary = bench::run(o);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->skipped, 2);
  std::ifstream in(summary->results_path);
  const auto doc = nlohmann::json::parse(in);
  bool classified = false;
  for (const auto& r : doc["runs"]) {
    if (r["case"] == "i4_numa") {
      EXPECT_EQ(r["status"], "skipped");
      EXPECT_NE(r["reason"].get<std::string>().find("one NUMA node"), std::string::npos);
    }
    if (r["name"] == "idio.classification/idiosyncrasy:I4") {
      classified = true;
      EXPECT_EQ(r["status"], "ok");
      EXPECT_EQ(r["notes"]["verdict"], "not_applicable");
      EXPECT_EQ(r["notes"]["not_applicable_because"], "runs_skipped");
      EXPECT_NE(r["notes"]["skip_reason"].get<std::string>().find("one NUMA node"), std::string::npos);
      EXPECT_TRUE(r["metrics"]["effect_pool"]["value"].is_null());
    }
  }
  EXPECT_TRUE(classified) << "the suite summary appends the classification rows";
}

}  // namespace
}  // namespace pmlab::suites::idio
