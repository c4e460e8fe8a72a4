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

// A JVM maps the file with the C library's mmap and makes a MappedByteBuffer durable with its msync: the
// runtime sees both in libnio's native code, and the JVM's own SIGBUS handling survives signals mode.
TEST(CrashExecLanguages, AJavaProgramsMappedByteBufferIsTracedThroughItsMsync) {
  if (!platform::find_program("javac") || !platform::find_program("java")) GTEST_SKIP() << "no JDK here";
  testing::TempDir dir;
  platform::ProcessSpec compile;
  compile.argv = {"javac", "-d", dir.path(), kPrograms + "MappedLog.java"};
  compile.timeout_s = 120;
  auto compiled = platform::run_process(compile);
  ASSERT_TRUE(compiled.ok() && compiled->ok()) << (compiled.ok() ? compiled->err : "javac did not start");
  const std::string pool = dir.file("log");
  const std::string java = "java -cp " + dir.path() + " MappedLog";
  auto crash_exec = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> program = {"java", "-cp", dir.path(), "MappedLog", "append", pool, "20"};
    program.insert(program.end(), extra.begin(), extra.end());
    return testing::crash_exec("rm -f " + pool, java + " check {}", dir.file(out),
                               {"--pool", pool, "--granularity", "line", "--budget", "60"}, program);
  };
  const auto good = crash_exec("good", {});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(good.metric("line", "crash_points"), 41u) << "a fence per force, 2 per append, and the exit";
  EXPECT_GT(good.metric("line", "states_checked"), 0u);
  const auto bug = crash_exec("bug", {"bug"});
  ASSERT_EQ(bug.exit_code, 1) << bug.err;
  EXPECT_NE(bug.err.find("(msync in Java_java_nio_MappedMemoryUtils_force0"), std::string::npos) << bug.err;
  EXPECT_NE(bug.err.find("is not whole"), std::string::npos) << bug.err;
}

// A Python program that makes its mmap durable by syncing the file (os.fdatasync, os.fsync): each sync is the C
// library's call, a write-back of the mapping and a fence.
TEST(CrashExecLanguages, APythonProgramThatSyncsItsMappedFileIsTracedThroughItsSyncs) {
  testing::TempDir dir;
  const std::string pool = dir.file("log"), program = kPrograms + "synced_log.py";
  auto crash_exec = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> argv = {"python3", program, "append", pool, "12"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing::crash_exec("rm -f " + pool, "python3 " + program + " check {}", dir.file(out),
                               {"--pool", pool, "--granularity", "line", "--budget", "60"}, argv);
  };
  const auto good = crash_exec("good", {});
  ASSERT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(good.metric("line", "crash_points"), 25u) << "a fence per sync, 2 per append, and the exit";
  const auto bug = crash_exec("bug", {"unsynced-record"});
  ASSERT_EQ(bug.exit_code, 1) << bug.err;
  EXPECT_NE(bug.err.find("counted is not whole"), std::string::npos) << bug.err;
}

}  // namespace
}  // namespace pmlab::crash::exec
