// Which process `pmlab crash exec` traces: the program it started, or where that one maps no persistent
// memory (a shell, `timeout`, a test driver), the first process it starts that does. Either way the crash
// states are those of the program run directly, and a second process that maps persistent memory is named.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../../support/crash_exec.hpp"
#include "../../support/temp_dir.hpp"

namespace pmlab::crash::exec {
namespace {

using testing::ExecOutcome;

const std::string kLog = std::string(PMLAB_SUBJECTS_DIR) + "/pmem-log";
// Programs of a user's own that the tests run (tests/crash/exec/programs).
const std::string kPrograms = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/";

bool names_traced_process(const ExecOutcome& o, const std::string& program = kLog) {
  return o.err.find("traced: process") != std::string::npos &&
         o.err.find(program + "), which the program started") != std::string::npos;
}

// pmem-log's 8 appends run directly, behind `sh -c`, behind `timeout` and as the first command of a bash
// script: the same crash points and states in both domains (--domain repeated), and a planted bug caught the
// same way.
TEST(CrashExecProcesses, AProgramStartedByAShellOrADriverGivesTheCrashStatesOfTheProgramRunDirectly) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  const std::string direct = kLog + " append " + pool + " 8 --bug no-flush";
  const std::vector<std::vector<std::string>> programs = {
      {kLog, "append", pool, "8", "--bug", "no-flush"},
      {"/bin/sh", "-c", direct},
      {"timeout", "60", kLog, "append", pool, "8", "--bug", "no-flush"},
      {"/bin/bash", "-c", direct + " && echo appended"},
  };
  std::vector<ExecOutcome> outcomes;
  for (size_t i = 0; i < programs.size(); ++i) {
    const ExecOutcome o = testing::crash_exec(
        "rm -f " + pool, kLog + " check {}", dir.file("out-" + std::to_string(i)),
        {"--granularity", "line", "--budget", "60", "--domain", "adr", "--domain", "eadr"}, programs[i]);
    ASSERT_EQ(o.exit_code, 1) << programs[i][0] << ": failures expected\n" << o.err;
    EXPECT_EQ(names_traced_process(o), i > 0) << programs[i][0] << "\n" << o.err;
    outcomes.push_back(o);
  }
  for (const char* domain : {"adr", "eadr"})
    for (const char* metric : {"crash_points", "states_checked", "failures"})
      for (size_t i = 1; i < outcomes.size(); ++i)
        EXPECT_EQ(outcomes[i].metric("line", metric, domain), outcomes[0].metric("line", metric, domain))
            << programs[i][0] << " " << domain << " " << metric;
  EXPECT_GT(outcomes[0].metric("line", "failures", "adr"), 0u) << "the record is never written back";
  EXPECT_EQ(outcomes[0].metric("line", "failures", "eadr"), 0u) << "eADR persists it at the fence";
}

// A PMDK program behind a shell: its pool, mapped by libpmemobj, makes it the process traced, in both domains.
TEST(CrashExecProcesses, APmdkProgramStartedByAShellIsTracedAsIfRunDirectly) {
  const std::string map = std::string(PMLAB_SUBJECTS_DIR) + "/pmdk-map";
  if (!std::filesystem::exists(map)) GTEST_SKIP() << "subjects/pmdk not built";
  testing::TempDir dir;
  const std::string pool = dir.file("map.pool");
  const std::string insert = map + " btree insert " + pool + " 8";
  auto run = [&](const std::vector<std::string>& program, const char* out) {
    return testing::crash_exec("rm -f " + pool + " && " + map + " btree create " + pool, map + " btree check {} 8",
                               dir.file(out), {"--granularity", "line", "--budget", "40", "--domain", "adr,eadr"},
                               program);
  };
  const ExecOutcome direct = run({map, "btree", "insert", pool, "8"}, "direct");
  const ExecOutcome shell = run({"/bin/sh", "-c", insert}, "shell");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  ASSERT_EQ(shell.exit_code, 0) << shell.err;
  EXPECT_TRUE(names_traced_process(shell, map)) << shell.err;
  for (const char* domain : {"adr", "eadr"})
    for (const char* metric : {"crash_points", "states_checked", "writebacks", "fences"})
      EXPECT_EQ(shell.metric("line", metric, domain), direct.metric("line", metric, domain)) << domain << " " << metric;
}

// The shell leaves the program running in the background and exits first: pmlab waits for the program, whose
// runtime holds its trace's lock until it exits, and judges its whole run.
TEST(CrashExecProcesses, AProgramThatOutlivesItsShellIsWaitedFor) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool"), appended = dir.file("appended");
  // The shell exits once the program has appended (so it holds its trace) and while it still runs.
  const ExecOutcome o = testing::crash_exec("rm -f " + pool + " " + appended, kLog + " check {}", dir.file("out"),
                                            {"--granularity", "line", "--budget", "40"},
                                            {"/bin/sh", "-c",
                                             kLog + " append " + pool + " 8 --then 'touch " + appended +
                                                 "; sleep 1' & while [ ! -e " + appended + " ]; do sleep 0.01; done"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(names_traced_process(o)) << o.err;
  ASSERT_NE(o.run("line"), nullptr);
  EXPECT_TRUE((*o.run("line"))["trace"]["complete"].get<bool>()) << "the trace holds the program's exit";
  EXPECT_EQ(o.metric("line", "crash_points"), 17u) << "8 appends' 16 fences and the exit";
}

// A Python program forks a worker, which maps a file and persists two records in turn with msync: the worker
// is the process traced (forked, not started anew), and a worker that persists the second record before the
// first is caught.
TEST(CrashExecProcesses, AForkedWorkerOfAProgramThatMapsNothingIsTraced) {
  testing::TempDir dir;
  const std::string pool = dir.file("py.pool");
  for (const std::string order : {"first-first", "second-first"}) {
    const ExecOutcome o =
        testing::crash_exec("rm -f " + pool, "python3 " + kPrograms + "check_before.py {} 0 A 4096 B", dir.file(order),
                            {"--granularity", "line", "--budget", "40", "--pool", pool},
                            {"python3", kPrograms + "forked_worker.py", pool, order});
    ASSERT_EQ(o.exit_code, order == "first-first" ? 0 : 1) << order << "\n" << o.err;
    EXPECT_TRUE(names_traced_process(o, "")) << o.err;
    EXPECT_EQ(o.metric("line", "crash_points"), 3u) << order << ": two msyncs and the exit";
    EXPECT_EQ(o.failures("line") > 0, order == "second-first") << order;
  }
}

// The traced program forks while it has its file mapped, and the child persists a record of its own there:
// the child's stores are not in the trace, and the run says so.
TEST(CrashExecProcesses, AForkAfterMappingPersistentMemoryIsNamed) {
  testing::TempDir dir;
  const std::string pool = dir.file("shared.pool");
  const ExecOutcome o = testing::crash_exec("rm -f " + pool, "test -s {}", dir.file("out"),
                                            {"--granularity", "line", "--budget", "20", "--pool", pool},
                                            {"python3", kPrograms + "fork_after_map.py", pool});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("the program forked while it had persistent memory mapped"), std::string::npos) << o.err;
  EXPECT_EQ(o.metric("line", "crash_points"), 2u) << "the parent's msync and its exit; the child's msync is unseen";
}

// The program's own limit: one that runs past --program-timeout is killed, and the error names the option;
// 0 lets it run. A program that fails shows its last lines, each on a line of its own.
TEST(CrashExecProcesses, AProgramPastItsTimeoutIsKilledAndAFailingOneShowsItsLines) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  auto exec = [&](const std::string& limit, const std::string& script, const char* out) {
    return testing::crash_exec("rm -f " + pool, kLog + " check {}", dir.file(out),
                               {"--granularity", "line", "--budget", "10", "--program-timeout", limit},
                               {"/bin/sh", "-c", script});
  };
  const std::string append = kLog + " append " + pool + " 2";
  const ExecOutcome killed = exec("0.5", "sleep 30; " + append, "killed");
  EXPECT_EQ(killed.exit_code, 1) << killed.err;
  EXPECT_NE(killed.err.find("the traced program ran past --program-timeout (0.5 s) and was killed"), std::string::npos)
      << killed.err;
  const ExecOutcome unlimited = exec("0", "sleep 1; " + append, "unlimited");
  EXPECT_EQ(unlimited.exit_code, 0) << unlimited.err;
  const ExecOutcome failing = exec("60", "echo first >&2; echo second >&2; exit 3", "failing");
  EXPECT_NE(failing.err.find("pmlab: error: the traced program exited with 3:\n  | first\n  | second\n"),
            std::string::npos)
      << failing.err;
}

// The traced program starts another that maps persistent memory too (pmem-log --then, through system(3)):
// the program stays the one traced, and the other is named with its file, whose stores the states lack.
TEST(CrashExecProcesses, OneProcessIsTracedAndAnotherThatMapsPersistentMemoryIsNamed) {
  testing::TempDir dir;
  const std::string first = dir.file("first.pool"), second = dir.file("second.pool");
  const ExecOutcome o = testing::crash_exec(
      "rm -f " + first + " " + second, kLog + " check {}", dir.file("out"),
      {"--granularity", "line", "--budget", "60", "--pool", first, "--pool", second},
      {kLog, "append", first, "4", "--api", "msync", "--then", kLog + " append " + second + " 4 --api msync"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(names_traced_process(o)) << o.err;
  EXPECT_NE(o.err.find("which the program started, also mapped persistent memory (" + second + ")"), std::string::npos)
      << o.err;
  EXPECT_EQ(o.metric("line", "crash_points"), 9u) << "the first program's 8 fences and its exit";
  ASSERT_NE(o.run("line"), nullptr);
  EXPECT_EQ((*o.run("line"))["trace"]["files"], nlohmann::json::array({first}));
}

// A shell runs five programs that each map a file of their own: the first is traced, three of the others are
// named and the last is counted.
TEST(CrashExecProcesses, ProcessesBeyondThreeUntracedAreCounted) {
  testing::TempDir dir;
  std::vector<std::string> options = {"--granularity", "line", "--budget", "20"};
  std::string script = "set -e; ";
  for (int i = 1; i <= 5; ++i) {
    const std::string pool = dir.file("log" + std::to_string(i) + ".pool");
    options.insert(options.end(), {"--pool", pool});
    script += kLog + " append " + pool + " 2 --api msync; ";
  }
  const ExecOutcome o = testing::crash_exec("rm -f " + dir.file("log*.pool"), kLog + " check {}", dir.file("out"),
                                            options, {"/bin/sh", "-c", script});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_NE(o.run("line"), nullptr);
  EXPECT_EQ((*o.run("line"))["trace"]["files"], nlohmann::json::array({dir.file("log1.pool")}));
  const auto& notes = (*o.run("line"))["trace"]["notes"];
  size_t named = 0;
  for (const auto& n : notes) named += n.get<std::string>().find("also mapped persistent memory") != std::string::npos;
  EXPECT_EQ(named, 3u) << notes.dump();
  EXPECT_NE(notes.dump().find("1 more process the program started mapped persistent memory, not traced"),
            std::string::npos)
      << notes.dump();
}

}  // namespace
}  // namespace pmlab::crash::exec
