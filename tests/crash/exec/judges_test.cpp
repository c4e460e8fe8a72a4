#include "pmlab/crash/exec/judges.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "../../support/temp_dir.hpp"

namespace pmlab::crash::exec {
namespace {

// Options for one checker running `check` in `dir`.
JudgeOptions one_checker(const testing::TempDir& dir, std::string check) {
  JudgeOptions o;
  o.check = std::move(check);
  o.timeout_s = 30;
  o.jobs = 1;
  o.work_dir = dir.path();
  return o;
}

// Checkers run on worker threads while the next images are built: every submitted image is judged once,
// on its own content, with its own environment.
// `{}` names the first --pool the run traced, whatever order the run touched its files in (SQLite writes its
// log before its database); with no --pool traced, the first file (a PMDK pool found by itself).
TEST(ExecJudges, TheImageACheckNamesIsTheFirstPoolTraced) {
  const std::vector<ImageFile> files = {{"/shm/kv.db-wal"}, {"/shm/kv.db"}, {"/shm/other"}};
  EXPECT_EQ(named_image(files, {"/shm/kv.db", "/shm/kv.db-wal"}), 1u);
  EXPECT_EQ(named_image(files, {"/shm/absent", "/shm/other"}), 2u);
  EXPECT_EQ(named_image(files, {"/shm/./kv.db-wal"}), 0u) << "paths compared as the same file";
  EXPECT_EQ(named_image(files, {}), 0u);
  // A file made under another name and renamed is found by the name it has when the run ends.
  const std::vector<std::vector<std::string>> at_end = {{"/shm/kv.db-wal"}, {"/shm/kv.db"}, {"/shm/renamed"}};
  EXPECT_EQ(named_image(files, {"/shm/renamed"}, at_end), 2u);
  EXPECT_EQ(traced_file(files, "/shm/renamed"), std::nullopt);
}

TEST(ExecJudgesConcurrent, EveryImageIsJudgedOnceOnItsOwnContent) {
  testing::TempDir dir;
  JudgeOptions o;
  // Consistent when the image's first byte is 'a' and the crash state's number is even, as the campaign
  // passes it; anything else fails. The image's name is the original file's.
  o.check =
      "/bin/sh -c 'test \"$(head -c1 {})\" = a && test $((PMLAB_CRASH_STATE % 2)) = 0 && test -f "
      "$PMLAB_CRASH_DIR/pool'";
  o.timeout_s = 30;
  o.jobs = 3;
  o.work_dir = dir.path();
  o.files = {ImageFile{"/somewhere/pool", 1, 2, 0, 4096}};
  o.image_bytes = 4096;
  auto judges = Judges::start(o);
  ASSERT_TRUE(judges.ok()) << judges.status().message();
  std::mutex mutex;
  std::set<int> consistent, inconsistent;
  constexpr int kChecks = 24;
  for (int i = 0; i < kChecks; ++i) {
    Judges::Slot& slot = (*judges)->acquire();
    std::fill(slot.image, slot.image + 4096, static_cast<std::byte>(i % 3 == 0 ? 'b' : 'a'));
    ASSERT_TRUE((*judges)
                    ->submit(slot, {"PMLAB_CRASH_STATE=" + std::to_string(i)},
                             [&, i](const Verdict& v) {
                               std::lock_guard lock(mutex);
                               const bool fresh = (v.consistent ? consistent : inconsistent).insert(i).second;
                               EXPECT_TRUE(fresh) << "state " << i << " judged twice";
                             })
                    .ok());
  }
  (*judges)->drain();
  for (int i = 0; i < kChecks; ++i) {
    const bool expected = i % 3 != 0 && i % 2 == 0;
    EXPECT_EQ(consistent.count(i), expected ? 1u : 0u) << i;
    EXPECT_EQ(inconsistent.count(i), expected ? 0u : 1u) << i;
  }
}

TEST(ExecJudges, AHungCheckerIsAFailureAndTheNextImageIsWrittenWhole) {
  testing::TempDir dir;
  JudgeOptions o;
  // The first check overwrites and extends its image, then hangs; the second must see its own image only.
  o.check = "/bin/sh -c 'if [ $PMLAB_CRASH_STATE = 0 ]; then printf zzzz >> {}; sleep 30; fi; test $(wc -c < {}) = 64'";
  o.timeout_s = 0.5;
  o.jobs = 1;
  o.work_dir = dir.path();
  o.files = {ImageFile{"/x/pool", 1, 2, 0, 64}};
  o.image_bytes = 64;
  auto judges = Judges::start(o);
  ASSERT_TRUE(judges.ok());
  std::vector<Verdict> verdicts(2);
  for (int i = 0; i < 2; ++i) {
    Judges::Slot& slot = (*judges)->acquire();
    ASSERT_TRUE(
        (*judges)
            ->submit(slot, {"PMLAB_CRASH_STATE=" + std::to_string(i)}, [&, i](const Verdict& v) { verdicts[i] = v; })
            .ok());
    (*judges)->drain();
  }
  EXPECT_FALSE(verdicts[0].consistent);
  EXPECT_NE(verdicts[0].outcome.find("timeout"), std::string::npos) << verdicts[0].outcome;
  EXPECT_TRUE(verdicts[1].consistent) << verdicts[1].outcome << ": " << verdicts[1].output;
}

// A slot's image file keeps what the last checker left of it, and the next image is built over that: the pages
// the run gave content are compared and copied, and holes are punched wherever else the file holds data.
// Whatever a checker does to its image (overwrites a page the next image shares with it or one no image has
// content in, cuts it, removes it, replaces it, extends it), the next checker in that slot must find its own
// image, byte for byte, with the page no image has content in a hole.
TEST(ExecJudges, WhateverACheckerDidToItsImageTheNextOneFindsItsOwn) {
  testing::TempDir dir;
  JudgeOptions o = one_checker(
      dir,
      "/bin/sh -c 'cmp -s {} \"$EXPECTED\" || exit 1; test $(du -k {} | cut -f1) -le 12 || exit 2; "
      "case $((PMLAB_CRASH_STATE % 6)) in "
      "0) printf junk | dd of={} bs=1 seek=5000 conv=notrunc 2>/dev/null;; 1) truncate -s 100 {};; 2) rm {};; "
      "3) printf junk > {}.new && mv {}.new {};; 4) printf junk >> {};; "
      "5) printf junk | dd of={} bs=1 seek=13000 conv=notrunc 2>/dev/null;; esac'");
  constexpr size_t kBytes = 4 * 4096;
  o.files = {ImageFile{"/x/pool", 1, 2, 0, kBytes}};
  o.image_bytes = kBytes;
  auto judges = Judges::start(o);
  ASSERT_TRUE(judges.ok()) << judges.status().message();
  // Pages 0 and 1 are the same in every image, page 2 is each check's own, page 3 is zero in all.
  const std::vector<size_t> pages = {2, 0, 1};
  const std::vector<bool> listed = {true, true, true, false};
  constexpr int kChecks = 18;
  std::vector<Verdict> verdicts(kChecks);
  for (int i = 0; i < kChecks; ++i) {
    std::string image(kBytes, '\0');
    std::fill(image.begin(), image.begin() + 2 * 4096, 'k');
    std::fill(image.begin() + 2 * 4096, image.begin() + 3 * 4096, static_cast<char>('a' + i));
    const std::string expected = dir.file("expected-" + std::to_string(i));
    testing::write_all(expected, image);
    Judges::Slot& slot = (*judges)->acquire();
    const std::span<const std::byte> durable(reinterpret_cast<const std::byte*>(image.data()), kBytes);
    ASSERT_TRUE((*judges)->restore(slot, durable, pages, listed).ok());
    ASSERT_TRUE((*judges)
                    ->submit(slot, {"PMLAB_CRASH_STATE=" + std::to_string(i), "EXPECTED=" + expected},
                             [&, i](const Verdict& v) { verdicts[i] = v; })
                    .ok());
  }
  (*judges)->drain();
  for (int i = 0; i < kChecks; ++i) EXPECT_TRUE(verdicts[i].consistent) << i << ": " << verdicts[i].outcome;
}

// A checker finds the files a crash leaves and nothing else: of two files at one path (the run removed the
// first and made another there) the one present, under the path's name, as long as the crash leaves it; no
// file the crash does not leave; and nothing a checker before it added.
TEST(ExecJudges, ACheckerFindsTheFilesTheCrashLeavesAndNothingElse) {
  testing::TempDir dir;
  JudgeOptions o = one_checker(dir,
                               "/bin/sh -c 'test \"$(ls -A \"$PMLAB_CRASH_DIR\" | tr \"\\n\" \" \")\" = \"$LISTED\" && "
                               "test \"$(head -c 1 \"$PMLAB_CRASH_DIR/journal\" 2>/dev/null)\" = \"$FIRST\" && "
                               "test \"$(wc -c < \"$PMLAB_CRASH_DIR/journal\" 2>/dev/null)\" = \"$BYTES\" && "
                               "touch \"$PMLAB_CRASH_DIR/lock\"'");
  o.files = {ImageFile{"/x/db", 1, 1, 0, 4096}, ImageFile{"/x/journal", 1, 2, 4096, 4096},
             ImageFile{"/x/journal", 1, 3, 8192, 4096}};
  o.image_bytes = 3 * 4096;
  auto judges = Judges::start(o);
  ASSERT_TRUE(judges.ok()) << judges.status().message();
  std::string image(3 * 4096, 'd');
  std::fill(image.begin() + 4096, image.begin() + 8192, 'a');  // the first journal
  std::fill(image.begin() + 8192, image.end(), 'b');           // the one made at its path after it
  const std::span<const std::byte> durable(reinterpret_cast<const std::byte*>(image.data()), image.size());
  struct Case {
    std::vector<FileAtCrash> left;
    std::string listed, first, bytes;
  };
  const FileAtCrash db{true, "db", 4096}, none{false, "journal", 0};
  const std::vector<Case> cases = {
      {{db, {true, "journal", 4096}, none}, "db journal ", "a", "4096"},
      {{db, none, {true, "journal", 4096}}, "db journal ", "b", "4096"},
      {{db, none, none}, "db ", "", ""},
      {{db, none, {true, "journal", 10}}, "db journal ", "b", "10"},  // cut short
      {{db, {true, "journal", 0}, none}, "db journal ", "", "0"},     // cut to nothing
  };
  std::vector<Verdict> verdicts(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    Judges::Slot& slot = (*judges)->acquire();
    ASSERT_TRUE((*judges)->restore(slot, durable, {0, 1, 2}, {true, true, true}).ok());
    slot.left = cases[i].left;
    ASSERT_TRUE((*judges)
                    ->submit(slot, {"LISTED=" + cases[i].listed, "FIRST=" + cases[i].first, "BYTES=" + cases[i].bytes},
                             [&, i](const Verdict& v) { verdicts[i] = v; })
                    .ok());
    (*judges)->drain();
  }
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_TRUE(verdicts[i].consistent) << i << ": " << verdicts[i].outcome;
}

}  // namespace
}  // namespace pmlab::crash::exec
