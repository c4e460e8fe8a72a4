// Programs that change their pool file with write(2) and pwrite(2), crash-tested as a DAX file system carries
// the writes out: each a copy of non-temporal stores, unordered until the file is synced or, on a
// descriptor opened O_DSYNC, until the call returns.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include <map>
#include <string>
#include <vector>

#include "../../support/crash_exec.hpp"
#include "../../support/temp_dir.hpp"
#include "pmlab/crash/exec/trace_file.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

const std::string kLog = std::string(PMLAB_SUBJECTS_DIR) + "/pmem-log";
const std::string kWrittenFile = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/written_file.py";
const std::string kAppendedLog = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/appended_log.py";
const std::string kReplacedFile = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/replaced_file.py";
const std::string kCutMapped = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/cut_mapped.py";
const std::string kMaildir = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/maildir.py";
const std::string kNewRecords = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/new_records.py";
const std::string kHardLinks = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/hard_links.py";
const std::string kUnnamedRecords = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/unnamed_records.py";
const std::string kArrivedRecords = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/arrived_records.py";
const std::string kSyncedElsewhere = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/synced_elsewhere.py";
const std::string kExchanged = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/exchanged.py";
const std::string kTruncatedJournal = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/truncated_journal.py";
const std::string kStdioLog = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/stdio_log.c";
const std::string kKernelCopies = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/kernel_copies.py";

// `pmem-log append POOL 6 --api API --bug BUG` crash-tested at `granularity`, from no pool.
testing::ExecOutcome exec_log(const testing::TempDir& dir, const std::string& api, const std::string& bug,
                              const std::string& granularity = "line") {
  const std::string pool = dir.file("log.pool");
  return testing::crash_exec("rm -f " + pool, kLog + " check {}", dir.file(api + "-" + bug + "-" + granularity),
                             {"--pool", pool, "--granularity", granularity, "--budget", "200"},
                             {kLog, "append", pool, "6", "--api", api, "--bug", bug});
}

// `o` passed, having judged more than `states` states at line granularity (`what`: which run it was).
void expect_passed(const testing::ExecOutcome& o, const std::string& what, uint64_t states) {
  EXPECT_EQ(o.exit_code, 0) << what << ": " << o.err;
  EXPECT_GT(o.metric("line", "states_checked"), states) << what << ": " << o.err;
}

// `o` failed, and its output says `text`.
void expect_failed_saying(const testing::ExecOutcome& o, const std::string& text) {
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find(text), std::string::npos) << o.err;
}

// `o` failed, with failures at `granularity` every one at a crash point made by `call`, and its output says
// `broken` (where given).
void expect_fails_at(const testing::ExecOutcome& o, const std::string& call, const std::string& broken = "",
                     const std::string& granularity = "line") {
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const nlohmann::json* run = o.run(granularity);
  ASSERT_NE(run, nullptr) << o.err;
  EXPECT_FALSE((*run)["failures"].empty()) << o.err;
  for (const auto& f : (*run)["failures"]) EXPECT_EQ(f["call"], call) << f.dump();
  if (!broken.empty()) { EXPECT_NE(o.err.find(broken), std::string::npos) << o.err; }
}

// The write route: a write-back is a pwrite of the range, a fence an fdatasync. Correct, it passes at line
// and word granularity with a crash point per fdatasync (2 per append) and the exit. Without the fdatasync
// between the record's write and the commit's, both are in flight together at the commit's sync, where
// the commit can persist without the record.
TEST(CrashExecWrites, APwriteLogPassesAndFailsWithoutTheSyncBetweenItsWrites) {
  testing::TempDir dir;
  for (const char* granularity : {"line", "word"}) {
    const auto good = exec_log(dir, "write", "none", granularity);
    EXPECT_EQ(good.exit_code, 0) << good.err;
    EXPECT_EQ(good.failures(granularity), 0u);
    EXPECT_EQ(good.metric(granularity, "crash_points"), 13u) << good.err;
    EXPECT_GT(good.metric(granularity, "states_checked"), 0u);
  }
  const auto bug = exec_log(dir, "write", "no-fence");
  expect_fails_at(bug, "fdatasync", "committed is not whole");
}

// On a descriptor opened O_DSYNC a write is durable when it returns: no fence is needed, and each write is
// a crash point of its own, where its lines may have persisted in part. Writing the commit first fails.
TEST(CrashExecWrites, AWriteOnAnODsyncDescriptorIsDurableWhenItReturns) {
  testing::TempDir dir;
  const auto good = exec_log(dir, "write-dsync", "no-fence");
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(good.metric("line", "crash_points"), 13u) << good.err;
  const nlohmann::json* run = good.run("line");
  ASSERT_NE(run, nullptr);
  EXPECT_EQ((*run)["trace"]["fences_by_call"]["O_DSYNC write"], 12) << (*run)["trace"].dump();
  EXPECT_NE((*run)["trace"]["write_tracking"].get<std::string>().find("write(2)"), std::string::npos);
  const auto bug = exec_log(dir, "write-dsync", "commit-first");
  expect_fails_at(bug, "O_DSYNC write");
}

// How many line records at file offset `offset` a run's trace holds, from the runtime's views of written
// files (`written`) or from the program's mappings.
uint64_t lines_recorded_at(const testing::ExecOutcome& o, uint64_t offset, bool written) {
  const nlohmann::json* run = o.run("line");
  if (run == nullptr) return UINT64_MAX;
  auto trace = TraceFile::open((*run)["trace"]["path"].get<std::string>());
  if (!trace.ok()) return UINT64_MAX;
  uint64_t n = 0;
  EXPECT_TRUE(trace->replay([&](const TraceRecord& rec) -> Status {
    if (rec.kind != trace::Kind::line) return {};
    const auto line = rec.as<trace::LineRecord>();
    const TraceRegion& region = trace->regions().at(line.region);
    n += region.written == written && region.file_offset + line.offset == offset;
    return {};
  }));
  return n;
}

// A program started by a shell is traced from its first write to the pool, as from a first mapping: the
// same crash points as when pmlab starts it, and a note names it.
TEST(CrashExecWrites, AProcessTheProgramStartsIsTracedFromItsFirstWrite) {
  testing::TempDir dir;
  const std::string pool = dir.file("log.pool");
  const auto o = testing::crash_exec(
      "rm -f " + pool, kLog + " check {}", dir.file("sh"), {"--pool", pool, "--granularity", "line"},
      {"sh", "-c", kLog + " append " + pool + " 6 --api write --bug no-fence; echo appended"});
  EXPECT_EQ(o.metric("line", "crash_points"), 7u) << o.err;
  expect_fails_at(o, "fdatasync");
  EXPECT_NE(o.err.find("which the program started; the program itself mapped or wrote no persistent memory"),
            std::string::npos)
      << o.err;
}

// A Python program that stores records through a mapping of its file's first page, or writes them with
// os.pwrite 80 MiB into the file (past the runtime's first view of it, which then grows), and writes the
// count with os.pwrite into the mapped page: the two routes to one file judged together. Writing the count
// first fails at its fdatasync, either way.
TEST(CrashExecWrites, WritesAndMappedStoresToOneFileAreJudgedTogether) {
  testing::TempDir dir;
  const std::string file = dir.file("records");
  for (const std::string where : {"near", "far"}) {
    auto exec = [&](const std::string& out, const std::vector<std::string>& bug) {
      std::vector<std::string> program = {"python3", kWrittenFile, "append", file, "6", where};
      program.insert(program.end(), bug.begin(), bug.end());
      return testing::crash_exec("rm -f " + file, testing::python_check(kWrittenFile + " check {} " + where),
                                 dir.file(where + out), {"--pool", file, "--granularity", "line"}, program);
    };
    const auto good = exec("good", {});
    EXPECT_EQ(good.exit_code, 0) << good.err;
    EXPECT_EQ(good.metric("line", "crash_points"), 13u) << good.err;
    // Each count (1 to 6) is recorded once, as the kernel's write, never again as a store through the
    // mapping that shows it.
    EXPECT_EQ(lines_recorded_at(good, 0, true), 6u);
    EXPECT_EQ(lines_recorded_at(good, 0, false), 0u);
    const auto bug = exec("bug", {"count-first"});
    expect_fails_at(bug, "fdatasync", "counted is not whole");
  }
}

// A write that extends a file makes its new length durable at once (docs/crash-simulator.md): a log appended
// without checksums shows a torn last record, and the same log with a CRC per record passes.
TEST(CrashExecWrites, AnAppendedLogNeedsChecksumsForItsTornLastRecord) {
  testing::TempDir dir;
  const std::string log = dir.file("appended");
  auto exec = [&](const std::string& mode) {
    return testing::crash_exec("rm -f " + log, testing::python_check(kAppendedLog + " check {} " + mode),
                               dir.file(mode), {"--pool", log}, {"python3", kAppendedLog, "append", log, "6", mode});
  };
  const auto plain = exec("plain");
  expect_fails_at(plain, "fdatasync", "", "word");
  const auto checksummed = exec("checksummed");
  EXPECT_EQ(checksummed.exit_code, 0) << checksummed.err;
  EXPECT_GT(checksummed.metric("word", "states_checked"), 6u);
}

// Replace by rename: each version written to a temporary file, synced, then renamed over the state file the
// run never writes itself (its starting content is viewed at the run's first event). A crash leaves the
// renamed file under the state file's name; synced only after the rename, a version can be left torn.
TEST(CrashExecWrites, AFileReplacedByRenameIsWholeOnlyWhenSyncedFirst) {
  testing::TempDir dir;
  const std::string state = dir.file("state");
  auto exec = [&](const std::string& out, const std::vector<std::string>& bug, const std::string& metadata) {
    std::vector<std::string> program = {"python3", kReplacedFile, "update", state, "4"};
    program.insert(program.end(), bug.begin(), bug.end());
    return testing::crash_exec(
        "rm -f " + state + " " + state + ".tmp && python3 " + kReplacedFile + " update " + state + " 1",
        testing::python_check(kReplacedFile + " check {}"), dir.file(out + "-" + metadata),
        {"--pool", state, "--pool", state + ".tmp", "--granularity", "line", "--budget", "60", "--metadata", metadata},
        program);
  };
  // A crash that loses the renames since the last sync (--metadata at-sync) keeps an older whole version: a
  // rename over a file is one change, never the old file gone without the new one in its place.
  for (const char* metadata : {"at-call", "at-sync"}) {
    const auto good = exec("good", {}, metadata);
    EXPECT_EQ(good.exit_code, 0) << metadata << ": " << good.err;
    EXPECT_EQ(good.metric("line", "crash_points"), 5u) << metadata << ": " << good.err;
    EXPECT_GT(good.metric("line", "states_checked"), 20u) << metadata;
    const auto bug = exec("bug", {"sync-after-rename"}, metadata);
    expect_fails_at(bug, "fsync", "no whole version");
  }
  // Temporary files named as the program goes (mkstemp, as `sed -i` makes them) cannot be named with --pool:
  // their directory is, and {} is the crash image of the directory.
  const std::string states = dir.file("states");
  auto named = [&](const std::string& out, const std::vector<std::string>& bug) {
    std::vector<std::string> program = {"python3", kReplacedFile, "update", states + "/state", "4", "mkstemp"};
    program.insert(program.end(), bug.begin(), bug.end());
    return testing::crash_exec(
        "rm -rf " + states + " && mkdir " + states + " && python3 " + kReplacedFile + " update " + states + "/state 1",
        testing::python_check(kReplacedFile + " check {}/state"), dir.file(out),
        {"--pool", states, "--granularity", "line", "--budget", "60"}, program);
  };
  const auto good = named("named-good", {});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(good.metric("line", "crash_points"), 5u) << good.err;
  expect_fails_at(named("named-bug", {"sync-after-rename"}), "fsync", "no whole version");
}

// A record kept in a new file of its own, synced with fsync: ext4 and XFS commit the new file's name with it
// (at-sync), POSIX asks for its directory's fsync too (at-own-sync), and without one a crash loses records
// that had returned. With the directory synced it passes in both.
TEST(CrashExecWrites, ANewFilesNameIsDurableWhereItsDirectoryIsSynced) {
  testing::TempDir dir;
  const std::string records = dir.file("records");
  auto exec = [&](const std::string& metadata, const std::vector<std::string>& how) {
    std::vector<std::string> program = {"python3", kNewRecords, "add", records, "3"};
    program.insert(program.end(), how.begin(), how.end());
    return testing::crash_exec(
        "rm -rf " + records + " && mkdir " + records, testing::python_check(kNewRecords + " check {}"),
        dir.file(metadata + (how.empty() ? "" : "-synced")),
        {"--pool", records, "--granularity", "line", "--budget", "60", "--metadata", metadata}, program);
  };
  for (const char* metadata : {"at-sync", "at-own-sync"}) {
    const auto synced = exec(metadata, {"dir-sync"});
    EXPECT_EQ(synced.exit_code, 0) << metadata << ": " << synced.err;
    EXPECT_EQ(synced.metric("line", "crash_points"), 7u) << synced.err;
    const auto unsynced = exec(metadata, {});
    if (std::string(metadata) != "at-own-sync") {
      EXPECT_EQ(unsynced.exit_code, 0) << metadata << ": " << unsynced.err;
      continue;
    }
    expect_failed_saying(unsynced, "is not there, but it had returned");
    EXPECT_NE(unsynced.err.find("not yet synced lost: record-1 not there"), std::string::npos) << unsynced.err;
  }
  // More names not yet durable than a replay keeps: the earliest are taken as durable, and the run says so.
  const auto many = testing::crash_exec(
      "rm -rf " + records + " && mkdir " + records, testing::python_check(kNewRecords + " check {}"), dir.file("many"),
      {"--pool", records, "--granularity", "line", "--budget", "5", "--metadata", "at-own-sync"},
      {"python3", kNewRecords, "add", records, "1100"});
  EXPECT_NE(many.err.find("77 changes of the file system were taken as durable before a sync made them so"),
            std::string::npos)
      << many.err;
}

// The same records in a directory the program makes first: where each change waits for a sync of what it
// changed, the new directory is there only once its parent is synced, and the records in it with it.
TEST(CrashExecWrites, ADirectoryMadeIsDurableWhereItsParentIsSynced) {
  testing::TempDir dir;
  const std::string records = dir.file("records");
  // `how` the program adds 3 records; `checked` what the check looks for besides them.
  auto exec = [&](const std::string& out, const std::vector<std::string>& how, const std::string& checked = "") {
    std::vector<std::string> program = {"python3", kNewRecords, "add", records, "3", "dir-sync", "new-dir"};
    program.insert(program.end(), how.begin(), how.end());
    return testing::crash_exec(
        "rm -rf " + records + " && mkdir " + records,
        testing::python_check(kNewRecords + " check {} new-dir" + checked), dir.file(out),
        {"--pool", records, "--granularity", "line", "--budget", "60", "--metadata", "at-own-sync"}, program);
  };
  const auto unsynced = exec("unsynced", {});
  expect_failed_saying(unsynced, "is not there, but it had returned");
  EXPECT_NE(unsynced.err.find(", records not there"), std::string::npos) << unsynced.err;
  const auto synced = exec("synced", {"parent-sync"});
  EXPECT_EQ(synced.exit_code, 0) << synced.err;
  EXPECT_EQ(synced.metric("line", "crash_points"), 8u) << "the parent's sync, before any record, is one";
  // Without --setup, what the first domain's run made goes before the next one's: its mkdir would fail.
  std::filesystem::remove_all(records);
  std::filesystem::create_directories(records);
  const auto domains =
      testing::crash_exec("", testing::python_check(kNewRecords + " check {} new-dir"), dir.file("domains"),
                          {"--pool", records, "--domain", "adr,eadr", "--granularity", "line", "--budget", "10"},
                          {"python3", kNewRecords, "add", records, "2", "dir-sync", "new-dir", "parent-sync"});
  EXPECT_EQ(domains.exit_code, 0) << domains.err;
  EXPECT_NE(domains.err.find("removed " + records + "/records/, which the first traced run made"), std::string::npos)
      << domains.err;
  // Renamed, the directory takes what is below it along, in the directories it left and entered.
  const auto published = exec("publish", {"parent-sync", "publish"}, " publish 3");
  EXPECT_EQ(published.exit_code, 0) << published.err;
  const auto unpublished = exec("publish-unsynced", {"parent-sync", "publish-unsynced"}, " publish 3");
  expect_failed_saying(unpublished, "published still named records");
}

// A mail directory's messages, written to tmp/, synced, and renamed to new/: the directories below the --pool
// directory are in every crash image (the check requires tmp/ and new/, empty or not), and a file in them is
// named there by its path below it. A move between two directories is durable at a sync of both where each
// change waits for a sync of what it changed (at-own-sync): syncing new/ alone, enough where the journal
// commits the move whole (at-sync), loses deliveries that had returned.
TEST(CrashExecWrites, AMessageMovedToAnotherDirectoryIsDurableWhereBothAreSynced) {
  testing::TempDir dir;
  const std::string box = dir.file("box");
  auto exec = [&](const std::string& metadata, const std::string& how) {
    return testing::crash_exec("rm -rf " + box + " && mkdir -p " + box + "/tmp " + box + "/new " + box + "/cur",
                               testing::python_check(kMaildir + " check {}"), dir.file(metadata + "-" + how),
                               {"--pool", box, "--granularity", "line", "--budget", "60", "--metadata", metadata},
                               {"python3", kMaildir, "deliver", box, "3", how});
  };
  const auto journaled = exec("at-sync", "sync-new");
  EXPECT_EQ(journaled.exit_code, 0) << journaled.err;
  EXPECT_EQ(journaled.metric("line", "crash_points"), 7u) << journaled.err;
  const auto one = exec("at-own-sync", "sync-new");
  expect_failed_saying(one, "new/msg-1 is not there, but its delivery had returned");
  const auto both = exec("at-own-sync", "sync-both");
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_GT(both.metric("line", "states_checked"), 40u) << both.err;
  // A tree too large to be a program's own files (a home directory named by mistake) is taken only in part.
  const auto large = testing::crash_exec(
      "rm -rf " + box + " && mkdir -p " + box + "/new " + box + "/tmp && python3 -c \"import sys\nfor i in " +
          "range(10001): open(sys.argv[1] + '/tmp/e%05d' % i, 'w').close()\" " + box,
      testing::python_check(kMaildir + " check {}"), dir.file("large"),
      {"--pool", box, "--granularity", "line", "--budget", "2"},
      {"python3", "-c", "import sys; open(sys.argv[1] + '/new/msg-1', 'wb').write(b'x')", box});
  EXPECT_NE(large.err.find("the --pool directories hold 10000 files and directories or more"), std::string::npos)
      << large.err;
}

// What leaves a --pool directory leaves its crash images: a message and then new/ itself moved out beside the
// mail directory are in none once the move is durable (neither under its file name at the top, where images
// once put them), and new/ made again at the old path holds the name's place. Either way of committing the
// moves passes; the check fails any image that holds another entry than tmp/, new/ and cur/.
TEST(CrashExecWrites, WhatIsMovedOutOfAPoolDirectoryLeavesItsImages) {
  testing::TempDir dir;
  const std::string box = dir.file("box");
  // archive-unsynced leaves new/ unsynced after the message left it: where that waits for new/'s sync, a crash
  // can keep the message in new/, which has moved out whole by then (not in the new/ made again).
  for (const std::string how : {"at-call archive", "at-own-sync archive", "at-own-sync archive-unsynced"}) {
    const std::string metadata = how.substr(0, how.find(' ')), archive = how.substr(how.find(' ') + 1);
    const auto o =
        testing::crash_exec("rm -rf " + box + " " + box + "-first " + box + "-archive && mkdir -p " + box + "/tmp " +
                                box + "/new " + box + "/cur",
                            testing::python_check(kMaildir + " check {} archive 3"), dir.file(metadata + "-" + archive),
                            {"--pool", box, "--granularity", "line", "--budget", "60", "--metadata", metadata},
                            {"python3", kMaildir, "deliver", box, "3", "sync-both", archive});
    expect_passed(o, how, 40);
  }
}

// Messages delivered by a link to new/ and an unlink from tmp/ stay in new/: the unlink takes the tmp/ name
// only. Without --setup, the next domain's run starts without the messages the first delivered (a link to a
// name still there would fail).
TEST(CrashExecWrites, AMessageDeliveredByALinkStaysInNew) {
  testing::TempDir dir;
  const std::string box = dir.file("box");
  for (const char* metadata : {"at-call", "at-own-sync"}) {
    const auto o =
        testing::crash_exec("rm -rf " + box + " && mkdir -p " + box + "/tmp " + box + "/new " + box + "/cur",
                            testing::python_check(kMaildir + " check {}"), dir.file(std::string("box-") + metadata),
                            {"--pool", box, "--granularity", "line", "--budget", "60", "--metadata", metadata},
                            {"python3", kMaildir, "deliver", box, "3", "sync-both", "by-link"});
    expect_passed(o, metadata, 40);
  }
  std::filesystem::remove_all(box);
  for (const char* sub : {"/tmp", "/new", "/cur"}) std::filesystem::create_directories(box + sub);
  const auto domains =
      testing::crash_exec("", testing::python_check(kMaildir + " check {}"), dir.file("box-domains"),
                          {"--pool", box, "--granularity", "line", "--budget", "60", "--domain", "adr,eadr"},
                          {"python3", kMaildir, "deliver", box, "3", "sync-both", "by-link"});
  EXPECT_EQ(domains.exit_code, 0) << domains.err;
  EXPECT_NE(domains.err.find("removed " + box + "/new/msg-1, which the first traced run created"), std::string::npos)
      << domains.err;
}

// A file made with O_TMPFILE is in the crash images only once linkat names it (by AT_EMPTY_PATH, or by
// /proc/self/fd/N followed), and one that no link names, or that was unlinked while open, is in none. Where a
// change waits for a sync of what it changed, the record's length waits for its own fsync and its name for
// the directory's; without --setup, the next domain's run starts without the records the first named.
TEST(CrashExecWrites, AFileMadeWithoutANameIsThereOnlyOnceALinkNamesIt) {
  testing::TempDir dir;
  const std::string records = dir.file("records");
  auto run = [&](const std::string& metadata, const std::string& how) {
    return testing::crash_exec("rm -rf " + records + " && mkdir " + records,
                               testing::python_check(kUnnamedRecords + " check {}"), dir.file(metadata + how),
                               {"--pool", records, "--granularity", "line", "--budget", "60", "--metadata", metadata},
                               {"python3", kUnnamedRecords, "run", records, "3", how});
  };
  // AT_EMPTY_PATH wants CAP_DAC_READ_SEARCH before Linux 6.10: the /proc way is tested everywhere.
  std::vector<std::string> ways = {"proc"};
  platform::ProcessSpec probe;
  probe.argv = {"python3", kUnnamedRecords, "can-name-by-fd", dir.path()};
  if (const auto by_fd = platform::run_process(probe); by_fd.ok() && by_fd->ok()) ways.push_back("empty-path");
  else std::cerr << "linkat(AT_EMPTY_PATH) is refused to this process: only /proc/self/fd/N is tested\n";
  for (const std::string& how : ways)
    for (const char* metadata : {"at-call", "at-own-sync"}) {
      const auto o = run(metadata, how);
      expect_passed(o, std::string(metadata) + " " + how, 30);
    }
  const auto data = run("at-call", "unsynced-data");
  expect_failed_saying(data, "record-1 is not whole");
  const auto entry = run("at-own-sync", "unsynced-dir");
  expect_failed_saying(entry, "record-1 is not there, but its operation had returned");
  std::filesystem::remove_all(records);
  std::filesystem::create_directories(records);
  const auto domains =
      testing::crash_exec("", testing::python_check(kUnnamedRecords + " check {}"), dir.file("domains"),
                          {"--pool", records, "--granularity", "line", "--budget", "30", "--domain", "adr,eadr"},
                          {"python3", kUnnamedRecords, "run", records, "3"});
  EXPECT_EQ(domains.exit_code, 0) << domains.err;
  EXPECT_NE(domains.err.find("removed " + records + "/record-1, which the first traced run created"), std::string::npos)
      << domains.err;
}

// A file written outside the --pool directory and renamed or linked into it is there from that call on, with
// what it held then (untraced writes, taken as durable), and what the program writes to it after is traced,
// also through a descriptor opened by its name outside. Its name waits for the directory's sync where
// --metadata says so; one renamed over a --pool file replaces it in one change. Without --setup, the next
// domain's run starts without the records the first brought in, and with those it moved in from outside
// back there.
TEST(CrashExecWrites, AFileMovedInFromOutsideIsThereFromItsMove) {
  testing::TempDir dir;
  const std::string records = dir.file("records"), outside = dir.file("outside");
  const std::string fresh = "rm -rf " + records + " " + outside + " && mkdir " + records + " " + outside;
  auto run = [&](const std::string& metadata, const std::string& how) {
    const bool over = how == "over";
    return testing::crash_exec(fresh + (over ? " && python3 " + kArrivedRecords + " init " + records : ""),
                               testing::python_check(kArrivedRecords + " check {}" + (over ? " over" : "")),
                               dir.file(metadata + how),
                               {"--pool", records, "--granularity", "line", "--budget", "40", "--metadata", metadata},
                               {"python3", kArrivedRecords, "run", records, outside, "3", how});
  };
  for (const char* how : {"rename", "link"})
    for (const char* metadata : {"at-call", "at-own-sync"}) {
      const auto o = run(metadata, how);
      expect_passed(o, std::string(metadata) + " " + how, 30);
      EXPECT_NE(o.err.find("/record-1 came into the --pool files from outside them"), std::string::npos) << o.err;
    }
  const auto unsynced = run("at-own-sync", "unsynced-dir");
  expect_failed_saying(unsynced, "record-1 is not there, but its operation had returned");
  const auto over = run("at-sync", "over");
  EXPECT_EQ(over.exit_code, 0) << over.err;
  EXPECT_GT(over.metric("line", "states_checked"), 4u) << over.err;
  std::filesystem::remove_all(records);
  std::filesystem::remove_all(outside);
  std::filesystem::create_directories(records);
  std::filesystem::create_directories(outside);
  const auto domains =
      testing::crash_exec("", testing::python_check(kArrivedRecords + " check {}"), dir.file("domains"),
                          {"--pool", records, "--granularity", "line", "--budget", "20", "--domain", "adr,eadr"},
                          {"python3", kArrivedRecords, "run", records, outside, "3", "link"});
  EXPECT_EQ(domains.exit_code, 0) << domains.err;
  EXPECT_NE(domains.err.find("removed " + records + "/record-1, which the first traced run created"), std::string::npos)
      << domains.err;
  // One that was there before the run goes back where it came from.
  std::filesystem::remove_all(records);
  std::filesystem::create_directories(records);
  platform::ProcessSpec prepare;
  prepare.argv = {"python3", kArrivedRecords, "prepare", outside, "3"};
  const auto prepared_files = platform::run_process(prepare);
  ASSERT_TRUE(prepared_files.ok() && prepared_files->ok());
  const auto prepared =
      testing::crash_exec("", testing::python_check(kArrivedRecords + " check {}"), dir.file("prepared"),
                          {"--pool", records, "--granularity", "line", "--budget", "20", "--domain", "adr,eadr"},
                          {"python3", kArrivedRecords, "run", records, outside, "3", "prepared"});
  EXPECT_EQ(prepared.exit_code, 0) << prepared.err;
  EXPECT_NE(prepared.err.find("moved " + records + "/record-1 back to " + outside + "/tmp-1"), std::string::npos)
      << prepared.err;
}

// A sync of a file that is none of the --pool files (a journal kept elsewhere) is a crash point where changes
// of the file system wait for a sync: under at-sync, as a journaling file system commits them with it, the
// renames made before it are durable; syncing nothing loses them; POSIX (at-own-sync) promises them only at
// a sync of their directory.
TEST(CrashExecWrites, AnotherFilesSyncCommitsTheRunsRenamesWhereTheyWait) {
  testing::TempDir dir;
  const std::string records = dir.file("records"), outside = dir.file("outside");
  auto run = [&](const std::string& metadata, const std::string& how) {
    return testing::crash_exec("rm -rf " + records + " " + outside + " && mkdir " + records + " " + outside,
                               testing::python_check(kSyncedElsewhere + " check {}"), dir.file(metadata + how),
                               {"--pool", records, "--granularity", "line", "--budget", "60", "--metadata", metadata},
                               {"python3", kSyncedElsewhere, "run", records, outside, "3", how});
  };
  for (const char* metadata : {"at-call", "at-sync"}) {
    const auto o = run(metadata, "journal-synced");
    expect_passed(o, metadata, 40);
  }
  const auto unsynced = run("at-sync", "nothing-synced");
  expect_failed_saying(unsynced, "record-1 is not there, but its operation had returned");
  const auto posix = run("at-own-sync", "journal-synced");
  expect_failed_saying(posix, "another file's sync");
}

// A file linked (link, linkat) is in the crash images under each name a crash leaves it, as one file: tables
// kept under a second name in snap/ stay there once their first name is taken away. Where a change waits for
// a sync of what it changed, a link is an entry of its directory: snap/ left unsynced loses tables that had
// returned, which the journal's commit (at-sync) keeps.
TEST(CrashExecWrites, ALinkedFileIsInItsImagesUnderEachName) {
  testing::TempDir dir;
  const std::string tables = dir.file("tables");
  auto snapshot = [&](const std::string& metadata, const std::string& how) {
    return testing::crash_exec("rm -rf " + tables + " && mkdir " + tables,
                               testing::python_check(kHardLinks + " check {}"), dir.file("tables-" + metadata + how),
                               {"--pool", tables, "--granularity", "line", "--budget", "60", "--metadata", metadata},
                               {"python3", kHardLinks, "run", tables, "3", how});
  };
  for (const char* metadata : {"at-call", "at-own-sync"}) {
    const auto o = snapshot(metadata, "");
    expect_passed(o, metadata, 40);
  }
  const auto unsynced = snapshot("at-own-sync", "unsynced-snap");
  expect_failed_saying(unsynced, "snap/table-1 is not there, but its operation had returned");
  EXPECT_EQ(snapshot("at-sync", "unsynced-snap").exit_code, 0);
}

// renameat2's RENAME_EXCHANGE swaps two files in one change: a state kept as current/ and spare/ versions,
// each new version written over the spare and swapped in, leaves the version before it under the spare's
// name in every image (taken as gone, the file swapped out was missing there: "spare is not there").
TEST(CrashExecWrites, AnExchangeSwapsTwoFilesInOneChange) {
  testing::TempDir dir;
  const std::string state = dir.file("state");
  for (const char* metadata : {"at-call", "at-sync", "at-own-sync"}) {
    const auto o =
        testing::crash_exec("rm -rf " + state + " && mkdir " + state + " && python3 " + kExchanged + " init " + state,
                            testing::python_check(kExchanged + " check {}"), dir.file(metadata),
                            {"--pool", state, "--granularity", "line", "--budget", "80", "--metadata", metadata},
                            {"python3", kExchanged, "run", state, "3"});
    expect_passed(o, metadata, 10);
  }
}

// An undo journal that commits by cutting itself to nothing (ftruncate, truncate, an open with O_TRUNC): a crash
// after the cut finds no journal to roll back, so every update that returned survives (the check requires
// it); without the cut modelled, the journal's old content would roll back committed updates. Cut before
// the new version is synced, a crash can leave that version torn with nothing to roll it back. A cut never
// synced is durable where the file system commits it at once; where it waits for a sync, a crash can undo
// it and find the journal's old content, which rolls back an update that returned.
TEST(CrashExecWrites, AJournalCutToCommitLeavesNothingToRollBack) {
  testing::TempDir dir;
  const std::string db = dir.file("db");
  auto exec = [&](const std::string& how, const std::string& metadata = "at-call") {
    return testing::crash_exec(
        "rm -f " + db + " " + db + "-journal && python3 " + kTruncatedJournal + " init " + db,
        testing::python_check(kTruncatedJournal + " check {}"), dir.file(how + metadata),
        {"--pool", db, "--pool", db + "-journal", "--granularity", "line", "--budget", "40", "--metadata", metadata},
        {"python3", kTruncatedJournal, "update", db, "3", how});
  };
  for (const char* how : {"ftruncate", "open-trunc", "truncate-path"}) {
    const auto good = exec(how);
    EXPECT_EQ(good.exit_code, 0) << how << ": " << good.err;
    EXPECT_EQ(good.metric("line", "crash_points"), 10u) << how << ": " << good.err;
    EXPECT_GT(good.metric("line", "states_checked"), 20u) << how;
  }
  const auto bug = exec("truncate-first");
  expect_fails_at(bug, "fsync", "no whole version");

  const auto durable_at_once = exec("unsynced-cut");
  EXPECT_EQ(durable_at_once.exit_code, 0) << durable_at_once.err;
  const auto undone = exec("unsynced-cut", "at-sync");
  EXPECT_EQ(undone.exit_code, 1) << undone.err;
  const nlohmann::json* run = undone.run("line");
  ASSERT_NE(run, nullptr) << undone.err;
  EXPECT_FALSE((*run)["failures"].empty());
  for (const auto& f : (*run)["failures"]) {
    EXPECT_NE(f["metadata_lost"].get<std::string>().find("cut to 0 bytes undone (what it cut is back)"),
              std::string::npos)
        << f.dump();
  }
  EXPECT_NE(undone.err.find("updates had returned"), std::string::npos) << undone.err;
}

// A file cut short while the program maps it further: the runtime stops reading the mapping's pages past the
// new end (a read there is a SIGBUS, in every way of finding stores), notes it, and the crash images after
// the cut are as long as the file, zero past what the program kept.
TEST(CrashExecWrites, AFileCutWhileMappedIsTracedUpToItsNewEnd) {
  testing::TempDir dir;
  const std::string file = dir.file("cut");
  for (const char* stores : {"signals", "compare"}) {
    const auto o = testing::crash_exec("rm -f " + file, testing::python_check(kCutMapped + " check {}"),
                                       dir.file(stores), {"--pool", file, "--stores", stores, "--granularity", "line"},
                                       {"python3", kCutMapped, "run", file});
    EXPECT_EQ(o.exit_code, 0) << stores << ": " << o.err;
    EXPECT_EQ(o.metric("line", "crash_points"), 3u) << stores << ": " << o.err;
    EXPECT_NE(o.err.find("while it mapped it further"), std::string::npos) << stores << ": " << o.err;
  }
}

// A private, writable mapping of the pool never reaches the file: exec mode has nothing to test, and says why.
TEST(CrashExecWrites, APrivateMappingOfThePoolIsToldApart) {
  testing::TempDir dir;
  const std::string file = dir.file("private");
  const std::string program =
      "import mmap, os\n"
      "fd = os.open('" +
      file +
      "', os.O_RDWR | os.O_CREAT, 0o600)\n"
      "os.ftruncate(fd, 4096)\n"
      "m = mmap.mmap(fd, 4096, access=mmap.ACCESS_COPY)\n"
      "m[0:8] = b'12345678'\n";
  const auto o =
      testing::crash_exec("rm -f " + file, "true {}", dir.file("out"), {"--pool", file}, {"python3", "-c", program});
  expect_failed_saying(o, "the program mapped no persistent memory");
  EXPECT_NE(o.err.find(file + " is mapped private and writable"), std::string::npos) << o.err;
}

// A log written through C's stdio: the C library writes a stream's buffer with its own write(2), which the
// runtime sees from outside the stream's calls. Written with fprintf, fwrite, the inline putc, a record longer
// than the buffer, or over a placeholder after an fseek, the synced log passes, each of its 6 records a
// write, each fsync a write-back and a crash point, and the trailer the C library writes at the exit (or
// fcloseall, where the program calls it) a 13th write-back; written with write(2) itself, it gives the same
// states. Flushed but never synced, records that had returned are lost. Deleted with remove(3) at the end,
// the log is gone from the exit's crash image (the check then finds no record). Written and synced by system
// calls the program makes by their numbers (syscall(SYS_write), syscall(SYS_fsync)), or with dprintf, it gives
// the same states as with write(2), with no line changed unseen. Written anew through freopen(LOG, "w"), a crash
// before the new copy is synced finds the log cut.
TEST(CrashExecWrites, AStdioLogIsTracedThroughItsStreamsCalls) {
  if (!platform::find_program("cc")) GTEST_SKIP() << "no C compiler here";
  testing::TempDir dir;
  const std::string program = dir.file("stdio-log"), log = dir.file("log");
  platform::ProcessSpec cc;
  cc.argv = {"cc", "-O2", "-g", "-I", std::string(PMLAB_SOURCE_DIR) + "/include", "-o", program, kStdioLog};
  cc.timeout_s = 120;
  const auto built = platform::run_process(cc);
  ASSERT_TRUE(built.ok() && built->ok()) << (built.ok() ? built->err : "cc did not start");
  auto exec = [&](const std::string& how) {
    return testing::crash_exec("rm -f " + log, program + " check {}", dir.file(how),
                               {"--pool", log, "--granularity", "line", "--budget", "60"},
                               {program, "append", log, "6", how});
  };
  std::map<std::string, uint64_t> states;
  for (const char* how : {"fprintf", "fwrite", "putc", "large", "seek", "write", "dprintf", "syscall", "fcloseall"}) {
    const auto good = exec(how);
    EXPECT_EQ(good.exit_code, 0) << how << ": " << good.err;
    EXPECT_EQ(good.metric("line", "crash_points"), 7u) << how << ": " << good.err;
    // A record longer than the buffer reaches the file in two writes, fwrite's and fflush's; a rewritten one
    // too, the placeholder's (flushed by fseek) and the record's.
    const bool twice = std::string(how) == "large" || std::string(how) == "seek";
    EXPECT_NE(good.err.find(twice ? "6 fences (6 fsync), 19 write-backs" : "6 fences (6 fsync), 13 write-backs"),
              std::string::npos)
        << good.err;
    states[how] = good.metric("line", "states_checked");
  }
  // The same records written with write(2) itself: the same states.
  EXPECT_EQ(states["fwrite"], states["write"]);
  EXPECT_EQ(states["fprintf"], states["write"]);
  EXPECT_EQ(states["dprintf"], states["write"]);
  EXPECT_EQ(states["syscall"], states["write"]);
  const auto own_call = exec("syscall");
  ASSERT_NE(own_call.run("line"), nullptr) << own_call.err;
  EXPECT_EQ((*own_call.run("line"))["trace"]["notes"].dump().find("changed in ways"), std::string::npos)
      << own_call.err;
  const auto unsynced = exec("unsynced");
  expect_failed_saying(unsynced, "appends had returned");
  // Written anew after every append returned (freopen "w" cuts it): a crash before the new copy is synced
  // finds the log cut, which the cut's record shows; without it the old records would still be there.
  const auto reopened = exec("reopen");
  expect_failed_saying(reopened, "whole records, but 6 appends had returned");
  const auto removed = exec("removed");
  const nlohmann::json* run = removed.run("line");
  ASSERT_NE(run, nullptr) << removed.err;
  ASSERT_FALSE((*run)["failures"].empty()) << removed.err;
  for (const auto& f : (*run)["failures"]) {
    EXPECT_TRUE(f["at_exit"].get<bool>()) << f.dump();
    EXPECT_EQ(f["checker_output"], "0 whole records, but 6 appends had returned") << f.dump();
  }
}

// The kernel's copies into a file (copy_file_range, sendfile, splice) and fallocate's zeros are writes the
// runtime reads through its view: versions copied into slots of their own pass, a crash point per fsync
// and the exit; a file made 64 KiB long with posix_fallocate stays so; a version punched out by an update
// that returned is gone. Unsynced, updates that had returned are lost. Unseen, the copies left no trace at
// all and the punched version stayed whole (checked).
TEST(CrashExecWrites, TheKernelsCopiesAndFallocateAreTracedAsWrites) {
  testing::TempDir dir;
  const std::string db = dir.file("db");
  auto exec = [&](const std::string& how, const std::string& bug) {
    return testing::crash_exec("rm -f " + db + " " + db + ".staging && python3 " + kKernelCopies + " init " + db,
                               testing::python_check(kKernelCopies + " check {} " + how), dir.file(how + bug),
                               {"--pool", db, "--granularity", "line", "--budget", "30"},
                               {"python3", kKernelCopies, "update", db, "3", how, bug});
  };
  for (const auto& [how, crash_points] : std::vector<std::pair<std::string, uint64_t>>{
           {"copy_file_range", 4}, {"sendfile", 4}, {"splice", 4}, {"prealloc", 5}, {"punch", 7}}) {
    const auto good = exec(how, "synced");
    EXPECT_EQ(good.exit_code, 0) << how << ": " << good.err;
    EXPECT_EQ(good.metric("line", "crash_points"), crash_points) << how << ": " << good.err;
    EXPECT_EQ(good.err.find("the runtime does not see"), std::string::npos) << how << ": " << good.err;
  }
  for (const char* how : {"copy_file_range", "punch"}) {
    const auto bug = exec(how, "unsynced");
    EXPECT_EQ(bug.exit_code, 1) << how << ": " << bug.err;
    EXPECT_NE(bug.err.find("updates had returned"), std::string::npos) << how << ": " << bug.err;
  }
}

// GNU sed -i, a program nobody here wrote: it writes the edited text to a temporary file of a made-up name
// through stdio (fdopen, fwrite, fclose) and renames it over the file, syncing nothing. Its directory is the
// pool. The one crash point is the exit, and a crash there can leave the renamed file without the bytes it
// was written: neither the old text nor the new.
TEST(CrashExecWrites, SedInPlaceRenamesATemporaryFileItNeverSynced) {
  if (!platform::find_program("sed")) GTEST_SKIP() << "no sed here";
  testing::TempDir dir;
  const std::string texts = dir.file("texts"), old_text = dir.file("old"), new_text = dir.file("new");
  testing::write_all(old_text, "alpha line one\nalpha line two\n");
  testing::write_all(new_text, "beta line one\nbeta line two\n");
  const auto o =
      testing::crash_exec("rm -rf " + texts + " && mkdir " + texts + " && cp " + old_text + " " + texts,
                          "cmp -s {}/old " + old_text + " || cmp -s {}/old " + new_text, dir.file("out"),
                          {"--pool", texts, "--granularity", "line"}, {"sed", "-i", "s/alpha/beta/", texts + "/old"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.metric("line", "crash_points"), 1u) << o.err;
  const nlohmann::json* run = o.run("line");
  ASSERT_NE(run, nullptr) << o.err;
  EXPECT_EQ((*run)["trace"]["files"].size(), 2u) << "the file and sed's temporary one";
  ASSERT_FALSE((*run)["failures"].empty());
  for (const auto& f : (*run)["failures"]) EXPECT_TRUE(f["at_exit"].get<bool>()) << f.dump();
}

}  // namespace
}  // namespace pmlab::crash::exec
