// The one results writer of `pmlab run` and `pmlab crash`: one document shape, whole or not at all.
#include "pmlab/bench/results.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/temp_dir.hpp"
#include "pmlab/bench/context.hpp"

namespace pmlab::bench {
namespace {

using pmlab::testing::TempDir;

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(ResultsDocument, WritesContextAndRecordsWithTheirDetails) {
  TempDir dir;
  uint64_t hash = context_hash({{"cpu", "x"}});
  ResultsDocument doc(base_context("20261124-000000", "pmlab test", true));
  doc.context()["config_hash"] = hex64(hash);
  record::RunRecord r;
  r.name = "crash.x/domain:adr";
  r.suite = "crash";
  r.config_hash = run_hash(r.name, hash);
  r.metrics.push_back({"failures", 0, "count", record::MetricKind::measured, ""});
  r.details["failures"] = nlohmann::ordered_json::array();
  doc.add(r);
  auto written = doc.write(dir.file("run"));
  ASSERT_TRUE(written.ok()) << written.status().message();
  const nlohmann::json j = read_json(*written);
  EXPECT_EQ(j["schema_version"], kSchemaVersion);
  EXPECT_EQ(j["context"]["run_id"], "20261124-000000");
  EXPECT_EQ(j["context"]["quick"], true);
  EXPECT_TRUE(j["context"].contains("cpu"));  // the machine, as `pmlab run` records it
  ASSERT_EQ(j["runs"].size(), 1u);
  EXPECT_TRUE(j["runs"][0]["failures"].is_array());
  EXPECT_EQ(j["runs"][0]["config_hash"], run_hash("crash.x/domain:adr", hash));
  EXPECT_NE(run_hash("a", hash), run_hash("a", hash + 1));  // the context separates equal names
}

TEST(ResultsDocument, ForceRemovesTheOldReportAndCheckRefusesWithoutIt) {
  TempDir dir;
  ResultsDocument doc(base_context("id", "", false));
  ASSERT_TRUE(doc.write(dir.file("run")).ok());
  std::ofstream(dir.file("run/report.html")) << "old";
  EXPECT_EQ(check_out_dir(dir.file("run"), false).code(), Errc::already_exists);
  EXPECT_TRUE(check_out_dir(dir.file("run"), true).ok());
  ASSERT_TRUE(doc.write(dir.file("run"), true).ok());
  EXPECT_FALSE(std::filesystem::exists(dir.file("run/report.html")));
}

TEST(ResultsDocument, AFailedWriteLeavesNoEmptyDirectory) {
  TempDir dir;
  std::ofstream(dir.file("file")) << "x";
  ResultsDocument doc(base_context("id", "", false));
  EXPECT_FALSE(doc.write(dir.file("file/sub")).ok());  // a file where a directory must be
  EXPECT_FALSE(std::filesystem::exists(dir.file("file/sub")));
}

}  // namespace
}  // namespace pmlab::bench
