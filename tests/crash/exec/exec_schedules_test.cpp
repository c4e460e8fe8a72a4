// `pmlab crash exec --schedules`: the program traced again with its threads paused at persistence calls, so
// that they interleave as they do not by themselves (src/pmlab-trace/schedule.hpp). shared-log
// (subjects/own/shared_log.c) has a race that only an interleaving its own schedule seldom takes shows.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../../support/crash_exec.hpp"
#include "../../support/temp_dir.hpp"

namespace pmlab::crash::exec {
namespace {

using testing::ExecOutcome;

const std::string kSharedLog = std::string(PMLAB_SUBJECTS_DIR) + "/shared-log";
const std::string kLog = std::string(PMLAB_SUBJECTS_DIR) + "/pmem-log";

// 50 appends from each of 2 threads, each thread waiting 2 ms before each append (the two a millisecond
// apart): left to themselves, their appends do not overlap.
ExecOutcome shared_log(testing::TempDir& dir, const std::string& name, const std::vector<std::string>& bug,
                       const std::string& schedules) {
  const std::string pool = dir.file(name + ".pool");
  std::vector<std::string> program = {kSharedLog, "append", pool, "50", "--threads", "2", "--gap-us", "2000"};
  program.insert(program.end(), bug.begin(), bug.end());
  return testing::crash_exec("rm -f " + pool, kSharedLog + " check {}", dir.file(name),
                             {"--granularity", "line", "--schedules", schedules}, program);
}

uint64_t metric(const nlohmann::json& run, const char* name) { return run["metrics"][name]["value"].get<uint64_t>(); }

bool has_note(const nlohmann::json& run, const std::string& text) {
  for (const auto& n : run["trace"]["notes"])
    if (n.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

// Measured on this machine: the race shows in none of 20 runs of the program's own schedule, and in
// schedules 2-4 of all 20 (docs/crash-simulator.md). A later schedule's failure replays from its own trace.
TEST(CrashExecSchedules, PausesBringAboutARaceTheProgramsOwnScheduleHides) {
  testing::TempDir dir;
  const ExecOutcome o = shared_log(dir, "racy", {"--bug", "publish-ahead"}, "4");
  ASSERT_EQ(o.exit_code, 1) << o.err;
  ASSERT_EQ(o.results["runs"].size(), 4u) << o.err;
  uint64_t later_failures = 0;
  const nlohmann::json* failed = nullptr;
  for (const auto& run : o.results["runs"]) {
    const uint64_t schedule = run["trace"]["schedule"];
    EXPECT_EQ(run["name"].get<std::string>().find("/schedule:") != std::string::npos, schedule > 1) << run["name"];
    if (schedule == 1) continue;
    EXPECT_TRUE(has_note(run, "pauses before persistence calls")) << run["trace"]["notes"];
    later_failures += metric(run, "failures");
    if (failed == nullptr && metric(run, "failures") > 0) failed = &run;
  }
  ASSERT_GT(later_failures, 0u) << "a commit that covers another thread's unpersisted record\n" << o.err;
  ASSERT_NE(failed, nullptr);
  const std::string trace = (*failed)["trace"]["path"];
  EXPECT_NE(trace.find(".schedule"), std::string::npos) << trace;
  const std::string point = (*failed)["failures"][0]["replay"];
  const std::string pool = dir.file("racy.pool");
  const ExecOutcome replayed = testing::crash_exec(
      "rm -f " + pool, kSharedLog + " check {}", dir.file("replayed"),
      {"--granularity", "line", "--domain", "adr", "--trace", trace, "--replay", point, "--image", dir.file("image")},
      {kSharedLog, "append", pool, "50", "--threads", "2", "--gap-us", "2000", "--bug", "publish-ahead"});
  EXPECT_EQ(replayed.exit_code, 1) << replayed.err;
  EXPECT_NE(replayed.err.find("FAILED at crash point " + point), std::string::npos) << replayed.err;
}

// The correct commit (over slots persisted in a row) passes every schedule, whose threads interleave.
TEST(CrashExecSchedules, ACorrectProgramPassesEverySchedule) {
  testing::TempDir dir;
  const ExecOutcome o = shared_log(dir, "correct", {}, "3");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(o.results["runs"].size(), 3u) << o.err;
  for (const auto& run : o.results["runs"]) {
    EXPECT_EQ(metric(run, "failures"), 0u) << run["name"];
    EXPECT_GT(run["trace"]["thread_switches"].get<uint64_t>(), 0u) << run["name"];
  }
}

// One thread has nothing to interleave with: later schedules pause nowhere, and every state they reach is
// one the first judged (a state is judged once per domain and granularity, whichever schedule reached it).
TEST(CrashExecSchedules, AOneThreadProgramGivesEveryScheduleTheSameStates) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  const ExecOutcome o = testing::crash_exec("rm -f " + pool, kLog + " check {}", dir.file("out"),
                                            {"--granularity", "line", "--schedules", "3"}, {kLog, "append", pool, "8"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(o.results["runs"].size(), 3u) << o.err;
  const auto& first = o.results["runs"][0];
  EXPECT_GT(metric(first, "states_checked"), 0u);
  for (size_t i = 1; i < 3; ++i) {
    const auto& run = o.results["runs"][i];
    EXPECT_TRUE(has_note(run, "no pause")) << run["trace"]["notes"];
    EXPECT_EQ(metric(run, "crash_points"), metric(first, "crash_points"));
    EXPECT_EQ(metric(run, "states_checked"), 0u) << run["name"];
    EXPECT_EQ(metric(run, "duplicate_states"), metric(run, "states_enumerated")) << run["name"];
  }
}

// PMDK's pi example, unmodified: a thread per task persists its sum and moves the task to the done list with
// libpmemobj's atomic list API. Every schedule keeps every task that was put on the list, done once with
// its sum, after the example's own recovery (`finish`); without the persist of the sum a task can be done
// with a sum of 0.
TEST(CrashExecSchedules, PmdksThreadedPiExampleHoldsInEverySchedule) {
  const std::string subjects = PMLAB_SUBJECTS_DIR;
  if (!std::filesystem::exists(subjects + "/pmdk-pi")) GTEST_SKIP() << "subjects/pmdk's pmdk-pi not built";
  testing::TempDir dir;
  const std::string pool = dir.file("pi.pool");
  auto crash_exec = [&](const std::string& program) {
    return testing::crash_exec("rm -f " + pool + " && " + subjects + "/pmdk-pi " + pool + " print",
                               subjects + "/pmdk-pi-check " + subjects + "/pmdk-pi {} 4 400", dir.file(program),
                               {"--granularity", "line", "--budget", "60", "--schedules", "2"},
                               {subjects + "/" + program, pool, "calc", "4", "400"});
  };
  const ExecOutcome unmodified = crash_exec("pmdk-pi");
  ASSERT_EQ(unmodified.exit_code, 0) << unmodified.err;
  ASSERT_EQ(unmodified.results["runs"].size(), 2u) << unmodified.err;
  for (const auto& run : unmodified.results["runs"]) EXPECT_GT(metric(run, "states_checked"), 0u) << run["name"];
  const ExecOutcome bug = crash_exec("pmdk-pi-bug-result-unpersisted");
  EXPECT_EQ(bug.exit_code, 1) << bug.err;
  EXPECT_NE(bug.err.find("holds 0, not its sum"), std::string::npos) << bug.err;
}

// A run of one schedule whose threads both persist says that it judged one interleaving, and how to get more;
// a one-thread run does not.
TEST(CrashExecSchedules, ARunOfOneScheduleWithThreadsPointsToSchedules) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  for (const char* threads : {"1", "2"}) {
    const ExecOutcome o = testing::crash_exec(
        "rm -f " + pool, kLog + " check {} --threads " + std::string(threads), dir.file(std::string("out-") + threads),
        {"--granularity", "line", "--budget", "50"}, {kLog, "append", pool, "8", "--threads", threads});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(has_note(o.results["runs"][0], "2 threads made persistence calls"), std::string(threads) == "2")
        << threads << " threads\n"
        << o.err;
  }
}

TEST(CrashExecSchedules, ZeroSchedulesOrAReplayOfSeveralAreRefused) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  const ExecOutcome zero = testing::crash_exec("true", kLog + " check {}", dir.file("o1"), {"--schedules", "0"},
                                               {kLog, "append", pool, "2"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_NE(zero.err.find("--schedules"), std::string::npos) << zero.err;
  const ExecOutcome replay = testing::crash_exec(
      "true", kLog + " check {}", dir.file("o2"),
      {"--schedules", "2", "--domain", "adr", "--granularity", "line", "--replay", "1:0", "--image", dir.file("i")},
      {kLog, "append", pool, "2"});
  EXPECT_EQ(replay.exit_code, 2) << replay.err;
  EXPECT_NE(replay.err.find("without --schedules"), std::string::npos) << replay.err;
}

}  // namespace
}  // namespace pmlab::crash::exec
