#include "pmlab/crash/exec/starting_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
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

// A file the run made goes under every name it has when the run ends, wherever renames and links took it
// (a message delivered from tmp/ to new/ and linked into snap/); one that existed before and that the run
// renamed (and linked) goes back to its path, with the content it had, and its other name goes.
TEST(StartingFiles, AFileTheRunMadeGoesUnderEveryNameItHasAtTheEnd) {
  testing::TempDir dir;
  for (const char* sub : {"tmp", "new", "snap"}) std::filesystem::create_directory(dir.file(sub));
  const std::string old = dir.file("tmp/old"), made = dir.file("tmp/a");
  testing::write_all(old, std::string(trace::kPageBytes, 'o'));
  const int64_t cutoff = StartingFiles::birth_cutoff();
  testing::write_all(made, "a");
  if (birth_ns(made) < 0) GTEST_SKIP() << "this file system keeps no birth times";
  struct stat a {
  }, o{};
  ASSERT_EQ(::stat(made.c_str(), &a), 0);
  ASSERT_EQ(::stat(old.c_str(), &o), 0);
  std::filesystem::rename(made, dir.file("new/a"));
  std::filesystem::create_hard_link(dir.file("new/a"), dir.file("snap/a"));
  std::filesystem::rename(old, dir.file("new/old"));
  std::filesystem::create_hard_link(dir.file("new/old"), dir.file("snap/old"));
  testing::TraceBuilder b;
  auto gone = [&](const struct stat& st, trace::GoneCall call, const std::string& to, const std::string& from) {
    b.add(trace::Kind::gone,
          trace::GoneRecord{0x42, st.st_dev, st.st_ino, static_cast<uint32_t>(to.size()),
                            static_cast<uint32_t>(from.size())},
          to + from, 0, static_cast<uint8_t>(call));
  };
  b.region(0, trace::kPageBytes, made, 0, a.st_dev, a.st_ino);
  gone(a, trace::GoneCall::rename, dir.file("new/a"), made);
  gone(a, trace::GoneCall::link, dir.file("snap/a"), "");
  b.region(1, trace::kPageBytes, old, trace::kPageBytes, o.st_dev, o.st_ino).base_page(1, 0, 'o');
  gone(o, trace::GoneCall::rename, dir.file("new/old"), old);
  gone(o, trace::GoneCall::link, dir.file("snap/old"), "");
  auto parsed = TraceFile::parse(b.exit().bytes());
  ASSERT_TRUE(parsed) << parsed.status().message();
  const StartingFiles files = StartingFiles::of(*parsed, cutoff);
  ASSERT_EQ(files.files().size(), 2u);
  EXPECT_EQ(files.files()[0].action, StartingFiles::Action::remove);
  EXPECT_EQ(files.files()[0].names, (std::vector<std::string>{dir.file("new/a"), dir.file("snap/a")}));
  EXPECT_EQ(files.files()[1].action, StartingFiles::Action::move_back);
  testing::write_all(dir.file("new/old"), std::string(trace::kPageBytes, 'x') + "grown");  // the run wrote it
  auto notes = files.restore(*parsed);
  ASSERT_TRUE(notes) << notes.status().message();
  EXPECT_FALSE(std::filesystem::exists(dir.file("new/a")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("snap/a")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("new/old")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("snap/old")));
  EXPECT_EQ(testing::read_all(old), std::string(trace::kPageBytes, 'o'));
  ASSERT_GE(notes->size(), 3u);
  EXPECT_EQ((*notes)[0],
            "removed " + dir.file("new/a") + " and " + dir.file("snap/a") + ", which the first traced run created");
  EXPECT_EQ((*notes)[1], "moved " + dir.file("new/old") + " back to " + old + ", as the first traced run found it");
  EXPECT_EQ((*notes)[2], "removed " + dir.file("snap/old") + ", a name the first traced run gave " + old);
}

}  // namespace
}  // namespace pmlab::crash::exec
