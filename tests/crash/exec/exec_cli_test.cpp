// `pmlab crash exec` end to end, on a program of a user's own (subjects/own/pmem_log.c): every route it
// persists by, every bug it can plant, caught where the bug exists and nowhere else. Budgets are small: a
// planted bug shows in the first states of the crash points after it.
#include <fcntl.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "../../support/crash_exec.hpp"
#include "../../support/temp_dir.hpp"
#include "pmlab/common/files.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

const std::string kLog = std::string(PMLAB_SUBJECTS_DIR) + "/pmem-log";

using Outcome = testing::ExecOutcome;
using testing::crash_exec;

// `replay` (a pmlab crash exec --replay of a failing pmem-log state) judges its state failing again, and the
// image it wrote to `image` is one pmem-log check rejects.
void expect_replayed_failing(const platform::ProcessSpec& replay, const std::string& image) {
  auto replayed = platform::run_process(replay);
  ASSERT_TRUE(replayed.ok());
  EXPECT_EQ(replayed->exit_code, 1) << replayed->err;
  platform::ProcessSpec check;
  check.argv = {kLog, "check", image};
  auto judged = platform::run_process(check);
  ASSERT_TRUE(judged.ok());
  EXPECT_EQ(judged->exit_code, 1) << "the replayed image is the failing one";
}

// pmlab crash exec OPTIONS -- pmem-log append POOL N PROGRAM_ARGS, judged by pmem-log check.
Outcome exec_log(const testing::TempDir& dir, std::vector<std::string> options, std::vector<std::string> program_args,
                 std::string check_args = "", uint64_t n = 8, std::vector<std::string> env = {}) {
  static int runs = 0;
  const std::string pool = dir.file("log.pool");
  if (std::find(options.begin(), options.end(), "--budget") == options.end())
    options.insert(options.begin(), {"--budget", "120"});
  std::vector<std::string> program = {kLog, "append", pool, std::to_string(n)};
  program.insert(program.end(), program_args.begin(), program_args.end());
  return crash_exec("rm -f " + pool, kLog + " check {} " + check_args, dir.file("out-" + std::to_string(++runs)),
                    options, program, std::move(env));
}

// The program and its checks run without address-space randomization, so that pointers a program stores in its
// pool repeat from run to run; --keep-aslr leaves it on. Each check notes the personality it ran with.
TEST(CrashExec, TheProgramAndItsChecksRunWithoutAslrUnlessKept) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool"), seen = dir.file("personality");
  for (const bool keep : {false, true}) {
    std::vector<std::string> options = {"--granularity", "line", "--budget", "4"};
    if (keep) options.push_back("--keep-aslr");
    const Outcome o = crash_exec("rm -f " + pool, "cat /proc/self/personality > " + seen + " && " + kLog + " check {}",
                                 dir.file(keep ? "kept" : "off"), options, {kLog, "append", pool, "4"});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const unsigned long persona = std::stoul(testing::read_all(seen), nullptr, 16);
    if (!keep && (persona & ADDR_NO_RANDOMIZE) == 0) {
      ASSERT_NE(o.err.find("address-space randomization stays on"), std::string::npos) << o.err;
      GTEST_SKIP() << "the kernel refuses to turn ASLR off here: " << o.err;
    }
    if (keep && (persona & ADDR_NO_RANDOMIZE) != 0) GTEST_SKIP() << "this test runs without ASLR already";
    EXPECT_EQ((persona & ADDR_NO_RANDOMIZE) != 0, !keep) << (keep ? "--keep-aslr" : "default");
  }
}

TEST(CrashExec, ACorrectProgramPassesOnEveryRoute) {
  testing::TempDir dir;
  for (const char* api : {"libpmem", "pmem2", "msync", "asm"}) {
    std::vector<std::string> options;
    if (std::string(api) == "msync" || std::string(api) == "asm") options = {"--pool", dir.file("log.pool")};
    const Outcome o = exec_log(dir, options, {"--api", api});
    EXPECT_EQ(o.exit_code, 0) << api << ": " << o.err;
    EXPECT_EQ(o.failures("line"), 0u) << api;
    EXPECT_EQ(o.failures("word"), 0u) << api;
    for (const auto& r : o.results["runs"]) {
      EXPECT_GT(r["metrics"]["states_checked"]["value"].get<double>(), 0) << api;
      EXPECT_EQ(r["metrics"]["crash_points"]["value"].get<double>(), 17) << api << ": 16 fences and the exit";
    }
    EXPECT_EQ(o.err.find("cannot see them"), std::string::npos) << api << ": every instruction is reported";
  }
}

// A program unmodified, with its own clwb, clflush, sfence and non-temporal stores and no pmlab/trace.h call:
// the runtime traps each instruction and reports it as the program runs it. The correct log passes, as the
// same program telling pmlab through pmlab/trace.h does, at the same crash points; the bugs are caught in
// EveryPlantedBugIsCaughtOnEveryRouteWhereItIsOne.
TEST(CrashExec, AProgramsOwnInstructionsAreTrappedAsItRunsThem) {
  testing::TempDir dir;
  for (const char* api : {"asm-unreported", "nt-unreported"}) {
    const Outcome o = exec_log(dir, {"--pool", dir.file("log.pool")}, {"--api", api});
    EXPECT_EQ(o.exit_code, 0) << api << ": " << o.err;
    EXPECT_EQ(o.failures("line"), 0u) << api;
    EXPECT_EQ(o.failures("word"), 0u) << api;
    for (const auto& r : o.results["runs"])
      EXPECT_EQ(r["metrics"]["crash_points"]["value"].get<double>(), 17) << api << ": 16 fences and the exit";
    EXPECT_NE(o.err.find("instructions are trapped"), std::string::npos) << api << ": " << o.err;
    EXPECT_EQ(o.err.find("cannot see them"), std::string::npos) << api << ": " << o.err;
  }
  // Two threads, each blocking every signal, as servers' workers do: SIGTRAP stays the runtime's. A program
  // that raises a SIGTRAP of its own has it caught by its own handler, which sigaction shows.
  const Outcome blocked =
      exec_log(dir, {"--pool", dir.file("log.pool")},
               {"--api", "asm-unreported", "--threads", "2", "--signals", "blocked"}, "--threads 2");
  EXPECT_EQ(blocked.exit_code, 0) << blocked.err;
  EXPECT_EQ(blocked.failures("line"), 0u);
  const Outcome own =
      exec_log(dir, {"--pool", dir.file("log.pool")}, {"--api", "asm-unreported", "--own-sigtrap", "yes"});
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(own.failures("line"), 0u);
}

// A plugin's own instructions: pmem-log loads its primitives (libpmem-log-plugin.so) with dlopen once it runs,
// by their path or by their name alone, which the loader looks up in the program's RUNPATH: the caller's, so
// the runtime that interposes dlopen must leave the program the caller. The first run shows the module, the
// second traps it as it loads (before dlsym returns its functions): the log passes at the crash points of
// the routes that persist in the executable, and a missing fence fails.
TEST(CrashExec, APluginsOwnInstructionsAreTrappedAsItLoadsThem) {
  testing::TempDir dir;
  for (const char* by : {"path", "name"}) {
    const Outcome o = exec_log(dir, {"--pool", dir.file("log.pool")}, {"--api", "plugin", "--plugin-by", by});
    EXPECT_EQ(o.exit_code, 0) << by << ": " << o.err;
    EXPECT_EQ(o.failures("line"), 0u) << by;
    for (const auto& r : o.results["runs"])
      EXPECT_EQ(r["metrics"]["crash_points"]["value"].get<double>(), 17) << by << ": 16 fences and the exit";
    EXPECT_NE(o.err.find("loaded later are trapped too: 3 in libpmem-log-plugin.so"), std::string::npos)
        << by << ": " << o.err;
    EXPECT_EQ(o.err.find("cannot see them"), std::string::npos) << by << ": " << o.err;
  }
  const Outcome bug = exec_log(dir, {"--pool", dir.file("log.pool")}, {"--api", "plugin", "--bug", "no-fence"});
  EXPECT_EQ(bug.exit_code, 1) << bug.err;
  EXPECT_GT(bug.failures("line"), 0u) << bug.err;
}

// A program started by a script: the executable pmlab runs is the shell's, so the first traced run shows
// which module holds the instructions, and the run is traced again with them trapped. A bug still fails.
TEST(CrashExec, AScriptsProgramIsTrappedFromItsSecondRun) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  for (const bool bug : {false, true}) {
    const std::string append = kLog + " append " + pool + " 8 --api nt-unreported" + (bug ? " --bug no-fence" : "");
    const Outcome o = crash_exec("rm -f " + pool, kLog + " check {}", dir.file(bug ? "bug" : "correct"),
                                 {"--pool", pool, "--budget", "120"}, {"/bin/sh", "-c", append});
    EXPECT_EQ(o.exit_code, bug ? 1 : 0) << o.err;
    EXPECT_EQ(o.failures("line") > 0, bug) << o.err;
    EXPECT_NE(o.err.find("instructions are trapped"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("the check started Python"), std::string::npos) << "a compiled checker: " << o.err;
  }
}

// Left to report its own instructions (--own-instructions reported), a program whose clwb and sfence go
// unreported shows no write-back and no fence, and every record it persisted looks lost: the run says so,
// and where the instructions are.
TEST(CrashExec, InstructionsAProgramForgotToReportAreNamedWhereTheyAre) {
  testing::TempDir dir;
  const Outcome o =
      exec_log(dir, {"--pool", dir.file("log.pool"), "--own-instructions", "reported"}, {"--api", "asm-unreported"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  std::string notes;
  for (const auto& r : o.results["runs"])
    for (const auto& n : r["trace"]["notes"]) notes += n.get<std::string>() + "\n";
  EXPECT_NE(notes.find("cannot see them"), std::string::npos) << notes;
  EXPECT_NE(notes.find("in flush (pmem_log.c:"), std::string::npos) << notes;
  EXPECT_NE(notes.find("sfence in fence (pmem_log.c:"), std::string::npos) << notes;
  EXPECT_NE(o.err.find("note: the program's own code has flush"), std::string::npos) << o.err;
}

TEST(CrashExec, EveryPlantedBugIsCaughtOnEveryRouteWhereItIsOne) {
  testing::TempDir dir;
  for (const char* api : {"libpmem", "pmem2", "asm", "asm-unreported", "nt-unreported"}) {
    std::vector<std::string> pool;
    if (std::string(api).find("asm") == 0 || std::string(api) == "nt-unreported")
      pool = {"--pool", dir.file("log.pool")};
    for (const char* bug : {"no-flush", "no-fence", "commit-first", "short-persist"}) {
      const Outcome o = exec_log(dir, pool, {"--api", api, "--bug", bug});
      EXPECT_EQ(o.exit_code, 1) << api << " " << bug;
      EXPECT_GT(o.failures("line"), 0u) << api << " " << bug;
    }
  }
  // msync writes back and fences whole pages at once: only a missing msync or a misordered commit is a bug.
  const std::vector<std::string> pool = {"--pool", dir.file("log.pool")};
  EXPECT_GT(exec_log(dir, pool, {"--api", "msync", "--bug", "no-flush"}).failures("line"), 0u);
  EXPECT_GT(exec_log(dir, pool, {"--api", "msync", "--bug", "commit-first"}).failures("line"), 0u);
  EXPECT_EQ(exec_log(dir, pool, {"--api", "msync", "--bug", "short-persist"}).failures("line"), 0u);
}

// A program that maps its file itself may make it durable by syncing the file: fsync, fdatasync, syncfs and
// sync write back every persistent mapping of it and fence (a crash point each), so the correct log passes
// and its bugs fail. sync_file_range writes back and promises no durability: no fence, and a log that relies
// on it loses what it appended, though its lines were written back; msync(MS_ASYNC) does nothing at all.
TEST(CrashExec, ProgramsThatSyncTheirFileAreJudgedAtTheirSyncs) {
  testing::TempDir dir;
  const std::vector<std::string> pool = {"--pool", dir.file("log.pool"), "--granularity", "line"};
  for (const char* api : {"fsync", "fdatasync", "syncfs", "sync"}) {
    const Outcome o = exec_log(dir, pool, {"--api", api});
    EXPECT_EQ(o.exit_code, 0) << api << ": " << o.err;
    EXPECT_EQ(o.failures("line"), 0u) << api;
    ASSERT_EQ(o.results["runs"].size(), 1u) << api;
    const auto& run = o.results["runs"][0];
    EXPECT_EQ(run["metrics"]["crash_points"]["value"].get<double>(), 17) << api << ": 16 syncs and the exit";
    // Every fence was a sync the program called, and the summary says which.
    const auto& by_call = run["trace"]["fences_by_call"];
    EXPECT_GT(by_call.value(api, 0), 0) << by_call.dump();
    EXPECT_FALSE(by_call.contains("fence")) << by_call.dump();
    double fences = 0;
    for (const auto& [call, n] : by_call.items()) fences += n.get<double>();
    EXPECT_EQ(fences, run["metrics"]["fences"]["value"].get<double>()) << by_call.dump();
    EXPECT_NE(o.err.find("16 fences ("), std::string::npos) << o.err;
    for (const auto& f : run["findings"])
      EXPECT_NE(f["kind"], "redundant_writeback") << api << ": the kernel writes back dirty pages only";
    for (const char* bug : {"no-flush", "commit-first"}) {
      const Outcome failed = exec_log(dir, pool, {"--api", api, "--bug", bug});
      EXPECT_GT(failed.failures("line"), 0u) << api << " " << bug;
      // A crash point at a sync is named by the program's call, not as a fence it never issued.
      EXPECT_NE(failed.err.find("(" + std::string(api) + " in "), std::string::npos) << failed.err;
      size_t at_syncs = 0;
      for (const auto& f : failed.results["runs"][0]["failures"]) at_syncs += f["call"] == api ? 1 : 0;
      EXPECT_GT(at_syncs, 0u) << api << " " << bug;
    }
  }
  const Outcome range = exec_log(dir, pool, {"--api", "sync-file-range"});
  EXPECT_EQ(range.exit_code, 1) << range.err;
  EXPECT_GT(range.failures("line"), 0u);
  ASSERT_EQ(range.results["runs"].size(), 1u);
  const auto& metrics = range.results["runs"][0]["metrics"];
  EXPECT_EQ(metrics["fences"]["value"].get<double>(), 0) << metrics.dump();
  EXPECT_EQ(metrics["writebacks"]["value"].get<double>(), 16) << metrics.dump();
  // msync(MS_ASYNC) does nothing on Linux: no event, and a note says so.
  const Outcome async = exec_log(dir, pool, {"--api", "msync-async"});
  EXPECT_EQ(async.exit_code, 1) << async.err;
  EXPECT_GT(async.failures("line"), 0u);
  EXPECT_EQ(async.results["runs"][0]["metrics"]["writebacks"]["value"].get<double>(), 0);
  EXPECT_NE(async.err.find("msync without MS_SYNC"), std::string::npos) << async.err;
}

// An append that returns before its commit is fenced leaves a consistent prefix after any crash: only a check
// that requires every returned append (PMLAB_CRASH_OPS_DONE, from the program's pmlab_op_end) fails it.
TEST(CrashExec, AReturnedOperationACrashTakesBackFailsAgainstTheOperationsMarked) {
  testing::TempDir dir;
  const Outcome returned = exec_log(dir, {"--granularity", "line"}, {"--bug", "unfenced-commit"});
  EXPECT_EQ(returned.exit_code, 1) << returned.err;
  EXPECT_GT(returned.failures("line"), 0u);
  EXPECT_NE(returned.err.find("appends had returned"), std::string::npos) << returned.err;
  EXPECT_NE(returned.err.find("operations: "), std::string::npos) << returned.err;
  ASSERT_FALSE(returned.results["runs"][0]["failures"].empty());
  const auto& first = returned.results["runs"][0]["failures"][0];
  EXPECT_GT(first["operations_returned"].get<uint64_t>(), 0u);
  EXPECT_GE(first["operations_begun"].get<uint64_t>(), first["operations_returned"].get<uint64_t>());
  const Outcome prefix = exec_log(dir, {"--granularity", "line"}, {"--bug", "unfenced-commit"}, "--require prefix");
  EXPECT_EQ(prefix.exit_code, 0) << prefix.err;
  EXPECT_EQ(prefix.failures("line"), 0u);
  // The marks cost the correct program nothing: it still passes.
  EXPECT_EQ(exec_log(dir, {"--granularity", "line"}, {}).failures("line"), 0u);
}

// The name each way of finding stores goes by in a run's results.
std::string tracking_name(const std::string& how) {
  return how == "signals" ? "SIGBUS" : how == "faults" ? "reported" : how == "scan" ? "scanned" : "compared";
}

// The runtime finds plain stores four ways (faults as signals to the storing thread, faults reported to its
// own thread, a scan of write-protected pages, a comparison of every page): each sees the same stores, so
// each gives the same crash points and states.
TEST(CrashExec, EveryWayOfFindingStoresGivesTheSameCrashStates) {
  testing::TempDir dir;
  std::vector<std::pair<double, double>> seen;
  for (const char* how : {"signals", "faults", "scan", "compare"}) {
    const Outcome o = exec_log(dir, {"--granularity", "line"}, {"--bug", "no-flush"}, "", 8,
                               {std::string("PMLAB_TRACE_WRITES=") + how});
    ASSERT_FALSE(o.results.is_null()) << how << ": " << o.err;
    const auto& run = o.results["runs"][0];
    const std::string tracking = run["trace"]["write_tracking"];
    if (tracking.find(tracking_name(how)) == std::string::npos) {
      // A machine without this way (an older kernel, no userfaultfd for this user) falls back, and says why.
      EXPECT_FALSE(run["trace"]["notes"].empty()) << how << ": fell back to " << tracking << " without a note";
    }
    seen.emplace_back(run["metrics"]["states_checked"]["value"].get<double>(),
                      run["metrics"]["failures"]["value"].get<double>());
  }
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0], seen[2]);
  EXPECT_EQ(seen[0], seen[3]);
  EXPECT_GT(seen[0].second, 0);
}

// What a program does beside persisting stays its own under every way of finding stores: records the
// kernel stores into the log (read from a pipe: in signals mode a kernel store cannot take a signal),
// threads that block every signal (a write fault there would kill the program), a SIGBUS handler of its
// own (its SIGBUS past a file's end must reach it).
TEST(CrashExec, KernelStoresBlockedSignalsAndTheProgramsOwnSigbusSurviveEveryWay) {
  testing::TempDir dir;
  const std::vector<std::string> shapes = {"--records-by", "read", "--signals", "blocked", "--own-sigbus", "yes"};
  for (const char* bug : {"none", "no-flush"}) {
    std::vector<std::pair<double, double>> seen;
    for (const char* how : {"signals", "faults", "scan"}) {
      SCOPED_TRACE(std::string(how) + ", bug " + bug);
      std::vector<std::string> args = shapes;
      args.insert(args.end(), {"--bug", bug});
      const Outcome o =
          exec_log(dir, {"--granularity", "line"}, args, "", 8, {std::string("PMLAB_TRACE_WRITES=") + how});
      ASSERT_FALSE(o.results.is_null()) << o.err;
      const auto& run = o.results["runs"][0];
      const std::string tracking = run["trace"]["write_tracking"];
      if (tracking.find(tracking_name(how)) == std::string::npos) {
        EXPECT_FALSE(run["trace"]["notes"].empty()) << "fell back to " << tracking << " without a note";
      }
      EXPECT_EQ(o.exit_code, std::string(bug) == "none" ? 0 : 1) << o.err;
      seen.emplace_back(run["metrics"]["states_checked"]["value"].get<double>(),
                        run["metrics"]["failures"]["value"].get<double>());
    }
    EXPECT_EQ(seen[0], seen[1]);
    EXPECT_EQ(seen[0], seen[2]);
    EXPECT_EQ(seen[0].second > 0, std::string(bug) != "none");
  }
}

TEST(CrashExec, ATornCommitShowsAtWordGranularityOnly) {
  testing::TempDir dir;
  const Outcome o = exec_log(dir, {}, {"--bug", "torn-commit"}, "--bug torn-commit");
  EXPECT_EQ(o.failures("line"), 0u) << "a line persists whole";
  EXPECT_GT(o.failures("word"), 0u) << "the two words of a misaligned commit persist apart";
}

TEST(CrashExec, EadrForgivesAMissingFlushButNotAMissingFence) {
  testing::TempDir dir;
  EXPECT_EQ(exec_log(dir, {"--domain", "eadr"}, {"--bug", "no-flush"}).exit_code, 0);
  EXPECT_GT(exec_log(dir, {"--domain", "eadr"}, {"--bug", "no-fence"}).failures("line"), 0u);
}

// The two threads interleave differently from run to run, and so do the crash points where the bug shows:
// a budget that covers every state of every point finds it in every interleaving.
TEST(CrashExec, AFenceOrdersOnlyItsOwnThreadsWriteBacks) {
  testing::TempDir dir;
  EXPECT_EQ(exec_log(dir, {}, {"--threads", "2"}, "--threads 2").exit_code, 0);
  EXPECT_GT(exec_log(dir, {"--granularity", "line", "--budget", "1000"}, {"--threads", "2", "--bug", "cross-fence"},
                     "--threads 2")
                .failures("line"),
            0u);
}

TEST(CrashExec, AFailureNamesTheProgramsSourceLinesAndReplays) {
  testing::TempDir dir;
  const Outcome o = exec_log(dir, {"--granularity", "line"}, {"--bug", "no-flush"});
  ASSERT_EQ(o.exit_code, 1);
  const auto& failure = o.results["runs"][0]["failures"][0];
  EXPECT_NE(failure["site"].get<std::string>().find("pmem_log.c:"), std::string::npos) << failure.dump();
  // The fence is append's, which the compiler inlines into run_worker: both are frames, as a debugger shows.
  std::string stack;
  for (const auto& frame : failure["stack"]) stack += frame.get<std::string>() + "\n";
  EXPECT_NE(stack.find("append (pmem_log.c:"), std::string::npos) << stack;
  EXPECT_NE(stack.find("run_worker (pmem_log.c:"), std::string::npos) << stack;
  EXPECT_FALSE(failure["lines"].empty());
  EXPECT_NE(o.err.find("never written back"), std::string::npos) << o.err;
  // The replay rebuilds that state from the kept trace, writes its image, and the checker rejects it again.
  const std::string trace = o.results["runs"][0]["trace"]["path"].get<std::string>();
  const std::string image = dir.file("replayed.pool");
  platform::ProcessSpec spec;
  spec.argv = {PMLAB_CLI_PATH,
               "crash",
               "exec",
               "--check",
               kLog + " check {}",
               "--budget",
               "120",
               "--granularity",
               "line",
               "--domain",
               "adr",
               "--trace",
               trace,
               "--replay",
               failure["replay"].get<std::string>(),
               "--image",
               image,
               "--out",
               dir.file("replay-out"),
               "--",
               kLog,
               "append",
               dir.file("log.pool"),
               "8",
               "--bug",
               "no-flush"};
  expect_replayed_failing(spec, image);
}

// Paths with spaces and quotes, and a check that quotes its `{}` as find's users do: the checker is given the
// image's path whatever the quoting (a correct program passes), and a failure's replay line, pasted into a
// shell, rebuilds the failing state.
TEST(CrashExec, AQuotedPlaceholderAndAPastedReplayLineReadPathsAsTheyAre) {
  testing::TempDir dir;
  const std::string home = dir.file("it's a dir");
  ASSERT_TRUE(std::filesystem::create_directory(home));
  const std::string pool = home + "/log $1.pool";
  auto exec = [&](const std::string& check, std::vector<std::string> bug, const std::string& out) {
    std::vector<std::string> program = {kLog, "append", pool, "4"};
    program.insert(program.end(), bug.begin(), bug.end());
    return crash_exec("rm -f " + shell_word(pool), check, dir.file(out), {"--granularity", "line", "--budget", "40"},
                      program);
  };
  // A script that reads the image's path from the environment, run by a shell the check names itself.
  const std::string script = dir.file("check.sh");
  { std::ofstream(script) << "exec " << shell_word(kLog) << " check \"$PMLAB_CRASH_IMAGE\"\n"; }
  for (const std::string& check :
       {kLog + " check \"{}\"", kLog + " check '{}'", kLog + " check {} && true", "/bin/sh " + script}) {
    const Outcome o = exec(check, {}, "out-correct");
    EXPECT_EQ(o.exit_code, 0) << check << "\n" << o.err;
    EXPECT_EQ(o.failures("line"), 0u) << check;
    std::filesystem::remove_all(dir.file("out-correct"));
  }
  const Outcome o = exec(kLog + " check \"{}\"", {"--bug", "no-flush"}, "out");
  ASSERT_EQ(o.exit_code, 1) << o.err;
  const size_t at = o.err.find("    replay: ");
  ASSERT_NE(at, std::string::npos) << o.err;
  std::string line = o.err.substr(at + 12, o.err.find('\n', at) - at - 12);
  ASSERT_TRUE(line.starts_with("pmlab ")) << line;
  const std::string image = home + "/replayed 'image'";
  const size_t file = line.find(" --image FILE ");
  ASSERT_NE(file, std::string::npos) << line;
  line.replace(file, 14, " --image " + shell_word(image) + " ");
  line.replace(0, 5, shell_word(PMLAB_CLI_PATH));
  platform::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", line};
  expect_replayed_failing(spec, image);
}

// `{}` names the first --pool's image: a --pool the run never mapped or wrote (a typo) is named in a note, as
// every state's check is then given a path where no file is; the --pool it maps gets none.
TEST(CrashExec, AFirstPoolTheRunNeverTouchedIsNamed) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  for (const std::string& named : {dir.file("typo.pool"), pool}) {
    const Outcome o =
        crash_exec("rm -f " + pool, kLog + " check {}", dir.file("out-" + std::to_string(named == pool)),
                   {"--pool", named, "--granularity", "line", "--budget", "8"}, {kLog, "append", pool, "2"});
    const bool noted = o.err.find("the first --pool, " + named + ", whose crash image {}") != std::string::npos;
    EXPECT_EQ(noted, named != pool) << o.err;
    if (named != pool) EXPECT_NE(o.err.find("(the run's files: " + pool + ")"), std::string::npos) << o.err;
    else EXPECT_EQ(o.exit_code, 0) << o.err;
  }
}

// ^C reaches pmlab alone (the program and the checks run in process groups of their own): pmlab kills them,
// removes its scratch files and exits 130, whether it was tracing the program, judging its states or waiting
// for a check server's answer (well before the check's --timeout). The program and the checkers each note
// their pid and pmlab's (their parent) and sleep; pmlab gets its SIGINT once the note is there.
TEST(CrashExec, AStopSignalKillsTheProgramAndTheChecksAndLeavesNoScratch) {
  testing::TempDir dir;
  const std::string pids = dir.file("pids"), pool = dir.file("log.pool"), sleeper = dir.file("sleeper.sh");
  { std::ofstream(sleeper) << "echo $$ $PPID >> " << pids << "\nread request; sleep 300\n"; }
  auto noted = [&] {
    std::vector<std::pair<long, long>> lines;
    std::ifstream in(pids);
    for (long pid, pmlab; in >> pid >> pmlab;) lines.emplace_back(pid, pmlab);
    return lines;
  };
  auto stopped = [&](const std::string& judge, const std::string& check, std::vector<std::string> program,
                     const std::string& out) {
    std::vector<std::string> args = {
        PMLAB_CLI_PATH, "crash", "exec",   "--setup", "rm -f " + pool, judge,         check,
        "--timeout",    "600",   "--jobs", "1",       "--out",         dir.file(out), "--"};
    args.insert(args.end(), program.begin(), program.end());
    const std::string err = dir.file(out + ".err");
    const size_t before = noted().size();
    std::vector<char*> argv;  // made before the fork: the child only dups and execs
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const pid_t pmlab = fork();
    if (pmlab == 0) {
      dup2(err_fd, STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    ::close(err_fd);
    for (int i = 0; i < 1200 && noted().size() == before; ++i) usleep(50'000);
    EXPECT_GT(noted().size(), before) << "nothing was started";
    kill(pmlab, SIGINT);
    int status = 0;
    // Far longer than the second a stop takes, far shorter than the check's timeout: a wait for the check to
    // end of itself shows as pmlab still running.
    for (int i = 0; i < 1200 && waitpid(pmlab, &status, WNOHANG) == 0; ++i) usleep(50'000);
    if (waitpid(pmlab, &status, WNOHANG) == 0) {
      ADD_FAILURE() << "pmlab still running 60 s after SIGINT (" << out << ")";
      kill(pmlab, SIGKILL);
      waitpid(pmlab, &status, 0);
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
    EXPECT_NE(testing::read_all(err).find("pmlab crash exec: stopped on SIGINT"), std::string::npos)
        << testing::read_all(err);
  };
  stopped("--check", "true {}", {"/bin/sh", sleeper}, "tracing");
  stopped("--check", "/bin/sh " + sleeper + " {}", {kLog, "append", pool, "2"}, "judging");
  stopped("--check-server", "/bin/sh " + sleeper, {kLog, "append", pool, "2"}, "asking");
  const auto sides = noted();
  EXPECT_EQ(sides.size(), 3u) << "the program, a checker and a check server noted themselves";
  for (const auto& [pid, pmlab] : sides) {
    EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(pid))) << "still running: " << pid;
    const std::string scratch = "pmlab-exec-" + std::to_string(pmlab) + "-";
    for (const auto& e : std::filesystem::directory_iterator(scratch_base_directory()))
      EXPECT_FALSE(e.path().filename().string().starts_with(scratch)) << e.path();
  }
}

// A failing checker's lines are printed marked and made printable: an escape sequence in them cannot move or
// clear the user's terminal.
TEST(CrashExec, ACheckersOutputIsPrintedMarkedAndPrintable) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  const Outcome o = crash_exec("rm -f " + pool, "printf '\\033[2Jcleared\\nsecond line\\n'; exit 1", dir.file("out"),
                               {"--granularity", "line", "--budget", "4"}, {kLog, "append", pool, "2"});
  ASSERT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("| \\x1b[2Jcleared\n"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("| second line\n"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find('\x1b'), std::string::npos) << "a raw escape reached the terminal";
}

TEST(CrashExec, ShardsAddUpToTheWholeRun) {
  testing::TempDir dir;
  const std::string trace = dir.file("shared.pmtrace");
  auto totals = [](const nlohmann::json& results) {
    std::pair<double, double> t{0, 0};
    for (const auto& r : results["runs"]) {
      t.first += r["metrics"]["states_checked"]["value"].get<double>() +
                 r["metrics"]["duplicate_states"]["value"].get<double>();
      t.second += r["metrics"]["failures"]["value"].get<double>();
    }
    return t;
  };
  const Outcome whole = exec_log(dir, {"--trace", trace}, {"--bug", "no-fence"});
  const Outcome one = exec_log(dir, {"--trace", trace, "--shard", "1/2"}, {"--bug", "no-fence"});
  const Outcome two = exec_log(dir, {"--trace", trace, "--shard", "2/2"}, {"--bug", "no-fence"});
  const auto w = totals(whole.results), a = totals(one.results), b = totals(two.results);
  EXPECT_EQ(a.first + b.first, w.first);
  EXPECT_EQ(a.second + b.second, w.second);
  EXPECT_GT(w.second, 0);
  // pmlab crash merge adds the shards up to the same totals.
  platform::ProcessSpec merge;
  merge.argv = {PMLAB_CLI_PATH, "crash", "merge", one.out, two.out, "--out", dir.file("merged")};
  auto merged = platform::run_process(merge);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->exit_code, 1) << merged->err << " (failures: exit 1)";
  const auto merged_results = nlohmann::json::parse(testing::read_all(dir.file("merged") + "/results.json"));
  const auto m = totals(merged_results);
  EXPECT_EQ(m.second, w.second);
  // Each cause once, as the whole run shows it: its earliest failure, the others counted and listed alike.
  auto causes = [](const nlohmann::json& results) {
    std::vector<std::string> out;
    for (const auto& r : results["runs"])
      for (const auto& f : r["failures"])
        out.push_back(f["cause"].get<std::string>() + " " + f["replay"].get<std::string>() + " " +
                      std::to_string(f["alike"].get<uint64_t>()) + " " + f["alike_replays"].dump());
    return out;
  };
  EXPECT_EQ(causes(merged_results), causes(whole.results));
  EXPECT_EQ(merged_results["runs"][0]["metrics"]["failure_kinds"],
            whole.results["runs"][0]["metrics"]["failure_kinds"]);
}

// A bug shows at every crash point after it: its failures are shown once per cause, each standing for those
// alike to it, and every failure is counted in one cause.
TEST(CrashExec, FailuresOfOneCauseAreShownOnce) {
  testing::TempDir dir;
  const Outcome o = exec_log(dir, {"--granularity", "line"}, {"--bug", "no-flush"});
  ASSERT_EQ(o.exit_code, 1) << o.err;
  const auto& failures = o.results["runs"][0]["failures"];
  ASSERT_LT(failures.size(), 20u) << "every cause is shown";
  uint64_t counted = 0;
  std::set<std::string> causes;
  for (const auto& f : failures) {
    counted += 1 + f["alike"].get<uint64_t>();
    EXPECT_TRUE(causes.insert(f["cause"].get<std::string>()).second) << f.dump();
    EXPECT_EQ(f["alike_replays"].size(), std::min<uint64_t>(f["alike"].get<uint64_t>(), 8)) << f.dump();
  }
  EXPECT_EQ(counted, o.failures("line"));
  EXPECT_EQ(o.metric("line", "failure_kinds"), failures.size());
  EXPECT_LT(failures.size(), o.failures("line")) << "a missing flush fails at many crash points alike";
  EXPECT_NE(o.err.find(" failures of " + std::to_string(failures.size()) + (failures.size() == 1 ? " kind" : " kinds")),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("more like it ("), std::string::npos) << o.err;
}

// A PMDK subject (subjects/pmdk): `checker TYPE create` as the setup, `program TYPE OP POOL N` traced, and
// `checker TYPE check {} N` as the judge.
Outcome exec_pmdk(const testing::TempDir& dir, const std::string& checker, const std::string& program,
                  const std::string& type, const std::string& op, int n, std::vector<std::string> options,
                  std::vector<std::string> env = {}) {
  const std::string pool = dir.file(type + ".pool"), map = std::string(PMLAB_SUBJECTS_DIR) + "/" + checker;
  static int runs = 0;
  return crash_exec("rm -f " + pool + " && " + map + " " + type + " create " + pool,
                    map + " " + type + " check {} " + std::to_string(n), dir.file("map-out-" + std::to_string(++runs)),
                    options, {std::string(PMLAB_SUBJECTS_DIR) + "/" + program, type, op, pool, std::to_string(n)},
                    std::move(env));
}

// PMDK's example maps, unmodified and with planted bugs: libpmemobj's persistence reaches the runtime through
// libpmem, and the unmodified checker (PMDK's recovery, the map's check) judges.
Outcome exec_map(const testing::TempDir& dir, const std::string& program, const std::string& type, int n,
                 std::vector<std::string> options, std::vector<std::string> env = {}) {
  return exec_pmdk(dir, "pmdk-map", program, type, "insert", n, std::move(options), std::move(env));
}

TEST(CrashExec, PmdkExampleMapsPassUnmodifiedAndFailWithAPlantedBug) {
  if (!std::filesystem::exists(std::string(PMLAB_SUBJECTS_DIR) + "/pmdk-map"))
    GTEST_SKIP() << "subjects/pmdk not built";
  testing::TempDir dir;
  const Outcome clean = exec_map(dir, "pmdk-map", "btree", 8, {"--granularity", "line", "--budget", "100"});
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  ASSERT_FALSE(clean.results.is_null());
  const auto& run = clean.results["runs"][0];
  EXPECT_GT(run["metrics"]["fences"]["value"].get<double>(), 16) << "libpmemobj's drains are crash points";
  EXPECT_GT(run["metrics"]["writebacks"]["value"].get<double>(), 16) << "and its flushes are seen";
  // libpmemobj's redundant write-backs are its own cost, told apart from the map's findings and after them.
  bool library_seen = false, program_seen = false;
  for (const auto& f : run["findings"]) {
    const std::string site = f["site"];
    const bool in_library = f["in_library"];
    EXPECT_EQ(in_library, site.find("libpmemobj") != std::string::npos) << site;
    EXPECT_FALSE(!in_library && library_seen) << "the program's findings come first: " << site;
    (in_library ? library_seen : program_seen) = true;
  }
  EXPECT_TRUE(library_seen && program_seen) << run["findings"].dump();
  // A removed TX_ADD: a crash before the commit rolls the allocation back, not the node that links it.
  const Outcome bug =
      exec_map(dir, "pmdk-map-bug-btree-leaf-no-snapshot", "btree", 8, {"--granularity", "line", "--budget", "100"});
  EXPECT_EQ(bug.exit_code, 1) << bug.err;
  EXPECT_GT(bug.failures("line"), 0u);
}

// libpmemblk's atomic block writes and libpmemlog's atomic appends, PMDK's library code itself: no state of a
// line or word granularity breaks them. Both rest on 8-byte stores being atomic (the BTT's map entries, the
// log's write offset), so byte granularity, which tears those stores, must make the checker fail some states.
TEST(CrashExec, PmdkBlockWritesAndLogAppendsHoldUnlessEightByteStoresTear) {
  if (!std::filesystem::exists(std::string(PMLAB_SUBJECTS_DIR) + "/pmdk-io"))
    GTEST_SKIP() << "subjects/pmdk's pmdk-io not built (libpmemblk or libpmemlog missing)";
  testing::TempDir dir;
  for (const std::string type : {"blk", "log"}) {
    const Outcome whole = exec_pmdk(dir, "pmdk-io", "pmdk-io", type, "write", 60, {"--budget", "200"});
    EXPECT_EQ(whole.exit_code, 0) << type << ": " << whole.err;
    EXPECT_EQ(whole.failures("line"), 0u) << type;
    EXPECT_EQ(whole.failures("word"), 0u) << type;
    const Outcome torn =
        exec_pmdk(dir, "pmdk-io", "pmdk-io", type, "write", 60, {"--granularity", "byte", "--budget", "1000"});
    EXPECT_EQ(torn.exit_code, 1) << type << ": " << torn.err;
    EXPECT_GT(torn.failures("byte"), 0u) << type << ": " << torn.err;
  }
}

// PMDK's libpmem2 redo example as shipped: redo_commit persists the address of its argument, not the log, so
// under ADR a crash can apply log entries that never reached memory. Its own check finds the list broken in
// some states, and the stray write-back is named at its line; with the log persisted, no state fails.
TEST(CrashExec, FindsTheUnpersistedRedoLogOfPmdksLibpmem2Example) {
  const std::string redo = std::string(PMLAB_SUBJECTS_DIR) + "/pmdk2-redo";
  if (!std::filesystem::exists(redo)) GTEST_SKIP() << "libpmem2's example sources were not found";
  testing::TempDir dir;
  auto crash_test = [&](const std::string& program) {
    const std::string pool = dir.file(program + ".pool");
    return crash_exec(
        "rm -f " + pool + " && truncate -s 64K " + pool, redo + " check {}", dir.file(program),
        {"--domain", "adr,eadr", "--granularity", "line", "--budget", "400", "--timeout", "5"},
        {std::string(PMLAB_SUBJECTS_DIR) + "/" + program, "add", pool, "1", "10", "2", "20", "3", "30", "4", "40"});
  };
  const Outcome shipped = crash_test("pmdk2-redo");
  EXPECT_EQ(shipped.exit_code, 1) << shipped.err;
  ASSERT_EQ(shipped.results["runs"].size(), 2u) << shipped.err;
  EXPECT_GT(shipped.results["runs"][0]["metrics"]["failures"]["value"].get<double>(), 0) << "adr";
  EXPECT_EQ(shipped.results["runs"][1]["metrics"]["failures"]["value"].get<double>(), 0) << "eadr";
  EXPECT_NE(shipped.err.find("non_pm_writeback x4 at redo_commit (redo.c:"), std::string::npos) << shipped.err;
  const Outcome fixed = crash_test("pmdk2-redo-fixed");
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.err.find("non_pm_writeback"), std::string::npos) << fixed.err;
}

// libpmem2's log example as shipped, judged by a shell script: each append persists its bytes, then the
// log's end with one 8-byte store, so every state of line and word granularity holds whole appends. With 30
// commands both granularities are explored whole (states enumerated below the budget).
TEST(CrashExec, LibpmemTwosLogExampleKeepsWholeAppends) {
  const std::string dir_path = PMLAB_SUBJECTS_DIR;
  if (!std::filesystem::exists(dir_path + "/pmdk2-log")) GTEST_SKIP() << "libpmem2's log example not built";
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool"), out = dir.file("out");
  std::vector<std::string> program = {dir_path + "/pmdk2-log", pool}, appends;
  for (int i = 0; i < 30; ++i) {
    const std::string s = "r" + std::to_string(i) + std::string(static_cast<size_t>(1 + i % 5), 'q');
    if (i % 4 == 3) {
      program.insert(program.end(), {"appendv", "2", s, s + "v"});
      appends.push_back(s + s + "v");
    } else {
      program.insert(program.end(), {"append", s});
      appends.push_back(s);
    }
  }
  std::string check = dir_path + "/pmdk2-log-check " + dir_path + "/pmdk2-log {}";
  for (const std::string& a : appends) check += " " + a;
  const Outcome o = crash_exec("rm -f " + pool + " && truncate -s 1M " + pool, check, out, {}, program);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(o.results["runs"].size(), 2u) << o.err;
  for (const auto& r : o.results["runs"]) {
    EXPECT_EQ(r["metrics"]["failures"]["value"].get<double>(), 0) << r["params"]["granularity"];
    EXPECT_LT(r["metrics"]["states_enumerated"]["value"].get<double>(), 2000) << "explored whole";
    EXPECT_GT(r["metrics"]["states_checked"]["value"].get<double>(), 30) << r["params"]["granularity"];
  }
}

// A tree's inserts write its nodes again after the runtime protected their pages again, some soon after (those
// wait longer from then on) and some long after (src/pmlab-trace/state.hpp): in both ways that take faults,
// every store must still be seen at the fence after it, as comparing every page at every fence sees it.
TEST(CrashExec, PagesWrittenAgainAfterTheyWereProtectedGiveTheSameCrashStates) {
  if (!std::filesystem::exists(std::string(PMLAB_SUBJECTS_DIR) + "/pmdk-map"))
    GTEST_SKIP() << "subjects/pmdk not built";
  testing::TempDir dir;
  std::vector<nlohmann::json> runs;
  for (const char* how : {"signals", "faults", "compare"}) {
    const Outcome o = exec_map(dir, "pmdk-map", "rbtree", 200, {"--granularity", "line", "--budget", "60"},
                               {std::string("PMLAB_TRACE_WRITES=") + how});
    ASSERT_EQ(o.exit_code, 0) << how << ": " << o.err;
    runs.push_back(o.results["runs"][0]);
  }
  // The state space counts every line's candidate contents; the findings name lines never written back.
  for (size_t i = 1; i < runs.size(); ++i) {
    for (const char* m : {"fences", "writebacks", "crash_points", "state_space", "max_pending_lines", "states_checked",
                          "duplicate_states", "failures"})
      EXPECT_EQ(runs[0]["metrics"][m]["value"], runs[i]["metrics"][m]["value"]) << m << " of run " << i;
    EXPECT_EQ(runs[0]["findings"], runs[i]["findings"]) << i;
  }
  EXPECT_GT(runs[0]["metrics"]["fences"]["value"].get<double>(), 2000) << "long enough for pages to be protected again";
}

// A copy's whole lines are recorded from its source or its fill byte, not read back from memory
// (src/pmlab-trace): the trace must still make durable what memory held, for moves that overlap their source
// either way, non-temporal and temporal copies, and a plain store into a line a copy has just written.
// pmem-copies's check demands every byte the run wrote once its done word is durable.
TEST(CrashExec, ACopyIsTracedAsMemoryHeldIt) {
  testing::TempDir dir;
  const std::string copies = std::string(PMLAB_SUBJECTS_DIR) + "/pmem-copies", pool = dir.file("copies.pool");
  for (const std::string api : {"libpmem", "pmem2"}) {
    platform::ProcessSpec spec;
    spec.argv = {PMLAB_CLI_PATH, "crash", "exec", "--setup", "rm -f " + pool, "--check", copies + " check {}"};
    spec.argv.insert(spec.argv.end(), {"--domain", "adr,eadr", "--granularity", "line", "--budget", "200"});
    spec.argv.insert(spec.argv.end(), {"--out", dir.file("out-" + api), "--", copies, "run", pool, "--api", api});
    spec.timeout_s = 120;
    auto run = platform::run_process(spec);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(run->exit_code, 0) << api << ": " << run->err;
  }
  // The check is no formality: the pool the last run left passes it; with one moved byte changed, it fails.
  auto check = [&] {
    platform::ProcessSpec spec;
    spec.argv = {copies, "check", pool};
    auto r = platform::run_process(spec);
    return r.ok() ? r->exit_code : -1;
  };
  EXPECT_EQ(check(), 0);
  std::fstream f(pool, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0x100);
  const char byte = static_cast<char>(f.get() ^ 0x5a);
  f.seekp(0x100);
  f.put(byte);
  f.close();
  EXPECT_EQ(check(), 1);
}

TEST(CrashExec, APmdkCountFlushedWithoutAFenceTearsAtWordGranularityOnly) {
  if (!std::filesystem::exists(std::string(PMLAB_SUBJECTS_DIR) + "/pmdk-map"))
    GTEST_SKIP() << "subjects/pmdk not built";
  testing::TempDir dir;
  // A count flushed with no fence before the flag that says it is current: only a torn line shows it.
  // (A budget that reaches every crash point 16 states deep: the torn state is one particular state of one
  // fence of each insert.)
  const std::string flush_no_drain = "pmdk-map-bug-hashmap_atomic-count-flush-no-drain";
  const Outcome line = exec_map(dir, flush_no_drain, "hashmap_atomic", 2, {"--granularity", "line", "--budget", "150"});
  EXPECT_EQ(line.failures("line"), 0u) << line.err;
  const Outcome torn = exec_map(dir, flush_no_drain, "hashmap_atomic", 2, {"--granularity", "word", "--budget", "500"});
  EXPECT_GT(torn.failures("word"), 0u) << torn.err;
}

// A real bug of PMDK 1.12's hashmap_atomic example (docs/crash-simulator.md, "What it found"): after a
// rebuild, `buckets = buckets_tmp` stores a 16-byte PMEMoid that straddles two cache lines of the map's
// object, so a crash can persist its offset without its pool uuid, and recovery dereferences the NULL that
// pmemobj_direct returns for it. The state replays from the run's trace (30 inserts: the rebuild at 22).
TEST(CrashExec, FindsTheTornBucketsSwitchOfPmdksHashmapAtomic) {
  if (!std::filesystem::exists(std::string(PMLAB_SUBJECTS_DIR) + "/pmdk-map"))
    GTEST_SKIP() << "subjects/pmdk not built";
  testing::TempDir dir;
  const std::string image = dir.file("torn-switch.pool");
  const Outcome o =
      exec_map(dir, "pmdk-map", "hashmap_atomic", 30,
               {"--granularity", "line", "--domain", "adr", "--budget", "1000", "--replay", "347:4", "--image", image});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("SIGSEGV while running the map's recovery"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("hm_atomic_rebuild_finish (hashmap_atomic.c:170)"), std::string::npos) << o.err;
  ASSERT_TRUE(std::filesystem::exists(image));
}

TEST(CrashExec, BadInputIsAClearErrorAndLosesNothing) {
  testing::TempDir dir;
  auto pmlab = [&](std::vector<std::string> args) {
    platform::ProcessSpec spec;
    spec.argv = {PMLAB_CLI_PATH, "crash", "exec"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout_s = 60;
    return *platform::run_process(spec);
  };
  auto missing_check = pmlab({"--out", dir.file("o0") + "/run", "--", kLog, "append", dir.file("p"), "4"});
  EXPECT_EQ(missing_check.exit_code, 2);
  EXPECT_NE(missing_check.err.find("--check"), std::string::npos) << missing_check.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("o0"))) << "a run refused leaves no directory it made";
  auto no_program = pmlab({"--check", "true", "--out", dir.file("o1"), "--", dir.file("no-such-program")});
  EXPECT_EQ(no_program.exit_code, 3) << no_program.err;
  auto fails = pmlab({"--check", "true", "--out", dir.file("o2"), "--", "/bin/false"});
  EXPECT_EQ(fails.exit_code, 1);
  EXPECT_NE(fails.err.find("exited with 1"), std::string::npos) << fails.err;
  auto maps_nothing = pmlab({"--check", "true", "--out", dir.file("o3"), "--", "/bin/true"});
  EXPECT_EQ(maps_nothing.exit_code, 1);
  EXPECT_NE(maps_nothing.err.find("mapped no persistent memory"), std::string::npos) << maps_nothing.err;
  { std::ofstream(dir.file("bad.pmtrace")) << "not a trace at all, but long enough to hold a header........"; }
  auto bad_trace =
      pmlab({"--check", "true", "--trace", dir.file("bad.pmtrace"), "--out", dir.file("o4"), "--", "/bin/true"});
  EXPECT_EQ(bad_trace.exit_code, 3) << bad_trace.err;
  EXPECT_NE(bad_trace.err.find("not a pmlab trace"), std::string::npos) << bad_trace.err;
  // An unterminated quote would fail every state with the shell's complaint: refused, and nothing runs.
  for (const char* option : {"--check", "--check-server"}) {
    auto unparsable = pmlab({option, "test -s \"{", "--out", dir.file("o5"), "--", "/bin/touch", dir.file("ran")});
    EXPECT_EQ(unparsable.exit_code, 2) << unparsable.err;
    EXPECT_NE(unparsable.err.find(std::string(option) + " is not a command /bin/sh can read"), std::string::npos)
        << unparsable.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("ran"))) << "the program ran";
    EXPECT_FALSE(std::filesystem::exists(dir.file("o5")));
  }
  auto bad_budget = pmlab({"--check", "true", "--budget", "abc", "--", "/bin/true"});
  EXPECT_EQ(bad_budget.exit_code, 2);
  EXPECT_NE(bad_budget.err.find("--budget"), std::string::npos) << bad_budget.err;
  auto bad_way = pmlab({"--check", "true", "--stores", "pin", "--", "/bin/true"});
  EXPECT_EQ(bad_way.exit_code, 2);
  EXPECT_NE(bad_way.err.find("--stores"), std::string::npos) << bad_way.err;
  auto two_ways = pmlab({"--check", "true", "--stores", "faults", "--compare-pages", "--", "/bin/true"});
  EXPECT_EQ(two_ways.exit_code, 2);
  EXPECT_NE(two_ways.err.find("--compare-pages"), std::string::npos) << two_ways.err;
}

// --stores picks the way of finding stores the run then names (or says why it fell back).
TEST(CrashExec, TheWayOfFindingStoresIsAnOption) {
  testing::TempDir dir;
  for (const char* how : {"signals", "faults", "compare"}) {
    const Outcome o = exec_log(dir, {"--granularity", "line", "--stores", how}, {});
    ASSERT_FALSE(o.results.is_null()) << how << ": " << o.err;
    const auto& run = o.results["runs"][0];
    const std::string tracking = run["trace"]["write_tracking"];
    if (tracking.find(tracking_name(how)) == std::string::npos) {
      EXPECT_FALSE(run["trace"]["notes"].empty()) << how << ": fell back to " << tracking << " without a note";
    }
    EXPECT_EQ(o.exit_code, 0) << how << ": " << o.err;
  }
}

}  // namespace
}  // namespace pmlab::crash::exec
