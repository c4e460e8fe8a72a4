// The peer tools' plumbing: parsing their reports, fio's job line, and the missing-tool path.
#include "pmlab/suites/idio/peers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "../../support/temp_dir.hpp"
#include "pmlab/bench/runner.hpp"

namespace pmlab::suites::idio {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Peers, LikwidReportGivesMiBPerSecond) {
  const std::string report = "Cycles:\t\t3956636762\nMByte/s:\t\t21499.43\nCycles per update:\t0.96\n";
  auto mib = parse_likwid_bandwidth(report);
  ASSERT_TRUE(mib.ok());
  EXPECT_NEAR(*mib, 21499.43e6 / 1048576.0, 1e-6);
  EXPECT_FALSE(parse_likwid_bandwidth("no numbers here\n").ok());
  EXPECT_FALSE(parse_likwid_bandwidth("MByte/s:\tnan-ish\n").ok());
}

TEST(Peers, LikwidKernelFollowsTheIsa) {
  const std::string load = likwid_kernel(LikwidKind::load);
  EXPECT_EQ(load.rfind("load_", 0), 0u);
  EXPECT_EQ(likwid_kernel(LikwidKind::ntstore).rfind("store_mem_", 0), 0u);
}

TEST(Peers, FioJsonGivesTheAggregateBandwidth) {
  const std::string json = R"(note: a line before the document
{"jobs": [{"error": 0, "read": {"bw_bytes": 0}, "write": {"bw_bytes": 2097152}}]})";
  auto w = parse_fio_bandwidth(json, true);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_DOUBLE_EQ(*w, 2.0);
  EXPECT_FALSE(parse_fio_bandwidth(json, false).ok());  // no read bandwidth
  EXPECT_FALSE(parse_fio_bandwidth("garbage", true).ok());
  EXPECT_FALSE(parse_fio_bandwidth(R"({"jobs": [{"error": 5, "write": {"bw_bytes": 10}}]})", true).ok());
}

TEST(Peers, FioJobMatchesOurOperation) {
  FioJob job;
  job.op = StreamOp::pstore;
  job.nontemporal = true;
  job.size = 256;
  job.threads = 2;
  job.directory = "/dev/shm";
  const auto nt = fio_arguments(job, "x", {0, 1});
  EXPECT_TRUE(has(nt, "--ioengine=libpmem"));
  EXPECT_TRUE(has(nt, "--direct=1"));
  EXPECT_TRUE(has(nt, "--sync=1"));
  EXPECT_TRUE(has(nt, "--bs=256"));
  EXPECT_TRUE(has(nt, "--numjobs=2"));
  EXPECT_TRUE(has(nt, "--rw=write"));
  EXPECT_TRUE(has(nt, "--cpus_allowed=0,1"));
  job.nontemporal = false;
  job.pattern = bench::Pattern::rand;
  const auto flush = fio_arguments(job, "x", {});
  EXPECT_TRUE(has(flush, "--direct=0"));
  EXPECT_TRUE(has(flush, "--rw=randwrite"));
  job.op = StreamOp::store;
  EXPECT_TRUE(has(fio_arguments(job, "x", {}), "--sync=0"));
  EXPECT_TRUE(has(fio_environment(job), "PMEM_NO_FLUSH=1"));
  job.op = StreamOp::load;
  EXPECT_TRUE(has(fio_arguments(job, "x", {}), "--rw=randread"));
  EXPECT_TRUE(has(fio_environment(job), "PMEM_IS_PMEM_FORCE=1"));
}

TEST(Peers, ToolRunnerReportsMissingFailingAndWorkingPrograms) {
  EXPECT_EQ(run_tool({"pmlab-no-such-program"}, {}, 5).status().code(), Errc::unsupported);
  auto fails = run_tool({"sh", "-c", "echo oops >&2; exit 3"}, {}, 5);
  ASSERT_FALSE(fails.ok());
  EXPECT_NE(fails.status().message().find("exited with 3: oops"), std::string::npos);
  auto works = run_tool({"sh", "-c", "echo $PMLAB_PEER_TEST"}, {"PMLAB_PEER_TEST=42"}, 5);
  ASSERT_TRUE(works.ok()) << works.status().message();
  EXPECT_EQ(works->out, "42\n");
  auto slow = run_tool({"sleep", "5"}, {}, 0.2);
  ASSERT_FALSE(slow.ok());
  EXPECT_NE(slow.status().message().find("did not finish"), std::string::npos);
}

TEST(Peers, DirectoryBesideAFileMappingIsItsDirectory) {
  pmlab::testing::TempDir dir;
  EXPECT_EQ(directory_beside(&dir), "/dev/shm");  // the stack is anonymous memory
}

TEST(Peers, AMissingPeerMakesItsRunSkippedNotFailed) {
  pmlab::testing::TempDir dir;
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", dir.path().c_str(), 1);
  bench::RunOptions o{};
  o.selectors = {"idio.vs_fio", "idio.vs_likwid"};
  o.quick = true;
  o.ops = 100;
  o.out_dir = dir.file("out");
  o.progress = false;
  o.command_line = "test";
  for (const char* set : {"medium=dram", "threads=1", "flush=ntstore", "kernel=load"})
    ASSERT_TRUE(bench::parse_override(set, o.overrides).ok());
  auto summary = bench::run(o);
  setenv("PATH", saved.c_str(), 1);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->errors, 0);
  std::ifstream in(summary->results_path);
  const auto doc = nlohmann::json::parse(in);
  int skipped = 0;
  for (const auto& r : doc["runs"])
    if (r["case"] == "vs_fio" || r["case"] == "vs_likwid") {
      EXPECT_EQ(r["status"], "skipped") << r["name"];
      EXPECT_NE(r["reason"].get<std::string>().find("not found in PATH"), std::string::npos);
      ++skipped;
    }
  EXPECT_EQ(skipped, 2);
}

}  // namespace
}  // namespace pmlab::suites::idio
