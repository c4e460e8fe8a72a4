// Profiling on a recorded fixture: `perf script` text of a core.persist run (medium=pool, clwb; two
// worker threads' samples and a few of the main thread's), recorded on this project's VM with
// `perf record -e cpu-clock -F 4999 --call-graph fp`, and the objdump of the core suite's measured loop.
// Also the path without perf: the run goes on and says why there is no profile.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "pmlab/bench/runner.hpp"
#include "pmlab/persist/config.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/profile/flamegraph.hpp"
#include "pmlab/profile/perf.hpp"
#include "pmlab/profile/run_profiler.hpp"
#include "pmlab/profile/stacks.hpp"

namespace pmlab::profile {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(PMLAB_SOURCE_DIR) + "/tests/profile/fixtures/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr uint64_t kPeriod = 200040;  // ns per sample at 4999 Hz, as perf wrote it

TEST(PerfScript, ParsesTheRecordedFixture) {
  auto samples = parse_perf_script(fixture("core_persist_clwb.perf-script.txt"));
  ASSERT_TRUE(samples) << samples.status().message();
  ASSERT_EQ(samples->size(), 86u);
  EXPECT_EQ((*samples)[0].tid, 9938);
  EXPECT_EQ((*samples)[0].period, kPeriod);
  ASSERT_FALSE((*samples)[0].frames.empty());
  for (const auto& s : *samples) EXPECT_FALSE(s.frames.empty());
}

TEST(PerfScript, MalformedLinesAreErrorsNamingTheLine) {
  auto r = parse_perf_script(" 12 200040\n\tnot-hex sym (dso)\n");
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("line 2"), std::string::npos);
  EXPECT_FALSE(parse_perf_script("\t1234 sym+0x1 (dso)\n"));  // a frame before any header
  EXPECT_FALSE(parse_perf_script(" 12\n"));                   // header without a period
  auto empty = parse_perf_script("");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(Fold, StacksStartAtPmlabsCodeAndNameTheDesignsFunctions) {
  auto samples = parse_perf_script(fixture("core_persist_clwb.perf-script.txt"));
  ASSERT_TRUE(samples);
  const auto folded = fold(*samples);
  uint64_t total = 0;
  bool saw_body = false;
  for (const auto& [stack, period] : folded) {
    total += period;
    // The thread entry is pmlab's run_threads lambda, not std::thread plumbing or libstdc++.
    if (stack.find("suites::core::body::{lambda#1}") != std::string::npos) {
      saw_body = true;
      EXPECT_EQ(stack.rfind("pmlab::bench::RunContext::run_threads", 0), 0u) << stack;
    }
    EXPECT_EQ(stack.find("_ZN"), std::string::npos) << "mangled name left in " << stack;
    EXPECT_EQ(stack.find("(anonymous namespace)"), std::string::npos) << stack;
  }
  EXPECT_TRUE(saw_body);
  EXPECT_EQ(total, 86 * kPeriod);
}

TEST(Fold, DisplayNamesDropArgumentsAndUnknownSymbolsNameTheirBinary) {
  EXPECT_EQ(display_name({"_ZNK5pmlab7persist9Persister7copy_ntEPvPKvm", 0, "pmlab"}),
            "pmlab::persist::Persister::copy_nt");
  EXPECT_EQ(display_name({"[unknown]", 0, "/usr/lib/libstdc++.so.6"}), "[libstdc++.so.6]");
  EXPECT_EQ(display_name({"memcpy", 0, "libc.so.6"}), "memcpy");
  EXPECT_EQ(display_name({"[unknown]", 0, "[unknown]"}), "[unknown]");
}

TEST(Breakdown, ClassifiesTheFixtureByInstructionAndFrame) {
  auto samples = parse_perf_script(fixture("core_persist_clwb.perf-script.txt"));
  ASSERT_TRUE(samples);
  const PersistSites sites = parse_objdump(fixture("core_persist_body.objdump.txt"));
  // 12 persistence instructions in the loop (clwb, clflushopt, clflush, sfence), each with the
  // kPersistSkid = 3 instructions after it (no jump closes a window early in this fixture).
  EXPECT_EQ(sites.keys.size(), 48u);
  const Breakdown b = breakdown(*samples, sites);
  EXPECT_EQ(b.samples, 86u);
  EXPECT_EQ(b.total_period, 86 * kPeriod);
  // Nine samples sit on, or within three instructions after, a clwb or sfence of the inlined
  // Persister::persist.
  EXPECT_EQ(b.period[static_cast<int>(Activity::persistence)], 9 * kPeriod);
  uint64_t sum = 0;
  for (uint64_t p : b.period) sum += p;
  EXPECT_EQ(sum, b.total_period);
  // Without the instruction map, the inlined flushes are the loop's own time: no persistence at all.
  EXPECT_EQ(breakdown(*samples, PersistSites{}).period[static_cast<int>(Activity::persistence)], 0u);
}

TEST(Breakdown, TheSkidWindowFollowsAFenceAndEndsAtAJump) {
  const PersistSites sites = parse_objdump(
      "0000000000001000 <f>:\n"
      "    1000:\tmov    %rax,%rbx\n"
      "    1003:\tsfence\n"
      "    1006:\taddq   $0x1,%fs:0xfffffffffffffff0\n"
      "    100f:\trdtscp\n"
      "    1012:\tmov    -0xe0(%rbp),%rsi\n"
      "    1019:\tshl    $0x20,%rdx\n"
      "    101d:\tclwb   (%rdx)\n"
      "    1021:\tjb     1000 <f>\n"
      "    1023:\tsub    %rsi,%rdx\n");
  for (uint64_t off : {0x3, 0x6, 0xf, 0x12, 0x1d, 0x21})
    EXPECT_TRUE(sites.contains({"f", off, "pmlab"})) << std::hex << off;
  for (uint64_t off : {0x0, 0x19, 0x23}) EXPECT_FALSE(sites.contains({"f", off, "pmlab"})) << std::hex << off;
}

TEST(Breakdown, NamePatterns) {
  EXPECT_EQ(classify_name("pmlab::persist::Persister::copy_nt"), Activity::persistence);
  EXPECT_EQ(classify_name("pmem2_flush_cpu_cache"), Activity::persistence);
  EXPECT_EQ(classify_name("malloc"), Activity::allocation);
  EXPECT_EQ(classify_name("operator new"), Activity::allocation);
  EXPECT_EQ(classify_name("pmlab::pool::BlockAllocator::take"), Activity::allocation);
  EXPECT_EQ(classify_name("pmlab::primitives::log::ClassicLog::append"), Activity::logging);
  EXPECT_EQ(classify_name("pmlab::crash::selftest::scan_log"), Activity::logging);
  EXPECT_EQ(classify_name("pmlab::tree::SkipList::find"), Activity::search);
  EXPECT_EQ(classify_name("pmlab::bench::ThreadState::measure"), Activity::other);
  EXPECT_EQ(classify_name("memcpy"), Activity::other);
  // A callee inherits nothing by name: the innermost matching frame decides.
  Sample s{1,
           10,
           {{"memcpy", 0, "libc"},
            {"_ZN5pmlab10primitives3log10ClassicLog6appendEv", 0, "pmlab"},
            {"_ZN5pmlab4tree8SkipList4findEv", 0, "pmlab"}}};
  EXPECT_EQ(classify(s, PersistSites{}), Activity::logging);
}

TEST(FlameGraph, OneBoxPerFrameWithTooltipsAndActivityColours) {
  std::map<std::string, uint64_t> folded = {{"pmlab::a;pmlab::persist::Persister::copy_nt", 30},
                                            {"pmlab::a;pmlab::primitives::log::Log::append", 70}};
  FlameGraphOptions o;
  o.title = "t<&>";
  const std::string svg = flame_graph_svg(folded, o);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("t&lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(svg.find("<title>pmlab::persist::Persister::copy_nt (30 ns sampled, 30.00%; persistence)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>pmlab::a (100 ns sampled, 100.00%; other)</title>"), std::string::npos);
  EXPECT_NE(svg.find("#e5533d"), std::string::npos);  // persistence red
  EXPECT_NE(svg.find("#4a90d9"), std::string::npos);  // logging blue
  EXPECT_NE(flame_graph_svg({}, o).find("no samples"), std::string::npos);
}

TEST(NoPerf, DetectionSaysWhyAndTheRunGoesOnWithoutAProfile) {
  ::setenv("PMLAB_PERF", "/nonexistent/perf", 1);
  const PerfSupport perf = detect_perf();
  ::unsetenv("PMLAB_PERF");
  EXPECT_FALSE(perf.available);
  EXPECT_NE(perf.reason.find("perf not found"), std::string::npos) << perf.reason;

  pmlab::testing::TempDir dir;
  RunProfiler profiler(dir.path(), perf);
  EXPECT_EQ(profiler.context_json()["available"], false);
  EXPECT_EQ(profiler.context_json()["reason"], perf.reason);
  record::RunRecord rec;
  rec.name = "x";
  profiler.begin();
  profiler.end(rec, nullptr);
  ASSERT_EQ(rec.notes.size(), 1u);
  EXPECT_EQ(rec.notes[0].first, "profile_missing");
  EXPECT_EQ(rec.notes[0].second, perf.reason);
  EXPECT_TRUE(rec.metrics.empty());
  EXPECT_FALSE(std::filesystem::exists(dir.file("profiles")));
}

TEST(NoPerf, RunnerRecordsTheReasonAndEveryRunIsOk) {
  pmlab::testing::TempDir dir;
  ::setenv("PMLAB_PERF", "/nonexistent/perf", 1);
  bench::RunOptions o;
  o.selectors = {"core.persist"};
  o.filter = std::string("medium:dram/domain:adr/flush:") +
             persist::to_string(persist::best_line_flush(platform::CpuFeatures::host())) + "/size:64/pattern:seq";
  o.quick = true;
  o.ops = 200;
  o.out_dir = dir.file("out");
  o.progress = false;
  o.profile = true;
  auto summary = bench::run(o);
  ::unsetenv("PMLAB_PERF");
  ASSERT_TRUE(summary) << summary.status().message();
  EXPECT_GE(summary->ok, 1);
  EXPECT_EQ(summary->errors, 0);
  std::ifstream in(summary->results_path);
  auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["context"]["profile"]["available"], false);
  for (const auto& run : doc["runs"])
    EXPECT_NE(run["notes"]["profile_missing"].get<std::string>().find("perf not found"), std::string::npos);
}

}  // namespace
}  // namespace pmlab::profile
