#include "pmlab/crash/exec/starting_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

#include "../../support/temp_dir.hpp"
#include "../../support/trace_builder.hpp"

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

// A file that existed before the run gets its first-mapped pages and size back. A device (device DAX, here
// /dev/null in its place) is left as it is, with a note that says so: ftruncate and write(2) would fail on
// device DAX, and an error there would stop every domain's run after the first.
TEST(StartingFiles, AFileGetsItsPagesBackAndADeviceIsLeftWithANote) {
  testing::TempDir dir;
  const std::string pool = dir.file("pool");
  testing::write_all(pool, std::string(trace::kPageBytes, 'a'));
  struct stat file {
  }, device{};
  ASSERT_EQ(::stat(pool.c_str(), &file), 0);
  ASSERT_EQ(::stat("/dev/null", &device), 0);
  auto parsed = TraceFile::parse(testing::TraceBuilder()
                                     .region(0, trace::kPageBytes, pool, trace::kPageBytes, file.st_dev, file.st_ino)
                                     .base_page(0, 0, 'a')
                                     .region(1, trace::kPageBytes, "/dev/null", 0, device.st_dev, device.st_ino)
                                     .base_page(1, 0, 'd')
                                     .exit()
                                     .bytes());
  ASSERT_TRUE(parsed) << parsed.status().message();
  const StartingFiles files = StartingFiles::of(*parsed, birth_ns(pool) < 0 ? 0 : birth_ns(pool) + 1);
  ASSERT_EQ(files.files().size(), 2u);
  EXPECT_EQ(files.files()[0].action, StartingFiles::Action::put_back);
  EXPECT_EQ(files.files()[1].action, StartingFiles::Action::leave);

  testing::write_all(pool, std::string(trace::kPageBytes, 'b') + "tail the run appended");
  auto notes = files.restore(*parsed);
  ASSERT_TRUE(notes) << notes.status().message();
  std::ifstream in(pool);
  const std::string restored((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(restored, std::string(trace::kPageBytes, 'a'));
  ASSERT_EQ(notes->size(), 2u);
  EXPECT_EQ((*notes)[0],
            "left /dev/null as it is: it is a device (device DAX), which is not put back (--setup can "
            "recreate it)");
  EXPECT_EQ((*notes)[1], "put " + pool + " back as the first traced run found it (1 page(s) rewritten)");
}

}  // namespace
}  // namespace pmlab::crash::exec
