// What `pmlab crash exec` does with the program's own files: with no --setup to recreate them, every
// domain's run starts from the files the first run found; a check must judge the crash images, not the
// files themselves, and one that passes random bytes is named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../../support/temp_dir.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

const std::string kLog = std::string(PMLAB_SUBJECTS_DIR) + "/pmem-log";

platform::ProcessResult run(std::vector<std::string> argv) {
  platform::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_s = 120;
  auto r = platform::run_process(spec);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : platform::ProcessResult{};
}

// The file as a run left it, and the run of `domain` in the results.
struct Campaign {
  std::string file;
  nlohmann::json run;
};

// `pmem-log append POOL 6` crash-tested under `domains` with no --setup, from POOL as `before` leaves it:
// absent, or holding a log of 2 records written natively.
Campaign campaign(const testing::TempDir& dir, const std::string& domains, bool before_exists, const char* out) {
  const std::string pool = dir.file("log.pool");
  std::filesystem::remove(pool);
  if (before_exists) { EXPECT_EQ(run({kLog, "append", pool, "2"}).exit_code, 0); }
  const auto r = run({PMLAB_CLI_PATH,
                      "crash",
                      "exec",
                      "--check",
                      kLog + " check {}",
                      "--domain",
                      domains,
                      "--granularity",
                      "line",
                      "--budget",
                      "60",
                      "--jobs",
                      "2",
                      "--out",
                      dir.file(out),
                      "--",
                      kLog,
                      "append",
                      pool,
                      "6"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Campaign c;
  c.file = testing::read_all(pool);
  const auto results = nlohmann::json::parse(testing::read_all(dir.file(out) + "/results.json"));
  c.run = results["runs"][results["runs"].size() - 1];
  return c;
}

TEST(CrashExecFiles, EveryDomainsRunStartsFromTheFilesTheFirstRunFound) {
  testing::TempDir dir;
  for (bool exists : {false, true}) {
    SCOPED_TRACE(exists ? "a log the program appends to" : "a file the program creates");
    const Campaign alone = campaign(dir, "eadr", exists, exists ? "alone-1" : "alone-0");
    const Campaign second = campaign(dir, "adr,eadr", exists, exists ? "second-1" : "second-0");
    ASSERT_EQ(second.run["params"]["domain"], "eadr");
    // The eADR run after the ADR run sees what the eADR run alone sees, and the file ends as one run leaves it.
    for (const char* m : {"fences", "writebacks", "crash_points", "states_enumerated"})
      EXPECT_EQ(second.run["metrics"][m]["value"], alone.run["metrics"][m]["value"]) << m;
    EXPECT_EQ(second.file, alone.file);
    const std::string notes = second.run["trace"]["notes"].dump();
    EXPECT_NE(notes.find(exists ? "put " : "removed "), std::string::npos) << notes;
  }
}

TEST(CrashExecFiles, ACheckThatNamesTheProgramsFileInsteadOfItsImageIsRefused) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  // Named by --pool: refused before the program runs.
  auto named = run({PMLAB_CLI_PATH, "crash", "exec", "--check", kLog + " check " + pool, "--pool", pool, "--out",
                    dir.file("o1"), "--", kLog, "append", pool, "4", "--api", "msync"});
  EXPECT_EQ(named.exit_code, 2) << named.err;
  EXPECT_NE(named.err.find("--check names " + pool), std::string::npos) << named.err;
  EXPECT_FALSE(std::filesystem::exists(pool));
  // Found by the trace (libpmem maps it), named through a relative path: refused before any check.
  auto found = run({"/bin/sh", "-c",
                    "cd " + dir.path() + " && " + PMLAB_CLI_PATH + " crash exec --check '" + kLog +
                        " check ./log.pool' --out o2 -- " + kLog + " append log.pool 4"});
  EXPECT_EQ(found.exit_code, 2) << found.err;
  EXPECT_NE(found.err.find("--check names " + pool), std::string::npos) << found.err;
  // The same check on the image passes, and fails an image of random bytes: no note.
  auto image = run({PMLAB_CLI_PATH, "crash", "exec", "--check", kLog + " check {}", "--granularity", "line", "--budget",
                    "40", "--out", dir.file("o3"), "--", kLog, "append", pool, "4"});
  EXPECT_EQ(image.exit_code, 0) << image.err;
  EXPECT_EQ(image.err.find("random bytes"), std::string::npos) << image.err;
}

TEST(CrashExecFiles, ACheckThatPassesRandomBytesIsNamedWhenNothingFailed) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool"), script = dir.file("check-the-file.sh");
  // A script that checks the program's file by its name: nothing on the command line shows it. The planted
  // bug fails on the images, never on the file the run left.
  { std::ofstream(script) << "#!/bin/sh\nexec " << kLog << " check " << pool << "\n"; }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  auto r = run({PMLAB_CLI_PATH, "crash", "exec", "--check", script, "--granularity", "line", "--budget", "40", "--out",
                dir.file("o1"), "--", kLog, "append", pool, "4", "--bug", "no-fence"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("passed an image of random bytes"), std::string::npos) << r.err;
  const auto results = nlohmann::json::parse(testing::read_all(dir.file("o1") + "/results.json"));
  EXPECT_NE(results["runs"][0]["trace"]["notes"].dump().find("random bytes"), std::string::npos);
}

// A check that cannot run judges nothing: named before the program runs when it is a plain command, found by
// the first check (of random bytes) when a shell runs it, and either way an error, not a failure per state.
TEST(CrashExecFiles, ACheckThatCannotRunIsAnErrorAndNoStateFails) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool"), script = dir.file("not-executable.sh");
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  struct Case {
    std::string check, said;
  };
  for (const Case& c : {Case{"no-such-checker {}", "--check: no-such-checker: no such program"},
                        Case{script + " {}", "--check: " + script + ": not executable"},
                        Case{"sh -c 'no-such-checker {}'", "--check cannot run: exited with 127"},
                        Case{"sh -c '" + script + " {}'", "--check cannot run: exited with 126"}}) {
    auto r = run({PMLAB_CLI_PATH, "crash", "exec", "--check", c.check, "--granularity", "line", "--budget", "20",
                  "--out", dir.file("out"), "--", kLog, "append", pool, "4"});
    EXPECT_GE(r.exit_code, 2) << c.check << "\n" << r.err;
    EXPECT_NE(r.err.find(c.said), std::string::npos) << c.check << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("out") + "/results.json")) << c.check;
  }
}

// A PMDK pool of two parts (a poolset): libpmemobj maps the first part over the whole pool, then the second
// over its tail. Each part's image is its file, of its own size, under its own name in $PMLAB_CRASH_DIR, where
// the check writes a poolset naming them. The first part is small, so the pool's lanes reach into the second,
// whose stores count only where its mapping ends the first's region. The example map passes; with a planted
// bug it fails.
TEST(CrashExecFiles, APoolsetsPartsAreImagedAsTheirFiles) {
  const std::string subjects = PMLAB_SUBJECTS_DIR;
  if (!std::filesystem::exists(subjects + "/pmdk-map")) GTEST_SKIP() << "subjects/pmdk not built";
  testing::TempDir dir;
  const std::string set = dir.file("pool.set"), check = dir.file("check.sh");
  auto poolset = [](const std::string& at) { return "PMEMPOOLSET\n2M " + at + "/part1\n14M " + at + "/part2\n"; };
  std::ofstream(set) << poolset(dir.path());
  std::ofstream(check) << "#!/bin/sh\nprintf '" << poolset("%s") << "' \"$PMLAB_CRASH_DIR\" \"$PMLAB_CRASH_DIR\" > "
                       << "\"$PMLAB_CRASH_DIR/pool.set\"\nexec " << subjects
                       << "/pmdk-map btree check \"$PMLAB_CRASH_DIR/pool.set\" 30\n";
  std::filesystem::permissions(check, std::filesystem::perms::owner_all);
  for (const std::string program : {"pmdk-map", "pmdk-map-bug-btree-leaf-no-snapshot"}) {
    const std::string out = dir.file("out-" + program);
    auto r = run(
        {PMLAB_CLI_PATH,
         "crash",
         "exec",
         "--setup",
         "rm -f " + dir.file("part1") + " " + dir.file("part2") + " && " + subjects + "/pmdk-map btree create " + set,
         "--check",
         check,
         "--granularity",
         "line",
         "--budget",
         "150",
         "--jobs",
         "2",
         "--out",
         out,
         "--",
         subjects + "/" + program,
         "btree",
         "insert",
         set,
         "30"});
    ASSERT_EQ(r.exit_code, program == "pmdk-map" ? 0 : 1) << program << "\n" << r.err;
    const auto results = nlohmann::json::parse(testing::read_all(out + "/results.json"));
    const auto& run = results["runs"][0];
    EXPECT_EQ(run["trace"]["files"], nlohmann::json::array({dir.file("part1"), dir.file("part2")})) << program;
    EXPECT_GT(run["metrics"]["states_checked"]["value"].get<double>(), 100) << program;
    EXPECT_EQ(run["metrics"]["failures"]["value"].get<double>() == 0, program == "pmdk-map") << program;
  }
}

// A Python program grows its mapping (mmap.resize: ftruncate, then mremap, which moves it) between two records:
// the mapping is traced where it went, so the msyncs after the move are crash points, and a commit persisted
// before its record is caught. Before mremap was interposed, the runtime read the old address at the next
// fence and the program died.
TEST(CrashExecFiles, AMappingMovedByMremapIsTracedWhereItWent) {
  testing::TempDir dir;
  const std::string pool = dir.file("grow.pool");
  const std::string programs = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/";
  for (const std::string order : {"record-first", "commit-first"}) {
    const std::string out = dir.file("out-" + order);
    auto r = run({PMLAB_CLI_PATH,
                  "crash",
                  "exec",
                  "--setup",
                  "rm -f " + pool,
                  "--check",
                  "python3 " + programs + "check_before.py {} 4096 B 64 C",
                  "--pool",
                  pool,
                  "--granularity",
                  "line",
                  "--budget",
                  "40",
                  "--out",
                  out,
                  "--",
                  "python3",
                  programs + "grow.py",
                  pool,
                  order});
    ASSERT_EQ(r.exit_code, order == "record-first" ? 0 : 1) << order << "\n" << r.err;
    const auto results = nlohmann::json::parse(testing::read_all(out + "/results.json"));
    EXPECT_EQ(results["runs"][0]["metrics"]["crash_points"]["value"].get<double>(), 4)
        << order << ": three msyncs, one before the move, and the exit";
  }
}

// A file of gigabytes the run touched in a few pages (libpmem2's log example appending to a new 2 GiB file):
// each checker finds its image whole in content and sparse on disk, holding the pages the run gave content.
TEST(CrashExecFiles, AFileOfGigabytesCostsThePagesTheRunGaveContent) {
  const std::string subjects = PMLAB_SUBJECTS_DIR;
  if (!std::filesystem::exists(subjects + "/pmdk2-log")) GTEST_SKIP() << "libpmem2's log example not built";
  testing::TempDir dir;
  const std::string pool = dir.file("big.pool");
  const std::string check =
      "test $(du -k {} | cut -f1) -le 64 && " + subjects + "/pmdk2-log-check " + subjects + "/pmdk2-log {} aa bb cc";
  auto r = run({PMLAB_CLI_PATH,
                "crash",
                "exec",
                "--setup",
                "rm -f " + pool + " && truncate -s 2G " + pool,
                "--check",
                check,
                "--budget",
                "100",
                "--jobs",
                "2",
                "--out",
                dir.file("out"),
                "--",
                subjects + "/pmdk2-log",
                pool,
                "append",
                "aa",
                "append",
                "bb",
                "append",
                "cc"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto results = nlohmann::json::parse(testing::read_all(dir.file("out") + "/results.json"));
  for (const auto& run : results["runs"]) {
    EXPECT_GT(run["metrics"]["states_checked"]["value"].get<double>(), 5) << run["params"]["granularity"];
    EXPECT_EQ(run["metrics"]["failures"]["value"].get<double>(), 0) << run["params"]["granularity"];
  }
}

}  // namespace
}  // namespace pmlab::crash::exec
