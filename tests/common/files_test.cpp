// The shared file helpers: regular files opened without blocking, and writes that never lose the old file.
#include "pmlab/common/files.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "../support/ended_pid.hpp"
#include "../support/temp_dir.hpp"

namespace pmlab {
namespace {

using pmlab::testing::ended_pid;
using pmlab::testing::read_all;
using pmlab::testing::TempDir;

size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFile, ReplacesTheWholeFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("results.json");
  ASSERT_TRUE(write_file_atomically(path, "old").ok());
  ASSERT_TRUE(write_file_atomically(path, "new contents").ok());
  EXPECT_EQ(read_all(path), "new contents");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFile, RefusesADirectoryOrFifoAsTheTarget) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("sub"));
  EXPECT_EQ(write_file_atomically(dir.file("sub"), "x").code(), Errc::not_a_file);
  ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0644), 0);
  EXPECT_EQ(write_file_atomically(dir.file("fifo"), "x").code(), Errc::not_a_file);
  EXPECT_EQ(write_file_atomically(dir.file("missing/results.json"), "x").code(), Errc::not_found);
  EXPECT_EQ(entries(dir.path()), 2u);
}

// A full disk, portably and without root: RLIMIT_FSIZE makes write() fail with EFBIG once the file
// would pass the limit (SIGXFSZ ignored), in a child so the limit does not reach the test binary.
TEST(AtomicFile, AFailedWriteKeepsTheOldFileAndNamesTheCause) {
  TempDir dir;
  const std::string path = dir.file("report.html");
  ASSERT_TRUE(write_file_atomically(path, "the old report").ok());
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    Status s = write_file_atomically(path, std::string(100000, 'x'));
    const bool named = s.message().find("File too large") != std::string::npos;
    _exit(s.code() == Errc::no_space && named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the write did not fail with no_space naming the cause";
  EXPECT_EQ(read_all(path), "the old report");
  EXPECT_EQ(entries(dir.path()), 1u) << "the temporary file was left behind";
}

TEST(ErrnoStatus, NamesTheCauseAndPicksTheCode) {
  EXPECT_EQ(errno_status(ENOSPC, "cannot write x").code(), Errc::no_space);
  EXPECT_EQ(errno_status(EROFS, "cannot write x").code(), Errc::permission_denied);
  EXPECT_NE(errno_status(EROFS, "cannot write x").message().find("Read-only file system"), std::string::npos);
  EXPECT_EQ(errno_status(EIO, "cannot write x").code(), Errc::io_error);
}

TEST(RegularFile, ReadsAFileAndRefusesWhatIsNotOne) {
  TempDir dir;
  ASSERT_TRUE(write_file_atomically(dir.file("a.json"), "{}").ok());
  EXPECT_EQ(*read_regular_file(dir.file("a.json"), "device file"), "{}");
  EXPECT_EQ(read_regular_file(dir.file("a.json"), "device file", 1).status().code(), Errc::invalid_argument);
  EXPECT_EQ(read_regular_file(dir.path(), "device file").status().code(), Errc::not_a_file);
  EXPECT_EQ(read_regular_file(dir.file("nope"), "device file").status().code(), Errc::not_found);
  ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0644), 0);
  auto fifo = read_regular_file(dir.file("fifo"), "device file");  // returns at once: nobody writes the FIFO
  EXPECT_EQ(fifo.status().code(), Errc::not_a_file);
  EXPECT_NE(fifo.status().message().find("FIFO"), std::string::npos);
}

TEST(ScratchDirectory, IsNamedForItsProcessAndRemovedWithItsFiles) {
  std::string path;
  {
    auto made = ScratchDirectory::make("pmlab-exec");
    ASSERT_TRUE(made.ok()) << made.status().message();
    path = made->path();
    std::ofstream(path + "/trace.pmtrace") << "x";
    EXPECT_EQ(scratch_directory_owner(std::filesystem::path(path).filename().string()), getpid());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_THROW((void)ScratchDirectory::make("exec"), std::invalid_argument);  // a name the sweep cannot see
}

TEST(ScratchDirectory, OnlyItsOwnPatternNamesAnOwner) {
  EXPECT_EQ(scratch_directory_owner("pmlab-exec-123-AbC9xZ"), 123);
  EXPECT_EQ(scratch_directory_owner("pmlab-exec-cost-77-aaaaaa"), 77);
  for (const char* other : {"pmlab-123.pool", "pmlab-123-ds-list.pool", "pmlab-test-AbC9xZ", "pmlab-exec-123-AbC9x",
                            "pmlab-exec-123-AbC9x-", "mine-exec-12-AbCdEf", "pmlab-Exec-12-AbCdEf", "pmlab--12-AbCdEf",
                            "pmlab-exec-0-AbCdEf", "pmlab-exec-12x-AbCdEf"})
    EXPECT_EQ(scratch_directory_owner(other), std::nullopt) << other;
}

// A killed command's directory goes with what is in it; a live process's, a locked one, a link and a
// file under the pattern stay.
TEST(ScratchDirectory, SweepRemovesTheDirectoriesOfEndedProcessesOnly) {
  namespace fs = std::filesystem;
  TempDir dir;
  const std::string dead = std::to_string(ended_pid());
  const std::string stale = dir.file("pmlab-exec-" + dead + "-AbC9xZ");
  const std::string locked = dir.file("pmlab-exec-" + dead + "-Locked");
  const std::string live = dir.file("pmlab-exec-" + std::to_string(getppid()) + "-Live00");
  const std::string link = dir.file("pmlab-exec-" + dead + "-Link00");
  const std::string file = dir.file("pmlab-exec-" + dead + "-File00");
  for (const std::string& d : {stale, locked, live, dir.file("target")}) fs::create_directories(d + "/images");
  std::ofstream(stale + "/images/0.img") << "crash image";
  std::ofstream(dir.file("target") + "/keep") << "a user's file";
  fs::create_directory_symlink(dir.file("target"), link);
  std::ofstream(file) << "not a directory";
  const int held = ::open(locked.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);

  std::vector<std::string> notes;
  sweep_scratch_directories(dir.path(), [&](const std::string& line) { notes.push_back(line); });
  ::close(held);

  EXPECT_FALSE(fs::exists(stale));
  for (const std::string& kept : {locked, live, link, file, dir.file("target") + "/keep"})
    EXPECT_TRUE(fs::exists(kept)) << kept;
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("removed stale scratch directory " + stale), std::string::npos) << notes[0];
}

}  // namespace
}  // namespace pmlab
