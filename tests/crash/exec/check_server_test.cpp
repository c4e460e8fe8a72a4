// A checker that stays (--check-server, or --check-python's server) judges the states a checker run per image
// judges, with the same verdicts; one that crashes fails only the image it crashed on and is started again for
// the next; one that keeps what it found is named; one that cannot run stops the run before any state.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../support/crash_exec.hpp"
#include "../../support/temp_dir.hpp"

namespace pmlab::crash::exec {
namespace {

const std::string kLog = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/synced_log.py";

using testing::ExecOutcome;

// synced_log.py's 12 appends (with or without its bug), judged by `check` ("--check" or "--check-server")
// running `command`.
ExecOutcome judged_by(const testing::TempDir& dir, const std::string& out, const std::string& check,
                      const std::string& command, bool bug, std::vector<std::string> options = {}) {
  const std::string pool = dir.file("log");
  options.insert(options.end(), {check, command, "--pool", pool, "--granularity", "line", "--budget", "60"});
  std::vector<std::string> program = {"python3", kLog, "append", pool, "12"};
  if (bug) program.push_back("unsynced-record");
  return testing::crash_exec("rm -f " + pool, "", dir.file(out), options, program);
}

std::vector<std::string> failed_states(const ExecOutcome& o) {
  std::vector<std::string> replays;
  for (const auto& f : o.results["runs"][0]["failures"]) {
    replays.push_back(f["replay"].get<std::string>());
    for (const auto& r : f["alike_replays"]) replays.push_back(r.get<std::string>());
  }
  return replays;
}

TEST(CrashExecCheckServer, JudgesEveryStateAsACheckerRunPerImageDoes) {
  testing::TempDir dir;
  for (bool bug : {false, true}) {
    const std::string name = bug ? "bug" : "good";
    const ExecOutcome each = judged_by(dir, name + "-each", "--check", "python3 " + kLog + " check {}", bug);
    const ExecOutcome served = judged_by(dir, name + "-served", "--check-server", "python3 " + kLog + " serve", bug);
    EXPECT_EQ(served.exit_code, bug ? 1 : 0) << served.err;
    EXPECT_EQ(served.exit_code, each.exit_code) << each.err;
    EXPECT_EQ(served.metric("line", "states_checked"), each.metric("line", "states_checked"));
    EXPECT_GT(served.metric("line", "states_checked"), 20u);
    EXPECT_EQ(served.failures("line"), each.failures("line")) << served.err;
    EXPECT_EQ(served.metric("line", "failure_kinds"), each.metric("line", "failure_kinds"));
    EXPECT_EQ(failed_states(served), failed_states(each));
    if (bug) {
      EXPECT_NE(served.err.find("the check server answered other than ok"), std::string::npos) << served.err;
      EXPECT_NE(served.err.find("| record 0 of 1 counted is not whole"), std::string::npos) << served.err;
      EXPECT_NE(served.err.find("--check-server 'python3 "), std::string::npos) << "the replay line";
    }
  }
}

// The server exits at its every third request: that image fails, and the next is judged by a server started
// anew. One checker, so requests are counted in one row: the first is the random-bytes image.
TEST(CrashExecCheckServer, AServerThatDiesFailsThatImageAndIsStartedAgain) {
  testing::TempDir dir;
  const ExecOutcome o =
      judged_by(dir, "dying", "--check-server", "python3 " + kLog + " serve die-every 3", false, {"--jobs", "1"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const uint64_t judged = o.metric("line", "states_checked");
  EXPECT_GT(judged, 20u);
  EXPECT_EQ(o.failures("line"), (judged + 1) / 3) << o.err;
  EXPECT_NE(o.err.find("the check server exited with 3"), std::string::npos) << o.err;
}

// A server that keeps what it found (every answer "ok" after the first whole log) hides the bug's failures;
// the image of random bytes it failed first, judged again after the states, now passes, and the run says so.
// A server that keeps nothing gets no such note.
TEST(CrashExecCheckServer, AServerThatKeepsWhatItFoundIsNamed) {
  testing::TempDir dir;
  const ExecOutcome kept =
      judged_by(dir, "kept", "--check-server", "python3 " + kLog + " serve remember-ok", true, {"--jobs", "1"});
  EXPECT_EQ(kept.exit_code, 0) << "the bug hidden by what the server kept: " << kept.err;
  EXPECT_NE(kept.err.find("--check-server judged one image of random bytes inconsistent before the crash states and "
                          "consistent after"),
            std::string::npos)
      << kept.err;
  const ExecOutcome fresh = judged_by(dir, "fresh", "--check-server", "python3 " + kLog + " serve", true);
  EXPECT_EQ(fresh.exit_code, 1) << fresh.err;
  EXPECT_EQ(fresh.err.find("judged one image of random bytes"), std::string::npos) << fresh.err;
}

// --check-python runs the same check script per image in a fork of one interpreter: the verdicts of
// `python3 SCRIPT ARGS` run per image, and each image judged by a process that judged none before it.
TEST(CrashExecCheckServer, APythonScriptJudgesAsItsOwnRunsDoEachInAFreshFork) {
  testing::TempDir dir;
  for (bool bug : {false, true}) {
    const std::string name = bug ? "bug" : "good";
    const ExecOutcome each = judged_by(dir, name + "-each", "--check", "python3 " + kLog + " check {}", bug);
    const ExecOutcome forked = judged_by(dir, name + "-forked", "--check-python", kLog + " check {}", bug);
    EXPECT_EQ(forked.exit_code, each.exit_code) << forked.err;
    EXPECT_EQ(forked.metric("line", "states_checked"), each.metric("line", "states_checked"));
    EXPECT_EQ(forked.failures("line"), each.failures("line")) << forked.err;
    EXPECT_EQ(failed_states(forked), failed_states(each));
    if (bug) { EXPECT_NE(forked.err.find("| record 0 of 1 counted is not whole"), std::string::npos) << forked.err; }
    // A Python script run by --check is pointed to --check-python, by the argument that runs it so.
    EXPECT_NE(each.err.find("note: the check started Python for each of the " +
                            std::to_string(each.metric("line", "states_checked")) + " images judged; --check-python '" +
                            kLog + " check {}' runs the same script"),
              std::string::npos)
        << each.err;
    EXPECT_EQ(forked.err.find("the check started Python"), std::string::npos) << forked.err;
  }
  // A module the script imports is imported once, before the forks: what one image's run leaves in it is
  // gone for the next.
  testing::write_all(dir.file("remembered.py"), "judged = []\n");
  testing::write_all(dir.file("fresh.py"),
                     "import sys\nimport remembered\n"
                     "if remembered.judged:\n    sys.exit('judged after ' + remembered.judged[0])\n"
                     "remembered.judged.append(sys.argv[1])\n");
  const ExecOutcome fresh = judged_by(dir, "fresh", "--check-python", dir.file("fresh.py") + " {}", false);
  EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_GT(fresh.metric("line", "states_checked"), 20u);
}

TEST(CrashExecCheckServer, ACommandThatCannotServeStopsTheRun) {
  testing::TempDir dir;
  const ExecOutcome missing = judged_by(dir, "missing", "--check-server", "sh -c 'exit 127'", false);
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("--check-server cannot run: the check server exited with 127"), std::string::npos)
      << missing.err;
  const ExecOutcome braces = judged_by(dir, "braces", "--check-server", "python3 " + kLog + " serve {}", false);
  EXPECT_EQ(braces.exit_code, 2);
  EXPECT_NE(braces.err.find("--check-server takes no {}"), std::string::npos) << braces.err;
  const ExecOutcome no_script = judged_by(dir, "no-script", "--check-python", dir.file("none.py") + " {}", false);
  EXPECT_EQ(no_script.exit_code, 2) << no_script.err;
  EXPECT_NE(no_script.err.find("--check-python cannot run: the check server exited with 127 (cannot read '" +
                               dir.file("none.py") + "'"),
            std::string::npos)
      << no_script.err;
  const ExecOutcome both =
      judged_by(dir, "both", "--check-server", "python3 " + kLog + " serve", false, {"--check", "true"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--check"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace pmlab::crash::exec
