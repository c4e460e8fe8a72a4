// Programs in other languages than C and C++, crash-tested as they are: what their runtimes call of the C
// library is what exec mode sees.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../../support/crash_exec.hpp"
#include "../../support/temp_dir.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

const std::string kPrograms = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/";

// A compiler run over one of the programs here: whether it built.
::testing::AssertionResult compiled(std::vector<std::string> argv) {
  platform::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_s = 120;
  auto run = platform::run_process(spec);
  if (run.ok() && run->ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << spec.argv[0] << ": " << (run.ok() ? run->err : "did not start");
}

// The log every program here writes: `PROGRAM... append POOL RECORDS` crash-tested at line granularity from no
// pool, each crash image judged by `PROGRAM... check {}`. The correct program passes with `crash_points`
// crash points; with the argument `bug` it fails, its checker saying `broken`. Returns what that run printed.
std::string passes_and_fails_with(const testing::TempDir& dir, const std::vector<std::string>& program,
                                  const std::string& records, uint64_t crash_points, const std::string& bug,
                                  const std::string& broken) {
  const std::string pool = dir.file("log");
  std::string check;
  for (const std::string& word : program) check += word + " ";
  auto crash_exec = [&](const std::string& out, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = program;
    argv.insert(argv.end(), {"append", pool, records});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing::crash_exec("rm -f " + pool, check + "check {}", dir.file(out),
                               {"--pool", pool, "--granularity", "line", "--budget", "60"}, argv);
  };
  const auto good = crash_exec("good", {});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(good.metric("line", "crash_points"), crash_points) << good.err;
  EXPECT_GT(good.metric("line", "states_checked"), 0u);
  const auto failing = crash_exec("bug", {bug});
  EXPECT_EQ(failing.exit_code, 1) << failing.err;
  EXPECT_NE(failing.err.find(broken), std::string::npos) << failing.err;
  return failing.err;
}

// A JVM maps the file with the C library's mmap and makes a MappedByteBuffer durable with its msync: the
// runtime sees both in libnio's native code, and the JVM's own SIGBUS handling survives signals mode. A
// crash point per force (2 per append) and the exit.
TEST(CrashExecLanguages, AJavaProgramsMappedByteBufferIsTracedThroughItsMsync) {
  if (!platform::find_program("javac") || !platform::find_program("java")) GTEST_SKIP() << "no JDK here";
  testing::TempDir dir;
  ASSERT_TRUE(compiled({"javac", "-d", dir.path(), kPrograms + "MappedLog.java"}));
  const std::string err =
      passes_and_fails_with(dir, {"java", "-cp", dir.path(), "MappedLog"}, "20", 41, "bug", "is not whole");
  EXPECT_NE(err.find("(msync in Java_java_nio_MappedMemoryUtils_force0"), std::string::npos) << err;
}

// A Python program that makes its mmap durable by syncing the file (os.fdatasync, os.fsync): each sync is the C
// library's call, a write-back of the mapping and a fence. A crash point per sync (2 per append) and the exit.
TEST(CrashExecLanguages, APythonProgramThatSyncsItsMappedFileIsTracedThroughItsSyncs) {
  testing::TempDir dir;
  passes_and_fails_with(dir, {"python3", kPrograms + "synced_log.py"}, "12", 25, "unsynced-record",
                        "counted is not whole");
}

// A Rust program without crates maps its file with the C library's mmap (as the libc and memmap2 crates do)
// and makes it durable with msync and File::sync_all (fsync): both are seen, a crash point each, and a crash
// point is named by the program's own line, not by the standard library compiled into it.
TEST(CrashExecLanguages, ARustProgramsMsyncAndSyncAllAreTracedAndNamedByItsOwnLine) {
  if (!platform::find_program("rustc")) GTEST_SKIP() << "no rustc here";
  testing::TempDir dir;
  const std::string binary = dir.file("mapped-log");
  ASSERT_TRUE(compiled({"rustc", "--edition", "2021", "-O", "-g", "-o", binary, kPrograms + "mapped_log.rs"}));
  const std::string err = passes_and_fails_with(dir, {binary}, "12", 25, "unsynced-record", "counted is not whole");
  EXPECT_NE(err.find("(fsync in mapped_log::main (mapped_log.rs:"), std::string::npos) << err;
}

}  // namespace
}  // namespace pmlab::crash::exec
