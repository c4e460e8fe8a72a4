#include "pmlab/crash/exec/starting_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

#include "../../support/temp_dir.hpp"

namespace pmlab::crash::exec {
namespace {

// The file's birth time in ns, or -1 where its file system keeps none.
int64_t birth_ns(const std::string& path) {
  struct statx st {};
  if (statx(AT_FDCWD, path.c_str(), 0, STATX_BTIME, &st) != 0 || !(st.stx_mask & STATX_BTIME)) return -1;
  return static_cast<int64_t>(st.stx_btime.tv_sec) * 1'000'000'000 + st.stx_btime.tv_nsec;
}

// Files are stamped by a clock that ticks every few milliseconds: a file made just before the cutoff must
// not look born after it, and one made just after must, or a user's pool would be taken for the run's own.
TEST(StartingFiles, TheBirthCutoffSeparatesFilesMadeJustBeforeAndJustAfter) {
  testing::TempDir dir;
  for (int round = 0; round < 20; ++round) {
    const std::string before = dir.file("before-" + std::to_string(round));
    const std::string after = dir.file("after-" + std::to_string(round));
    std::ofstream(before).put('b');
    const int64_t cutoff = StartingFiles::birth_cutoff();
    std::ofstream(after).put('a');
    if (birth_ns(before) < 0) GTEST_SKIP() << "this file system keeps no birth times";
    EXPECT_LE(birth_ns(before), cutoff) << round;
    EXPECT_GT(birth_ns(after), cutoff) << round;
  }
}

}  // namespace
}  // namespace pmlab::crash::exec
