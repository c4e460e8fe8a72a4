#include "pmlab/crash/exec/trace_file.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "pmlab/crash/exec/replay.hpp"

#include "../../support/trace_builder.hpp"

namespace pmlab::crash::exec {
namespace {

using testing::TraceBuilder;

// Replays `replay` under its domain: at each crash point, the durable bytes at `offsets`, as one string.
std::vector<std::string> durable_at(Replay& replay, std::initializer_list<size_t> offsets) {
  std::vector<std::string> seen;
  EXPECT_TRUE(replay
                  .run([&](const CrashPointInfo&, const LineModel& m) {
                    std::string bytes;
                    for (size_t at : offsets) bytes += static_cast<char>(m.durable()[at]);
                    seen.push_back(bytes);
                    return Status{};
                  })
                  .ok());
  return seen;
}

// At each crash point of `replay`, what a crash leaves of each file.
std::vector<std::vector<FileAtCrash>> files_at(Replay& replay) {
  std::vector<std::vector<FileAtCrash>> files;
  EXPECT_TRUE(replay
                  .run([&](const CrashPointInfo& p, const LineModel&) {
                    files.push_back(p.files);
                    return Status{};
                  })
                  .ok());
  return files;
}

// The trace `bytes` replayed under ADR: at each crash point, which files a crash leaves.
std::vector<std::vector<bool>> present_at(const std::string& bytes) {
  auto t = TraceFile::parse(bytes);
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (!t.ok()) return {};
  Replay replay(*t, persist::Domain::adr);
  std::vector<std::vector<bool>> present;
  for (const auto& files : files_at(replay)) {
    present.emplace_back();
    for (const FileAtCrash& f : files) present.back().push_back(f.present);
  }
  return present;
}

// At each crash point of `replay`, how long a crash leaves each file.
std::vector<std::vector<size_t>> lengths_at(Replay& replay) {
  std::vector<std::vector<size_t>> lengths;
  for (const auto& files : files_at(replay)) {
    lengths.emplace_back();
    for (const FileAtCrash& f : files) lengths.back().push_back(f.length);
  }
  return lengths;
}

// What a crash leaves of each file: there or not, its name, its length.
using Left = std::vector<std::tuple<bool, std::string, size_t>>;
Left left(const std::vector<FileAtCrash>& files) {
  Left out;
  for (const FileAtCrash& f : files) out.emplace_back(f.present, f.name, f.length);
  return out;
}

// The same for the trace `bytes`, replayed under ADR.
std::vector<std::string> durable_at(const std::string& bytes, std::initializer_list<size_t> offsets) {
  auto t = TraceFile::parse(bytes);
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (!t.ok()) return {};
  Replay replay(*t, persist::Domain::adr);
  return durable_at(replay, offsets);
}

TEST(ExecTrace, ReplaysCrashPointsWithTheDurableImageAndWhatIsPending) {
  const std::string bytes =
      TraceBuilder().region(0, 8192).base_page(0, 0, 'a').line(0, 64, 'b').writeback(0, 64, 64).fence().exit().bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->fences(), 1u);
  EXPECT_TRUE(t->complete());
  Replay replay(*t, persist::Domain::adr);
  ASSERT_EQ(replay.files().size(), 1u);
  EXPECT_EQ(replay.image_bytes(), 8192u);
  std::vector<size_t> pending;
  std::vector<char> at_line_1;
  ASSERT_TRUE(replay
                  .run([&](const CrashPointInfo& p, const LineModel& m) {
                    pending.push_back(m.pending().size());
                    at_line_1.push_back(static_cast<char>(m.durable()[64]));
                    EXPECT_EQ(p.at_exit, p.index == 2);
                    return Status{};
                  })
                  .ok());
  EXPECT_EQ(pending, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(at_line_1, (std::vector<char>{'a', 'b'})) << "durable at the fence, not before";
  EXPECT_EQ(replay.where(64), "pool+0x40");
}

TEST(ExecTrace, APageMappedAgainBringsTheRunsStoresNotAStartingPoint) {
  const std::string bytes = TraceBuilder()
                                .region(0, 4096)
                                .base_page(0, 0, 'a')
                                .add(trace::Kind::unmap, trace::UnmapRecord{0, 0})
                                .region(1, 8192)
                                .base_page(1, 0, 'z')     // the first page again: the run's stores, not durable
                                .base_page(1, 4096, 'c')  // a page first seen now
                                .exit()
                                .bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Replay replay(*t, persist::Domain::adr);
  ASSERT_EQ(replay.files().size(), 1u);
  EXPECT_EQ(replay.image_bytes(), 8192u);
  EXPECT_EQ(durable_at(replay, {0, 4096}), (std::vector<std::string>{"ac"}));
}

// A base page carries its lines that are not zero; the others start zero, in the image and in the file a
// later domain's run starts from.
TEST(ExecTrace, ABasePageHoldsOnlyItsLinesThatAreNotZero) {
  const uint64_t lines = uint64_t{1} << 0 | uint64_t{1} << 5 | uint64_t{1} << 63;
  const std::string bytes = TraceBuilder().region(0, 4096).sparse_base_page(0, 0, lines).exit().bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Replay replay(*t, persist::Domain::adr);
  std::string image;
  ASSERT_TRUE(replay
                  .run([&](const CrashPointInfo&, const LineModel& m) {
                    image.assign(reinterpret_cast<const char*>(m.durable().data()), trace::kPageBytes);
                    return Status{};
                  })
                  .ok());
  ASSERT_EQ(image.size(), trace::kPageBytes);
  for (int k = 0; k < 64; ++k) {
    const char expected = (lines >> k & 1) ? static_cast<char>('A' + k) : '\0';
    EXPECT_EQ(image.substr(size_t(k) * 64, 64), std::string(64, expected)) << "line " << k;
  }
  // A record whose lines are not the ones its mask names is refused.
  std::string wrong = TraceBuilder()
                          .region(0, 4096)
                          .add(trace::Kind::base_page, trace::BasePageRecord{0, 0, 0, lines}, std::string(64, 'x'))
                          .bytes();
  auto refused = TraceFile::parse(wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Errc::corrupted);
}

TEST(ExecTrace, FindsWhatCostsWithoutMakingAnythingMoreDurable) {
  const std::string bytes = TraceBuilder()
                                .region(0, 8192)
                                .fence(0x1)                                    // nothing to order
                                .writeback(0, 0, 64, 0x2)                      // a clean line
                                .writeback(trace::kNoRegion, 0xdead, 64, 0x3)  // not persistent memory
                                .line(0, 128, 'x')                             // never written back
                                .exit()
                                .bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Replay replay(*t, persist::Domain::adr);
  ASSERT_TRUE(replay.run([](const CrashPointInfo&, const LineModel&) { return Status{}; }).ok());
  const Findings& f = replay.findings();
  EXPECT_EQ(f.empty_fences.at(0x1), 1u);
  EXPECT_EQ(f.redundant_writebacks.at(0x2), 1u);
  EXPECT_EQ(f.non_pm_writebacks.at(0x3), 1u);
  ASSERT_EQ(f.unflushed_at_exit.size(), 1u);
  EXPECT_EQ(f.unflushed_at_exit[0].first, 128u);
}

// A file synced whole (fsync, msync of a whole mapping) is written back by the kernel, which writes only its
// dirty pages: its clean lines are no redundant write-back, and what was stored becomes durable at the sync's
// fence. Over a region of 1 GiB the write-back costs the lines pending, not the region's 16 M lines.
TEST(ExecTrace, ASyncedFileWritesBackWhatIsPendingAndNothingIsRedundant) {
  constexpr uint64_t kRegion = uint64_t{1} << 30;
  auto sync_file = [](TraceBuilder& b, uint64_t site) -> TraceBuilder& {
    b.add(trace::Kind::writeback, trace::WritebackRecord{0, 0, 0, kRegion, site}, {}, 0,
          static_cast<uint8_t>(trace::WritebackKind::synced));
    return b.add(trace::Kind::fence, trace::FenceRecord{site, trace::kNoStack, 0}, {}, 0,
                 static_cast<uint8_t>(trace::FenceCall::fdatasync));
  };
  TraceBuilder b;
  b.region(0, kRegion).line(0, 0, 'a').line(0, kRegion - 64, 'z');
  sync_file(b, 0x5);
  sync_file(b, 0x6);  // nothing new: not a redundant write-back, an empty fence
  const std::string bytes = b.exit().bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Replay replay(*t, persist::Domain::adr);
  std::vector<size_t> pending;
  std::vector<trace::FenceCall> calls;
  std::string durable_ends;
  ASSERT_TRUE(
      replay
          .run([&](const CrashPointInfo& p, const LineModel& m) {
            pending.push_back(m.pending().size());
            calls.push_back(p.call);
            durable_ends.assign({static_cast<char>(m.durable()[0]), static_cast<char>(m.durable()[kRegion - 1])});
            return Status{};
          })
          .ok());
  EXPECT_EQ(pending, (std::vector<size_t>{2, 0, 0}));
  using enum trace::FenceCall;
  EXPECT_EQ(calls, (std::vector<trace::FenceCall>{fdatasync, fdatasync, fence})) << "the exit is no sync";
  EXPECT_EQ(durable_ends, "az");
  const Findings& f = replay.findings();
  EXPECT_TRUE(f.redundant_writebacks.empty());
  EXPECT_EQ(f.lines_written_back, 2u) << "the lines that had something to write back";
  EXPECT_EQ(f.empty_fences.at(0x6), 1u);
  // The same write-back as a program's flush of the whole region: every clean line in it is redundant.
  TraceBuilder flushed;
  flushed.region(0, kRegion).line(0, 0, 'a').writeback(0, 0, kRegion, 0x7).fence().exit();
  auto ft = TraceFile::parse(flushed.bytes());
  ASSERT_TRUE(ft.ok()) << ft.status().message();
  Replay flush_replay(*ft, persist::Domain::adr);
  ASSERT_TRUE(flush_replay.run([](const CrashPointInfo&, const LineModel&) { return Status{}; }).ok());
  EXPECT_EQ(flush_replay.findings().redundant_writebacks.at(0x7), kRegion / 64 - 1);
  // A fence made by a call this reader does not know is refused.
  TraceBuilder unknown;
  unknown.region(0, 4096).add(trace::Kind::fence, trace::FenceRecord{0x8, trace::kNoStack, 0}, {}, 0,
                              static_cast<uint8_t>(trace::kLastFenceCall) + 1);
  auto refused = TraceFile::parse(unknown.bytes());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("unknown fence call"), std::string::npos) << refused.status().message();
}

// Each crash point knows how many operations the program had begun and ended before it, across threads.
TEST(ExecTrace, CrashPointsCountTheOperationsMarkedBeforeThem) {
  auto mark = [](TraceBuilder& b, trace::OperationMark m, uint16_t thread) -> TraceBuilder& {
    return b.add(trace::Kind::operation, trace::OperationRecord{0x7}, {}, thread, static_cast<uint8_t>(m));
  };
  TraceBuilder b;
  b.region(0, 4096).fence();
  mark(b, trace::OperationMark::begin, 0);
  mark(b, trace::OperationMark::begin, 1);
  b.fence();
  mark(b, trace::OperationMark::end, 1);
  b.fence(0x99, 1);
  mark(b, trace::OperationMark::end, 0);
  b.exit();
  auto t = TraceFile::parse(b.bytes());
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<std::pair<uint64_t, uint64_t>> counts;  // (begun, done) per crash point
  Replay replay(*t, persist::Domain::adr);
  ASSERT_TRUE(replay
                  .run([&](const CrashPointInfo& p, const LineModel&) {
                    counts.emplace_back(p.ops.begun, p.ops.ended);
                    return Status{};
                  })
                  .ok());
  const std::vector<std::pair<uint64_t, uint64_t>> expected = {{0, 0}, {2, 0}, {2, 1}, {2, 2}};
  EXPECT_EQ(counts, expected);
}

// A file the run maps or writes only after some crash points held its starting content before: every crash
// image has it, not zeros, from the first crash point on.
TEST(ExecTrace, AFileFirstSeenLateHoldsItsStartingContentAtEveryCrashPoint) {
  const std::string bytes = TraceBuilder()
                                .region(0, 4096, "/dev/shm/log", 4096, 1, 7)
                                .line(0, 0, 'l')
                                .writeback(0, 0, 64)
                                .fence()
                                .region(1, 4096, "/dev/shm/db", 4096, 1, 8)
                                .base_page(1, 0, 'd')
                                .line(1, 0, 'n')
                                .writeback(1, 0, 64)
                                .fence()
                                .exit()
                                .bytes();
  // The second file's first two lines (the first file's image is one page).
  EXPECT_EQ(durable_at(bytes, {4096, 4096 + 64}), (std::vector<std::string>{"dd", "dd", "nd"}));
}

// A crash leaves at a path the file there at that moment: the first file from the start, the one the run
// made there later from when the run first wrote it, none once the run unlinked it.
TEST(ExecTrace, ACrashLeavesTheFileAPathLeadsToThen) {
  const std::string bytes =
      TraceBuilder()
          .region(0, 4096, "/dev/shm/journal", 4096, 1, 7)
          .fence()
          .add(trace::Kind::gone, trace::GoneRecord{0x42, 1, 7, 0, 0})  // unlinked
          .fence()
          .region(1, 4096, "/dev/shm/journal", 4096, 1, 8)  // made again: another inode at the path
          .fence()
          .add(trace::Kind::gone, trace::GoneRecord{0x43, 1, 8, 0, 0}, {}, 0,
               static_cast<uint8_t>(trace::GoneCall::rename))
          .exit()
          .bytes();
  EXPECT_EQ(present_at(bytes),
            (std::vector<std::vector<bool>>{{true, false}, {false, false}, {false, true}, {false, false}}));
  EXPECT_FALSE(
      TraceFile::parse(TraceBuilder().add(trace::Kind::gone, trace::GoneRecord{0, 1, 7, 0, 0}, {}, 0, 3).bytes()).ok())
      << "a call this pmlab does not know";
}

// A file renamed over another is left under the other's name; the one it replaced is gone.
TEST(ExecTrace, ARenamedFileIsLeftUnderItsNewName) {
  const std::string to = "/dev/shm/state";
  const std::string bytes =
      TraceBuilder()
          .region(0, 4096, "/dev/shm/state.tmp", 4096, 1, 9)
          .region(1, 4096, to, 4096, 1, 8)
          .fence()
          .add(trace::Kind::gone, trace::GoneRecord{0x42, 1, 8, 0, 0}, {}, 0, uint8_t{1})
          .add(trace::Kind::gone, trace::GoneRecord{0x42, 1, 9, static_cast<uint32_t>(to.size()), 0}, to, 0, uint8_t{1})
          .exit()
          .bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Replay replay(*t, persist::Domain::adr);
  const auto seen = files_at(replay);
  ASSERT_EQ(seen.size(), 2u);
  auto presence = [](const std::vector<FileAtCrash>& files) {
    std::vector<std::pair<bool, std::string>> out;
    for (const FileAtCrash& f : files) out.emplace_back(f.present, f.name);
    return out;
  };
  using Named = std::vector<std::pair<bool, std::string>>;
  EXPECT_EQ(presence(seen[0]), (Named{{true, "state.tmp"}, {true, "state"}}));
  EXPECT_EQ(presence(seen[1]), (Named{{true, "state"}, {false, "state"}}));
}

// A file linked is there under each of its names: the link's, and the one it had until a call takes that away
// (then its oldest link is its first name); a rename moves the name it names. A removal that names no path
// (the runtime could not tell it) takes the first name.
TEST(ExecTrace, ALinkedFileIsThereUnderEachNameUntilItIsTakenAway) {
  TraceBuilder b;
  auto gone = [&](trace::GoneCall call, const std::string& to, const std::string& from) {
    b.add(trace::Kind::gone,
          trace::GoneRecord{0x42, 1, 9, static_cast<uint32_t>(to.size()), static_cast<uint32_t>(from.size())},
          to + from, 0, static_cast<uint8_t>(call));
    b.fence();
  };
  b.region(0, 4096, "/dev/shm/d/a", 4096, 1, 9).fence();
  gone(trace::GoneCall::link, "/dev/shm/d/b", "");
  gone(trace::GoneCall::link, "/dev/shm/d/c", "");
  gone(trace::GoneCall::rename, "/dev/shm/d/e", "/dev/shm/d/c");  // a link's rename
  gone(trace::GoneCall::unlink, "", "/dev/shm/d/a");              // the first name: b takes its place
  gone(trace::GoneCall::rename, "/dev/shm/d/f", "/dev/shm/d/b");
  gone(trace::GoneCall::unlink, "", "/dev/shm/d/e");
  gone(trace::GoneCall::unlink, "", "");
  auto t = TraceFile::parse(b.exit().bytes());
  ASSERT_TRUE(t.ok()) << t.status().message();
  Replay replay(*t, persist::Domain::adr);
  std::vector<std::string> names;
  for (const auto& files : files_at(replay)) {
    std::string named = files[0].present ? files[0].name : "-";
    for (const std::string& l : files[0].links) named += "+" + l;
    names.push_back(named);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "a+b", "a+b+c", "a+b+e", "b+e", "f+e", "f", "-", "-"}));
  EXPECT_FALSE(TraceFile::parse(TraceBuilder()
                                    .add(trace::Kind::gone, trace::GoneRecord{0, 1, 9, 0, 0}, {}, 0,
                                         static_cast<uint8_t>(trace::GoneCall::link))
                                    .bytes())
                   .ok())
      << "a link with no new name";
}

// A file the run first sees without a name (O_TMPFILE's, or one unlinked while open) is in no crash image
// until a link names it, and is known by that name; one that no link names is in none.
TEST(ExecTrace, AFileWithoutANameIsInNoImageUntilALinkNamesIt) {
  const std::string named = "/dev/shm/d/record";
  auto t = TraceFile::parse(TraceBuilder()
                                .region(0, 4096, "", 0, 1, 9)
                                .line(0, 0, 'r')
                                .region(1, 4096, "", 0, 1, 10)
                                .line(1, 0, 's')
                                .fence()
                                .add(trace::Kind::gone, trace::GoneRecord{0x42, 1, 9, uint32_t(named.size()), 0}, named,
                                     0, static_cast<uint8_t>(trace::GoneCall::link))
                                .fence()
                                .exit()
                                .bytes());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->regions().at(0).nameless);
  EXPECT_EQ(t->regions().at(0).path, named);
  EXPECT_EQ(t->regions().at(1).path, "");
  Replay replay(*t, persist::Domain::adr);
  std::vector<std::string> names;
  for (const auto& files : files_at(replay)) {
    std::string in;
    for (const FileAtCrash& f : files) in += in_image(f) ? f.name + " " : "- ";
    names.push_back(in);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"- - ", "record - ", "record - "}));
}

// --metadata at-sync: a crash may lose the changes of the file system since the last sync from any one of them
// on, in order; a rename over a file is one change; a sync of any file or directory makes every change before
// it durable, and a directory's sync is a crash point only there.
TEST(ExecTrace, ChangesOfTheFileSystemSinceTheLastSyncMayBeLostInOrder) {
  const std::string to = "/dev/shm/state";
  auto sync = [](trace::FenceCall call) {
    return std::pair{trace::FenceRecord{0x99, trace::kNoStack, 0}, static_cast<uint8_t>(call)};
  };
  const auto [fsync, fsync_call] = sync(trace::FenceCall::fsync);
  const auto [dir_sync, dir_sync_call] = sync(trace::FenceCall::directory_sync);
  const std::string bytes =
      TraceBuilder()
          .region(0, 4096, "/dev/shm/state.tmp", 4096, 1, 9)
          .base_page(0, 0, 's')
          .region(1, 4096, to, 4096, 1, 8)
          .add(trace::Kind::fence, fsync, {}, 0, fsync_call)  // 1
          .add(trace::Kind::gone, trace::GoneRecord{0x42, 1, 8, 0, 0}, {}, 0, uint8_t{1})
          .add(trace::Kind::gone, trace::GoneRecord{0x42, 1, 9, static_cast<uint32_t>(to.size()), 0}, to, 0, uint8_t{1})
          .add(trace::Kind::resize, trace::ResizeRecord{0x43, 1, 9, 100})
          .fence()                                                  // 2: a fence instruction syncs nothing
          .add(trace::Kind::fence, dir_sync, {}, 0, dir_sync_call)  // 3 at-sync only
          .exit()
          .bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const Left synced{{true, "state.tmp", 4096}, {true, "state", 4096}},
      renamed{{true, "state", 4096}, {false, "state", 4096}}, cut{{true, "state", 100}, {false, "state", 4096}};
  for (const auto metadata : {MetadataDurability::at_call, MetadataDurability::at_sync}) {
    Replay replay(*t, persist::Domain::adr, metadata);
    std::vector<std::pair<Left, std::vector<Left>>> points;
    std::vector<std::vector<std::shared_ptr<const CutContent>>> cuts;
    ASSERT_TRUE(replay
                    .run([&](const CrashPointInfo& p, const LineModel&) {
                      std::vector<Left> unsynced;
                      for (const auto& files : p.unsynced) unsynced.push_back(left(files.files));
                      points.emplace_back(left(p.files), unsynced);
                      cuts.push_back(p.cuts);
                      return Status{};
                    })
                    .ok());
    // The cut (the second change since the sync) took what the file held durable past its new end, which a
    // crash that loses the cut shows again.
    for (size_t point = 0; point < cuts.size(); ++point) {
      const bool kept = metadata == MetadataDurability::at_sync && (point == 1 || point == 2);
      ASSERT_EQ(cuts[point].size(), kept ? 1u : 0u) << point;
      if (!kept) continue;
      const CutContent& taken = *cuts[point][0];
      EXPECT_EQ(std::tuple(taken.change, taken.file, taken.length), std::tuple(1u, 0u, 100u));
      ASSERT_EQ(taken.pieces.size(), 1u);
      EXPECT_EQ(taken.pieces[0].first, 100u);
      EXPECT_EQ(taken.pieces[0].second, std::vector<std::byte>(4096 - 100, std::byte{'s'}));
      EXPECT_EQ(describe_lost({{true, "state", 4096}, {false, "state", 4096}},
                              {{true, "state", 100}, {false, "state", 4096}}, 1, {&taken}),
                "1 change since the last sync lost: state (file 0) 4096 bytes long, not 100, its cut to 100 bytes "
                "undone (what it cut is back)");
    }
    if (metadata == MetadataDurability::at_call) {
      EXPECT_EQ(points, (std::vector<std::pair<Left, std::vector<Left>>>{{synced, {}}, {cut, {}}, {cut, {}}}));
    } else {
      EXPECT_EQ(points, (std::vector<std::pair<Left, std::vector<Left>>>{
                            {synced, {}}, {cut, {synced, renamed}}, {cut, {synced, renamed}}, {cut, {}}}));
    }
  }
  // A file cut 40 times between syncs: the crash point keeps the last sync's files and the latest changes.
  TraceBuilder many;
  many.region(0, 4096, "/dev/shm/log", 4096, 1, 9).add(trace::Kind::fence, fsync, {}, 0, fsync_call);
  for (uint64_t n = 1; n <= 40; ++n) many.add(trace::Kind::resize, trace::ResizeRecord{0x43, 1, 9, 4096 - n});
  auto cut_often = TraceFile::parse(many.exit().bytes());
  ASSERT_TRUE(cut_often.ok()) << cut_often.status().message();
  Replay replay(*cut_often, persist::Domain::adr, MetadataDurability::at_sync);
  std::vector<uint64_t> kept;
  ASSERT_TRUE(replay
                  .run([&](const CrashPointInfo& p, const LineModel&) {
                    if (!p.at_exit) return Status{};
                    EXPECT_EQ(p.changes_since_sync, 40u);
                    for (const UnsyncedFiles& files : p.unsynced) kept.push_back(files.kept);
                    if (!p.unsynced.empty()) { EXPECT_EQ(p.unsynced.back().files[0].length, 4096u - 39); }
                    return Status{};
                  })
                  .ok());
  ASSERT_EQ(kept.size(), kMaxUnsynced);
  EXPECT_EQ(kept.front(), 0u);
  EXPECT_EQ(kept[1], 40u - (kMaxUnsynced - 1));
  EXPECT_EQ(kept.back(), 39u);

  const std::vector<FileAtCrash> before{{true, "state.tmp", 4096}, {true, "state", 4096}},
      after{{true, "state", 100}, {false, "state", 4096}};
  EXPECT_EQ(describe_lost(before, after, 2),
            "2 changes since the last sync lost: state (file 0) still named state.tmp, state (file 1) still there");
}

// --metadata at-own-sync: a change is durable at a sync of what it changed. A file made is there only once
// its directory is synced, whatever its own fsync made durable (its length); a rename between directories
// once both are; a cut once the file is synced. A crash keeps the durable changes and the others up to one
// of them, in order.
TEST(ExecTrace, AChangeIsDurableAtASyncOfWhatItChanged) {
  using trace::FenceCall, trace::SyncScope;
  const std::string bytes = TraceBuilder()
                                .region(0, 4096, "/dev/shm/d/a", 4096, 1, 9)  // there from the start
                                .base_page(0, 0, 'a')
                                .region(1, 4096, "/dev/shm/d/b", 0, 1, 10)  // made by the run
                                .sync(FenceCall::fsync, SyncScope::file, 1, 10)
                                .fence()
                                .sync(FenceCall::directory_sync, SyncScope::directory, 1, 2, "/dev/shm/d")
                                .add(trace::Kind::gone, trace::GoneRecord{0x42, 1, 10, 12, 0}, "/dev/shm/e/c", 0,
                                     static_cast<uint8_t>(trace::GoneCall::rename))
                                .sync(FenceCall::directory_sync, SyncScope::directory, 1, 3, "/dev/shm/e")
                                .add(trace::Kind::resize, trace::ResizeRecord{0x43, 1, 9, 100})
                                .sync(FenceCall::directory_sync, SyncScope::directory, 1, 2, "/dev/shm/d")
                                .sync(FenceCall::fdatasync, SyncScope::file, 1, 9)
                                .exit()
                                .bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Replay replay(*t, persist::Domain::adr, MetadataDurability::at_own_sync);
  std::vector<std::pair<uint64_t, std::vector<std::pair<uint64_t, Left>>>> points;
  std::vector<std::vector<std::pair<uint64_t, size_t>>> cuts;
  ASSERT_TRUE(replay
                  .run([&](const CrashPointInfo& p, const LineModel&) {
                    std::vector<std::pair<uint64_t, Left>> unsynced;
                    for (const auto& files : p.unsynced) unsynced.emplace_back(files.kept, left(files.files));
                    points.emplace_back(p.changes_since_sync, unsynced);
                    cuts.emplace_back();
                    for (const auto& cut : p.cuts) cuts.back().emplace_back(cut->change, cut->length);
                    return Status{};
                  })
                  .ok());
  using Point = std::pair<uint64_t, std::vector<std::pair<uint64_t, Left>>>;
  EXPECT_EQ(points, (std::vector<Point>{
                        // b made (its entry, then its length), neither synced
                        {2, {{0, {{true, "a", 4096}, {false, "b", 0}}}, {1, {{true, "a", 4096}, {true, "b", 0}}}}},
                        // its fsync made its length durable, not its entry
                        {1, {{0, {{true, "a", 4096}, {false, "b", 4096}}}}},
                        {1, {{0, {{true, "a", 4096}, {false, "b", 4096}}}}},
                        // d synced; b moved to e as c, which e's sync alone does not make durable
                        {1, {{0, {{true, "a", 4096}, {true, "b", 4096}}}}},
                        // a's cut follows the move, and d's sync makes the move durable, not the cut
                        {2, {{0, {{true, "a", 4096}, {true, "b", 4096}}}, {1, {{true, "a", 4096}, {true, "c", 4096}}}}},
                        {1, {{0, {{true, "a", 4096}, {true, "c", 4096}}}}},
                        {0, {}},
                    }));
  EXPECT_EQ(cuts[3], (std::vector<std::pair<uint64_t, size_t>>{}));
  EXPECT_EQ(cuts[4], (std::vector<std::pair<uint64_t, size_t>>{{1, 100}}));
  EXPECT_EQ(cuts[5], (std::vector<std::pair<uint64_t, size_t>>{{0, 100}})) << "numbered among those left";
  EXPECT_TRUE(cuts[6].empty());
  EXPECT_EQ(describe_lost({{true, "a", 4096}, {false, "b", 4096}}, {{true, "a", 4096}, {true, "b", 4096}}, 1, {},
                          changes_lost(MetadataDurability::at_own_sync)),
            "1 change not yet synced lost: b not there");
  // A rename over a file is one change: no crash leaves the old file gone without the new one in its place.
  const std::string to = "/dev/shm/d/state";
  auto renamed = TraceFile::parse(
      TraceBuilder()
          .region(0, 4096, "/dev/shm/d/state.tmp", 4096, 1, 9)
          .region(1, 4096, to, 4096, 1, 8)
          .add(trace::Kind::gone, trace::GoneRecord{0x42, 1, 8, 0, 0}, {}, 0, uint8_t{1})
          .add(trace::Kind::gone, trace::GoneRecord{0x42, 1, 9, static_cast<uint32_t>(to.size()), 0}, to, 0, uint8_t{1})
          .exit()
          .bytes());
  ASSERT_TRUE(renamed.ok()) << renamed.status().message();
  Replay over(*renamed, persist::Domain::adr, MetadataDurability::at_own_sync);
  std::vector<std::pair<uint64_t, std::vector<std::pair<uint64_t, Left>>>> at_exit;
  ASSERT_TRUE(over.run([&](const CrashPointInfo& p, const LineModel&) {
                    std::vector<std::pair<uint64_t, Left>> unsynced;
                    for (const auto& files : p.unsynced) unsynced.emplace_back(files.kept, left(files.files));
                    at_exit.emplace_back(p.changes_since_sync, unsynced);
                    return Status{};
                  })
                  .ok());
  EXPECT_EQ(at_exit, (std::vector<Point>{{1, {{0, {{true, "state.tmp", 4096}, {true, "state", 4096}}}}}}));
  // A sync the trace does not say the target of syncs every file.
  auto unnamed = TraceFile::parse(TraceBuilder()
                                      .region(0, 4096, "/dev/shm/d/b", 0, 1, 10)
                                      .add(trace::Kind::fence, trace::FenceRecord{0x99, trace::kNoStack, 0}, {}, 0,
                                           static_cast<uint8_t>(FenceCall::fsync))
                                      .exit()
                                      .bytes());
  ASSERT_TRUE(unnamed.ok()) << unnamed.status().message();
  Replay all(*unnamed, persist::Domain::adr, MetadataDurability::at_own_sync);
  std::vector<uint64_t> not_durable;
  ASSERT_TRUE(all.run([&](const CrashPointInfo& p, const LineModel&) {
                   not_durable.push_back(p.changes_since_sync);
                   return Status{};
                 })
                  .ok());
  EXPECT_EQ(not_durable, (std::vector<uint64_t>{2, 0}));
  EXPECT_FALSE(
      TraceFile::parse(TraceBuilder().add(trace::Kind::synced, trace::SyncedRecord{1, 2, 0, 0}, {}, 0, 4).bytes()).ok())
      << "a scope this pmlab does not know";
  // A file cut more times than a replay keeps changes without a sync of it: the earliest are taken as durable,
  // and a crash point lists the files with none of the rest, then after each of the latest.
  TraceBuilder many;
  many.region(0, 4096, "/dev/shm/d/log", 4096, 1, 9);
  for (uint64_t n = 1; n <= kMaxNotDurable + 10; ++n)
    many.add(trace::Kind::resize, trace::ResizeRecord{0x43, 1, 9, 4096 - n});
  auto cut_often = TraceFile::parse(many.exit().bytes());
  ASSERT_TRUE(cut_often.ok()) << cut_often.status().message();
  Replay often(*cut_often, persist::Domain::adr, MetadataDurability::at_own_sync);
  ASSERT_TRUE(often
                  .run([&](const CrashPointInfo& p, const LineModel&) {
                    EXPECT_EQ(p.changes_since_sync, kMaxNotDurable);
                    EXPECT_EQ(p.cuts.size(), kMaxNotDurable);
                    EXPECT_EQ(p.unsynced.size(), kMaxUnsynced);
                    if (p.unsynced.empty()) return Status{};
                    EXPECT_EQ(p.unsynced.front().files[0].length, 4096u - 10) << "the earliest 10 cuts durable";
                    EXPECT_EQ(p.unsynced.back().kept, kMaxNotDurable - 1);
                    return Status{};
                  })
                  .ok());
}

// A file below a --pool directory is named in a crash image by its path below it (below the deepest, where
// they nest); any other file by its name. The trace lists the directories below a --pool directory it names,
// each with whether it was there at the start.
TEST(ExecTrace, AFileBelowAPoolDirectoryIsNamedByItsPathBelowIt) {
  using trace::DirectoryEvent;
  auto directory = [](const std::string& path, DirectoryEvent event) {
    return std::pair{trace::DirectoryRecord{static_cast<uint32_t>(path.size()), 0}, static_cast<uint8_t>(event)};
  };
  TraceBuilder b;
  for (const auto& [path, event] :
       std::vector<std::pair<std::string, DirectoryEvent>>{{"/dev/shm/box", DirectoryEvent::root},
                                                           {"/dev/shm/box/new", DirectoryEvent::there},
                                                           {"/dev/shm/box/tmp", DirectoryEvent::there},
                                                           {"/dev/shm/box/new/", DirectoryEvent::there},
                                                           {"/dev/shm/box/cur/inner", DirectoryEvent::root},
                                                           {"/dev/shm/box/cur", DirectoryEvent::made},
                                                           {"/dev/shm/box/cur", DirectoryEvent::removed}}) {
    const auto [record, flags] = directory(path, event);
    b.add(trace::Kind::directory, record, path, 0, flags);
  }
  auto t = TraceFile::parse(b.exit().bytes());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->image_name("/dev/shm/box/new/msg-1"), "new/msg-1");
  EXPECT_EQ(t->image_name("/dev/shm/box/db"), "db");
  EXPECT_EQ(t->image_name("/dev/shm/box/cur/inner/x"), "x") << "the deepest root";
  EXPECT_EQ(t->image_name("/dev/shm/boxes/db"), "db") << "not below /dev/shm/box";
  EXPECT_EQ(t->image_name("/var/lib/kv.db"), "kv.db");
  EXPECT_EQ(t->directories(), (std::vector<std::pair<std::string, bool>>{
                                  {"/dev/shm/box/new", true}, {"/dev/shm/box/tmp", true}, {"/dev/shm/box/cur", false}}))
      << "once each";
  // Refused: a relative path, an event this pmlab does not know, a directory below no --pool directory.
  for (const auto& [path, event] :
       std::vector<std::pair<std::string, uint8_t>>{{"relative", 0}, {"/dev/shm/box/x", 4}, {"/dev/shm/other", 0}}) {
    const auto [record, flags] = directory(path, DirectoryEvent::there);
    const auto [root, root_flags] = directory("/dev/shm/box", DirectoryEvent::root);
    EXPECT_FALSE(TraceFile::parse(TraceBuilder()
                                      .add(trace::Kind::directory, root, "/dev/shm/box", 0, root_flags)
                                      .add(trace::Kind::directory, record, path, 0, event)
                                      .bytes())
                     .ok())
        << path;
  }
  EXPECT_FALSE(TraceFile::parse(
                   TraceBuilder().add(trace::Kind::directory, trace::DirectoryRecord{64, 0}, "/short", 0, 0).bytes())
                   .ok())
      << "a path past its record";
}

// A file written with write(2) is as long as its writes reached: not its view's reservation, and not what a
// sync of the whole view names. Its writes' lines are the kernel's copy, which no flush of the program's
// made redundant.
TEST(ExecTrace, AWrittenFileIsAsLongAsItsWritesReached) {
  using enum trace::WritebackKind;
  const std::string bytes = TraceBuilder()
                                .written_view(0, 64 << 20, 4096)
                                .line(0, 8192, 'w')
                                .writeback(0, 8192, 64, 0x42, 0, non_temporal)
                                .writeback(0, 8192, 64, 0x42, 0, non_temporal)  // the same bytes written again
                                .writeback(0, 0, 64 << 20, 0x43, 0, synced)
                                .fence()
                                .exit()
                                .bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->regions().at(0).written);
  Replay replay(*t, persist::Domain::adr);
  EXPECT_EQ(replay.image_bytes(), 3 * 4096u);
  EXPECT_EQ(lengths_at(replay), (std::vector<std::vector<size_t>>{{8192 + 64}, {8192 + 64}}))
      << "the file itself ends where its last write did";
  EXPECT_EQ(durable_at(replay, {8192}), (std::vector<std::string>{std::string(1, '\0'), "w"}));
  EXPECT_TRUE(replay.findings().redundant_writebacks.empty());
  const std::string unknown = TraceBuilder()
                                  .add(trace::Kind::region, trace::RegionRecord{0, 0, 0x10000, 4096, 0, 4096, 1, 7}, {},
                                       0, static_cast<uint8_t>(trace::RegionHow::written) + 1)
                                  .bytes();
  EXPECT_FALSE(TraceFile::parse(unknown).ok()) << "a region of a kind this pmlab does not know";
}

// A file cut short (ftruncate) loses what lay past its new end, durable or pending, and reads zero there
// when it grows again; a file resized longer than anything wrote it is that long in the image.
TEST(ExecTrace, AFileCutShortLosesWhatLayPastItsEnd) {
  using enum trace::WritebackKind;
  auto resize = [](uint64_t length) { return trace::ResizeRecord{0x77, 1, 7, length}; };
  const std::string bytes = TraceBuilder()
                                .written_view(0, 64 << 20, 4096)
                                .base_page(0, 0, 'a')
                                .line(0, 4096, 'w')
                                .writeback(0, 4096, 64, 0x42, 0, non_temporal)
                                .fence()  // 1: the write pending
                                .line(0, 64, 'p')
                                .writeback(0, 64, 64, 0x42, 0, non_temporal)
                                .add(trace::Kind::resize, resize(100))
                                .fence()  // 2: cut to 100 bytes, the pending line's bytes past them with it
                                .line(0, 4096, 'x')
                                .writeback(0, 4096, 64, 0x42, 0, non_temporal)
                                .fence()  // 3: grown again by a write, the bytes between zero
                                .add(trace::Kind::resize, resize(5 * 4096 + 1))
                                .exit()
                                .bytes();
  auto t = TraceFile::parse(bytes);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Replay replay(*t, persist::Domain::adr);
  EXPECT_EQ(replay.image_bytes(), 6 * 4096u) << "as long as the longest resize";
  EXPECT_EQ(lengths_at(replay), (std::vector<std::vector<size_t>>{{4096 + 64}, {100}, {4096 + 64}, {5 * 4096 + 1}}));
  const std::string zero(1, '\0');
  EXPECT_EQ(durable_at(replay, {0, 99, 100, 4095, 4096}),
            (std::vector<std::string>{"aaaa" + zero, "aa" + zero + zero + zero, "ap" + zero + zero + zero,
                                      "ap" + zero + zero + "x"}));
  std::vector<std::pair<size_t, std::string>> pending;  // at crash points 2 and 3
  ASSERT_TRUE(replay
                  .run([&](const CrashPointInfo& p, const LineModel& m) {
                    if (p.index == 2 || p.index == 3)
                      for (const PendingLine& l : m.pending()) {
                        const auto& newest = l.values.back();
                        pending.emplace_back(l.offset, std::string(reinterpret_cast<const char*>(newest.data()), 64));
                      }
                    return Status{};
                  })
                  .ok());
  EXPECT_EQ(pending, (std::vector<std::pair<size_t, std::string>>{{64, std::string(36, 'p') + std::string(28, '\0')},
                                                                  {4096, std::string(64, 'x')}}))
      << "the cut line keeps only its bytes before the end";
  EXPECT_FALSE(TraceFile::parse(TraceBuilder().add(trace::Kind::resize, resize(uint64_t{1} << 50)).bytes()).ok());
}

TEST(ExecTrace, RefusesDamagedTracesWithTheOffsetOfTheFirstBadRecord) {
  const std::string good = TraceBuilder().region(0, 8192).line(0, 64, 'b').fence().exit().bytes();
  ASSERT_TRUE(TraceFile::parse(good).ok());
  auto refused = [](std::string b) {
    auto t = TraceFile::parse(std::move(b));
    return !t.ok() && t.status().code() == Errc::corrupted;
  };
  EXPECT_TRUE(refused(""));
  EXPECT_TRUE(refused(std::string(64, 'x')));
  std::string v = good;
  v[8] = static_cast<char>(trace::kVersion + 1);  // a version this pmlab does not read
  EXPECT_TRUE(refused(v));
  std::string truncated = good.substr(0, good.size() - 8);  // the header still counts the whole
  EXPECT_TRUE(refused(truncated));
  std::string odd = good;
  const size_t first = sizeof(trace::FileHeader);
  odd[first + 4] = 13;  // a record length that is no multiple of 8
  EXPECT_TRUE(refused(odd));
  std::string kind = good;
  kind[first] = 77;
  EXPECT_TRUE(refused(kind));
  EXPECT_TRUE(refused(TraceBuilder().line(3, 0, 'a').bytes())) << "a line of an undeclared region";
  EXPECT_TRUE(refused(TraceBuilder().region(0, 4096).line(0, 8192, 'a').bytes())) << "a line past its region";
  EXPECT_TRUE(refused(TraceBuilder().region(0, 4096).region(0, 4096).bytes())) << "a region declared twice";
  EXPECT_TRUE(refused(TraceBuilder().add(trace::Kind::fence, trace::FenceRecord{0, 5, 0}).bytes()))
      << "an unknown stack";
  EXPECT_TRUE(refused(TraceBuilder().add(trace::Kind::operation, trace::OperationRecord{0}, {}, 0, 2).bytes()))
      << "an operation mark that is neither a begin nor an end";
  auto message = TraceFile::parse(odd).status().message();
  EXPECT_NE(message.find("byte 64"), std::string::npos) << message;
}

}  // namespace
}  // namespace pmlab::crash::exec
