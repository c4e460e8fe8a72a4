// Storage engines nobody here wrote, crash-tested as their distribution ships them (subjects/lmdb,
// subjects/sqlite, subjects/leveldb, subjects/tdb, and git's object store).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "../../support/crash_exec.hpp"
#include "../../support/temp_dir.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

const std::string kLmdbKv = std::string(PMLAB_SUBJECTS_DIR) + "/lmdb-kv";
const std::string kSqliteKv = std::string(PMLAB_SUBJECTS_DIR) + "/sqlite-kv";
const std::string kLevelDbKv = std::string(PMLAB_SUBJECTS_DIR) + "/leveldb-kv";
const std::string kTdbKv = std::string(PMLAB_SUBJECTS_DIR) + "/tdb-kv";
const std::string kGitCommit = std::string(PMLAB_SOURCE_DIR) + "/tests/crash/exec/programs/git_commit.sh";

constexpr uint64_t kPageBytes = 4096;
constexpr uint64_t kMetaPages = 2;             // LMDB's two meta pages lead its file
constexpr uint64_t kTransactionIdLine = 0x80;  // the line of a meta page holding mm_txnid (page offset 144)
constexpr uint64_t kInserts = 12;

// The offset in its file of a failure's line, "kv.mdb+0x1080".
uint64_t offset_of(const std::string& where) { return std::stoull(where.substr(where.find('+') + 1), nullptr, 16); }

platform::ProcessResult run(std::vector<std::string> argv) {
  platform::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_s = 60;
  auto r = platform::run_process(spec);
  return r.ok() ? *r : platform::ProcessResult{};
}

// A crash-tested run of lmdb-kv inserting kInserts keys, LMDB writing its pages as `writes` says.
struct LmdbRun {
  testing::ExecOutcome outcome;
  std::string env, setup;
  std::vector<std::string> options;
};
LmdbRun crash_lmdb(const testing::TempDir& dir, const std::string& writes) {
  LmdbRun r;
  r.env = dir.file("kv.mdb");
  r.setup = "rm -f " + r.env + " " + r.env + "-lock && " + kLmdbKv + " create " + r.env;
  r.options = {"--pool", r.env, "--granularity", "line", "--domain", "adr"};
  const std::string n = std::to_string(kInserts);
  r.outcome = testing::crash_exec(r.setup, kLmdbKv + " check {} " + n, dir.file(writes), r.options,
                                  {kLmdbKv, "insert", r.env, n}, {"LMDB_KV_WRITES=" + writes});
  return r;
}

// A commit is made durable in two steps, the new pages, then the meta page that points at them, written in
// place: the page's cache lines reach persistent memory in any order before the second step, and a crash
// can keep the new transaction id and root beside the entry count of the transaction before last. Every
// failure is at that second step, `call` (every second crash point), and in the meta pages' lines only.
void expect_torn_meta_pages(const testing::ExecOutcome& o, const std::string& call) {
  ASSERT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.metric("line", "crash_points"), 2 * kInserts + 1) << "two steps per commit, and the exit";
  const nlohmann::json* line = o.run("line");
  ASSERT_NE(line, nullptr);
  ASSERT_GT((*line)["failures"].size(), 0u);
  for (const auto& f : (*line)["failures"]) {
    EXPECT_EQ(f["call"], call);
    EXPECT_EQ(f["crash_point"].get<uint64_t>() % 2, 0u) << "a failure at the data pages' step: " << f.dump();
    EXPECT_NE(f["checker_output"].get<std::string>().find("the database counts"), std::string::npos) << f.dump();
    bool transaction_id = false;
    for (const auto& l : f["lines"]) {
      const uint64_t at = offset_of(l["where"].get<std::string>());
      EXPECT_LT(at, kMetaPages * kPageBytes) << "a persisted line outside the meta pages: " << f.dump();
      transaction_id |= at % kPageBytes == kTransactionIdLine;
    }
    EXPECT_TRUE(transaction_id) << "a failure without the new transaction id: " << f.dump();
  }
}

// With MDB_WRITEMAP, LMDB stores into a writable shared mapping and msyncs the new pages, then the meta page,
// whose fields it stores one by one, the transaction id last.
TEST(CrashExecEngines, LmdbsMetaPageTearsWhenItsLinesPersistApart) {
  if (!std::filesystem::exists(kLmdbKv)) GTEST_SKIP() << "subjects/lmdb not built (no liblmdb-dev)";
  testing::TempDir dir;
  const LmdbRun lmdb = crash_lmdb(dir, "map");
  expect_torn_meta_pages(lmdb.outcome, "msync");
  const std::string &env = lmdb.env, &setup = lmdb.setup, n = std::to_string(kInserts);
  const std::vector<std::string>& options = lmdb.options;
  const nlohmann::json* line = lmdb.outcome.run("line");
  ASSERT_NE(line, nullptr);
  ASSERT_GT((*line)["failures"].size(), 0u);

  // LMDB's own tools, on the image of the first failure: mdb_stat reads the meta page's entry count,
  // mdb_dump walks the tree, and they disagree.
  if (platform::find_program("mdb_stat") && platform::find_program("mdb_dump")) {
    const std::string image = dir.file("torn.mdb"), state = (*line)["failures"][0]["replay"];
    std::vector<std::string> replay = {
        PMLAB_CLI_PATH, "crash", "exec",    "--setup", setup, "--check", kLmdbKv + " check {} " + n,
        "--replay",     state,   "--image", image};
    replay.insert(replay.end(), options.begin(), options.end());
    replay.insert(replay.end(), {"--out", dir.file("replay"), "--", kLmdbKv, "insert", env, n});
    ASSERT_EQ(run(replay).exit_code, 1);
    const std::string stat = run({"mdb_stat", "-n", image}).out;
    const size_t entries_at = stat.find("Entries: ");
    ASSERT_NE(entries_at, std::string::npos) << stat;
    const uint64_t counted = std::stoull(stat.substr(entries_at + 9));
    std::istringstream dump(run({"mdb_dump", "-n", image}).out);
    uint64_t data_lines = 0;  // after HEADER=END, a key line and a value line per record, each led by a space
    for (std::string l; std::getline(dump, l);) data_lines += !l.empty() && l[0] == ' ';
    EXPECT_NE(data_lines / 2, counted) << stat;
    EXPECT_GT(data_lines / 2, 0u);
  }
}

// By default LMDB maps its file read-only and writes with pwrite(2): the new pages, then fdatasync, then the
// meta page's changed fields in one pwrite on a descriptor opened O_DSYNC. On a DAX file system the kernel
// copies that write in with non-temporal stores, which reach persistent memory in any order until the call
// syncs: the same tear as through the mapping, at the O_DSYNC write.
TEST(CrashExecEngines, LmdbsMetaPageTearsWhenItIsWrittenWithPwriteToo) {
  if (!std::filesystem::exists(kLmdbKv)) GTEST_SKIP() << "subjects/lmdb not built (no liblmdb-dev)";
  testing::TempDir dir;
  const LmdbRun lmdb = crash_lmdb(dir, "write");
  expect_torn_meta_pages(lmdb.outcome, "O_DSYNC write");
  const nlohmann::json* run = lmdb.outcome.run("line");
  ASSERT_NE(run, nullptr);
  EXPECT_EQ((*run)["trace"]["fences_by_call"]["fdatasync"], kInserts);
  EXPECT_EQ((*run)["trace"]["fences_by_call"]["O_DSYNC write"], kInserts);
  EXPECT_NE((*run)["trace"]["write_tracking"].get<std::string>().find("write(2)"), std::string::npos);
}

// sqlite-kv inserting `n` keys into kv.db in `dir`, the journal mode and sync of `env`, crash-tested at the
// budget given. The check opens `{}`, the image of the first --pool (kv.db, though the run writes its journal
// first), beside its journal's.
testing::ExecOutcome crash_sqlite(const testing::TempDir& dir, const std::string& out, uint64_t n, uint64_t budget,
                                  std::vector<std::string> env, const std::vector<std::string>& options = {}) {
  const std::string db = dir.file("kv.db");
  const std::string setup =
      "rm -f " + db + " " + db + "-wal " + db + "-shm " + db + "-journal && " + kSqliteKv + " create " + db;
  std::vector<std::string> all = {
      "--pool",   db,   "--pool", db + "-wal", "--pool", db + "-journal", "--budget", std::to_string(budget),
      "--domain", "adr"};
  all.insert(all.end(), options.begin(), options.end());
  return testing::crash_exec(setup, kSqliteKv + " check {} " + std::to_string(n), dir.file(out), all,
                             {kSqliteKv, "insert", db, std::to_string(n)}, std::move(env));
}

// A run that judged more than `states` states at line and at word granularity, none failing.
void expect_passes(const testing::ExecOutcome& o, uint64_t states) {
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const char* granularity : {"line", "word"}) {
    EXPECT_EQ(o.failures(granularity), 0u) << granularity;
    EXPECT_GT(o.metric(granularity, "states_checked"), states) << granularity;
  }
}

// SQLite's write-ahead log checksums every frame and salts it with the log's generation, so that recovery
// stops at the last whole commit: torn writes lose nothing committed. With synchronous=normal a commit is
// not synced when it returns: returned inserts are lost in a crash, and the database stays consistent, the
// trade SQLite documents.
TEST(CrashExecEngines, SqlitesWriteAheadLogSurvivesTornWrites) {
  if (!std::filesystem::exists(kSqliteKv)) GTEST_SKIP() << "subjects/sqlite not built (no libsqlite3-dev)";
  testing::TempDir dir;
  const auto full = crash_sqlite(dir, "full", 20, 400, {"SQLITE_KV_JOURNAL=wal", "SQLITE_KV_SYNC=full"});
  expect_passes(full, 300);
  EXPECT_GT(full.metric("line", "crash_points"), 20u) << "a sync at least per commit";
  const auto normal = crash_sqlite(dir, "normal", 20, 400, {"SQLITE_KV_JOURNAL=wal", "SQLITE_KV_SYNC=normal"});
  EXPECT_EQ(normal.exit_code, 1) << normal.err;
  const nlohmann::json* run = normal.run("line");
  ASSERT_NE(run, nullptr);
  ASSERT_GT((*run)["failures"].size(), 0u);
  for (const auto& f : (*run)["failures"])
    EXPECT_NE(f["checker_output"].get<std::string>().find("inserts had returned"), std::string::npos) << f.dump();
  const auto consistent = crash_sqlite(
      dir, "consistent", 20, 400, {"SQLITE_KV_JOURNAL=wal", "SQLITE_KV_SYNC=normal", "SQLITE_KV_CHECK_RETURNED=0"});
  EXPECT_EQ(consistent.exit_code, 0) << consistent.err;
}

// SQLite's own default journal mode commits by deleting the rollback journal and makes a new one for the next
// transaction: a crash leaves the journal the path then leads to, or none once it is deleted.
// journal_mode=truncate commits by cutting the journal to nothing (ftruncate): a crash after the cut finds no
// hot journal. Judged so (a file's metadata taken as durable when its call returns), nothing fails; judged
// with every journal the run made left in place, or left whole, committed transactions would be rolled back.
// A sync after the cut or the deletion is no empty fence.
TEST(CrashExecEngines, SqlitesJournalIsGoneOrEmptyAfterItsCommit) {
  if (!std::filesystem::exists(kSqliteKv)) GTEST_SKIP() << "subjects/sqlite not built (no libsqlite3-dev)";
  testing::TempDir dir;
  // Each journal mode, and the files its run has: the database and a journal per transaction, or one journal
  // cut and written again.
  for (const auto& [mode, files] : {std::pair{"delete", 21u}, std::pair{"truncate", 2u}}) {
    const auto o = crash_sqlite(dir, mode, 20, 400, {std::string("SQLITE_KV_JOURNAL=") + mode, "SQLITE_KV_SYNC=full"});
    expect_passes(o, 300);
    const nlohmann::json* run = o.run("line");
    ASSERT_NE(run, nullptr);
    EXPECT_EQ((*run)["trace"]["files"].size(), files) << mode;
    EXPECT_TRUE((*run)["findings"].empty()) << mode << ": " << (*run)["findings"].dump();
  }
}

// With --metadata at-sync a crash may lose what the file system changed since the last sync. In its default
// journal mode SQLite commits by deleting the journal and, with synchronous=full, syncs nothing after: a
// crash then can keep the journal, whose rollback loses the transaction that had returned. With
// synchronous=extra SQLite syncs the journal's directory after deleting it, its documented remedy, and
// nothing is lost.
TEST(CrashExecEngines, SqlitesDeletedJournalNeedsTheDirectorySyncedWhenDeletionsWait) {
  if (!std::filesystem::exists(kSqliteKv)) GTEST_SKIP() << "subjects/sqlite not built (no libsqlite3-dev)";
  testing::TempDir dir;
  const std::vector<std::string> at_sync = {"--metadata", "at-sync", "--granularity", "line"};
  const auto full = crash_sqlite(dir, "full", 12, 300, {"SQLITE_KV_JOURNAL=delete", "SQLITE_KV_SYNC=full"}, at_sync);
  EXPECT_EQ(full.exit_code, 1) << full.err;
  const nlohmann::json* run = full.run("line");
  ASSERT_NE(run, nullptr);
  ASSERT_GT((*run)["failures"].size(), 0u);
  for (const auto& f : (*run)["failures"]) {
    EXPECT_NE(f["checker_output"].get<std::string>().find("inserts had returned"), std::string::npos) << f.dump();
    const std::string lost = f["metadata_lost"];
    EXPECT_NE(lost.find(") still there"), std::string::npos) << f.dump();  // kv.db-journal (file N), deleted
    EXPECT_EQ(lost.find("kv.db-journal (file "), lost.find(": ") + 2) << f.dump();
  }
  const auto extra = crash_sqlite(dir, "extra", 12, 300, {"SQLITE_KV_JOURNAL=delete", "SQLITE_KV_SYNC=extra"}, at_sync);
  EXPECT_EQ(extra.exit_code, 0) << extra.err;
  EXPECT_GT(extra.metric("line", "states_checked"), 200u);
  const nlohmann::json* extra_run = extra.run("line");
  ASSERT_NE(extra_run, nullptr);
  EXPECT_EQ((*extra_run)["trace"]["fences_by_call"]["directory fsync"], 24u)
      << "one as each journal is made and deleted";
}

// In journal_mode=persist a transaction commits by zeroing its rollback journal's 28-byte header in place.
// At word granularity that write can persist in part: the header's magic number without its zeroed record
// count, a hot journal of no records whose database size from before the transaction truncates a database
// the transaction grew, and SQLite finds it malformed. A whole line persisting at once never does.
TEST(CrashExecEngines, SqlitesPersistedJournalCommitTearsAtWordGranularity) {
  if (!std::filesystem::exists(kSqliteKv)) GTEST_SKIP() << "subjects/sqlite not built (no libsqlite3-dev)";
  testing::TempDir dir;
  const auto o = crash_sqlite(dir, "persist", 20, 1000, {"SQLITE_KV_JOURNAL=persist", "SQLITE_KV_SYNC=full"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.failures("line"), 0u);
  const nlohmann::json* word = o.run("word");
  ASSERT_NE(word, nullptr);
  ASSERT_GT((*word)["failures"].size(), 0u);
  for (const auto& f : (*word)["failures"]) {
    EXPECT_EQ(f["call"], "fdatasync");
    EXPECT_NE(f["checker_output"].get<std::string>().find("malformed"), std::string::npos) << f.dump();
    ASSERT_EQ(f["lines"].size(), 1u) << f.dump();
    EXPECT_EQ(f["lines"][0]["where"], "kv.db-journal+0x0") << f.dump();
  }

  // SQLite's own shell on the first failure's image agrees: with its journal beside it the database is
  // malformed, without it whole.
  if (!platform::find_program("sqlite3")) return;
  const std::string db = dir.file("kv.db"), state = (*word)["failures"][0]["replay"];
  std::vector<std::string> replay = {PMLAB_CLI_PATH,
                                     "crash",
                                     "exec",
                                     "--setup",
                                     "rm -f " + db + "*",
                                     "--check",
                                     "true {}",
                                     "--pool",
                                     db,
                                     "--pool",
                                     db + "-wal",
                                     "--pool",
                                     db + "-journal",
                                     "--domain",
                                     "adr",
                                     "--granularity",
                                     "word",
                                     "--trace",
                                     (*word)["trace"]["path"],
                                     "--replay",
                                     state,
                                     "--image",
                                     dir.file("torn"),
                                     "--out",
                                     dir.file("replay"),
                                     "--",
                                     kSqliteKv,
                                     "insert",
                                     db,
                                     "20"};
  ASSERT_EQ(run(replay).exit_code, 0);
  const std::string torn = dir.file("torn-db");
  std::filesystem::create_directory(torn);
  // --image writes the database's image, the one {} names, to FILE, and each other file's to FILE.N.
  const auto& files = (*word)["trace"]["files"];
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string name = std::filesystem::path(files[i].get<std::string>()).filename().string();
    const std::string image = dir.file("torn") + (files[i] == db ? "" : "." + std::to_string(i));
    std::filesystem::copy_file(image, torn + "/" + name);
  }
  const auto with_journal = run({"sqlite3", torn + "/kv.db", "PRAGMA integrity_check;"});
  EXPECT_NE(with_journal.out + with_journal.err, "ok\n");
  EXPECT_NE((with_journal.out + with_journal.err).find("malformed"), std::string::npos) << with_journal.err;
  const std::string whole = dir.file("whole-db");
  std::filesystem::create_directory(whole);
  std::filesystem::copy_file(dir.file("torn"), whole + "/kv.db");
  EXPECT_EQ(run({"sqlite3", whole + "/kv.db", "PRAGMA integrity_check;"}).out, "ok\n");
}

// leveldb-kv inserting 40 keys into a database in `dir`, crash-tested at line granularity under ADR with
// `options` besides. LevelDB names its files as it goes, so its directory is the pool and {} the crash image of
// it.
testing::ExecOutcome crash_leveldb(const testing::TempDir& dir, std::vector<std::string> options) {
  const std::string db = dir.file("db");
  options.insert(options.begin(), {"--pool", db, "--granularity", "line", "--domain", "adr"});
  return testing::crash_exec("rm -rf " + db + " && " + kLevelDbKv + " create " + db, kLevelDbKv + " check {} 40",
                             dir.file("out"), options, {kLevelDbKv, "insert", db, "40"});
}

// Each synced write appends a checksummed record to the log; a log record torn by a crash is skipped at
// recovery, and no such state fails. 40 inserts of 4 KiB fill the memtable twice: a thread of LevelDB's
// flushes it into a table and appends a record to the manifest, synced only after the write extends the file.
// A crash that keeps the record's first line, its checksum and length, and not the rest leaves a record
// LevelDB's recovery reads as corruption, and the database does not open. Every failure is that one.
TEST(CrashExecEngines, LevelDbsManifestRecordCanTearWhereItsLogRecordsCannot) {
  if (!std::filesystem::exists(kLevelDbKv)) GTEST_SKIP() << "subjects/leveldb not built (no libleveldb-dev)";
  testing::TempDir dir;
  const auto o = crash_leveldb(dir, {});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const nlohmann::json* run = o.run("line");
  ASSERT_NE(run, nullptr) << o.err;
  EXPECT_EQ((*run)["trace"]["threads"], 2) << "the writer and LevelDB's compaction thread";
  EXPECT_NE((*run)["trace"]["files"].dump().find(".ldb"), std::string::npos) << "a table flushed";
  EXPECT_GT(o.metric("line", "crash_points"), 40u) << "a sync at least per write";
  ASSERT_GT((*run)["failures"].size(), 0u);
  for (const auto& f : (*run)["failures"]) {
    EXPECT_NE(f["checker_output"].get<std::string>().find("Corruption: checksum mismatch"), std::string::npos)
        << f.dump();
    EXPECT_NE(f["persisted"].get<std::string>().find("MANIFEST-"), std::string::npos) << f.dump();
  }
}

// LevelDB syncs its directory only when it syncs a manifest, so the write-ahead log it makes as it opens is
// synced (fdatasync) write by write but its name is not. Where a new file's name is durable only at its
// directory's sync, as POSIX promises (--metadata at-own-sync), a crash loses the log and with it inserts that
// had returned; ext4 and XFS commit the name with the log's first sync (at-sync), where only the torn
// manifest record above fails. That record tears here too, where the budget reaches its state (which depends
// on how the compaction thread's writes fell among the writer's in the traced run).
TEST(CrashExecEngines, LevelDbsNewLogIsNamedDurablyOnlyWhenItsDirectoryIsSynced) {
  if (!std::filesystem::exists(kLevelDbKv)) GTEST_SKIP() << "subjects/leveldb not built (no libleveldb-dev)";
  testing::TempDir dir;
  const auto o = crash_leveldb(dir, {"--budget", "300", "--metadata", "at-own-sync"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const nlohmann::json* run = o.run("line");
  ASSERT_NE(run, nullptr) << o.err;
  EXPECT_GT(o.failures("line"), 40u) << o.err;
  EXPECT_GT((*run)["trace"]["fences_by_call"]["directory fsync"], 0u) << "as it syncs a manifest";
  for (const auto& f : (*run)["failures"]) {
    if (f["checker_output"].get<std::string>().find("Corruption: checksum mismatch") != std::string::npos &&
        f["persisted"].get<std::string>().find("MANIFEST-") != std::string::npos)
      continue;  // the torn manifest record
    EXPECT_NE(f["checker_output"].get<std::string>().find("inserts had returned"), std::string::npos) << f.dump();
    EXPECT_NE(f["metadata_lost"].get<std::string>().find(".log not there"), std::string::npos) << f.dump();
  }
}

// TDB maps its file ahead of growing it and writes it through the mapping and with pwrite; a transaction
// commits through an undo record, synced (msync and fdatasync) before and after the data. Every state passes,
// in every way of finding stores: comparing every page reads the mapping only as far as the file reaches (past
// it, a read is a SIGBUS, which hung the runtime before). Opened TDB_NOSYNC, nothing is synced and a crash at
// the exit leaves a database TDB finds corrupt.
TEST(CrashExecEngines, TdbsTransactionsHoldUnlessTheyCommitUnsynced) {
  if (!std::filesystem::exists(kTdbKv)) GTEST_SKIP() << "subjects/tdb not built (no libtdb-dev)";
  testing::TempDir dir;
  const std::string db = dir.file("kv.tdb");
  auto exec = [&](const std::string& out, const std::string& stores, const std::string& no_sync) {
    return testing::crash_exec("rm -f " + db + " && " + kTdbKv + " create " + db, kTdbKv + " check {} 12",
                               dir.file(out), {"--pool", db, "--budget", "300", "--stores", stores},
                               {kTdbKv, "insert", db, "12"}, {"TDB_KV_NOSYNC=" + no_sync});
  };
  for (const char* stores : {"signals", "compare"}) {
    const auto good = exec(stores, stores, "0");
    EXPECT_EQ(good.exit_code, 0) << stores << ": " << good.err;
    EXPECT_EQ(good.metric("line", "crash_points"), 12u * 8 + 1) << "4 msyncs and 4 fdatasyncs a commit";
    EXPECT_GT(good.metric("word", "states_checked"), 200u) << stores;
  }
  const auto unsynced = exec("unsynced", "signals", "1");
  EXPECT_EQ(unsynced.exit_code, 1) << unsynced.err;
  EXPECT_EQ(unsynced.metric("line", "crash_points"), 1u);
  EXPECT_NE(unsynced.err.find("a traversal fails"), std::string::npos) << unsynced.err;
}

// TDB's first commit grows the file for its undo record and writes where that record lies into the header,
// in place, before it syncs. Where the file's new length is durable only at the sync (--metadata at-sync, as
// ext4 and XFS commit it), a crash can keep the header's line and lose the growth: the header names an undo
// record past the file's end and TDB will not open the database. Every failure is that one.
TEST(CrashExecEngines, TdbsFirstCommitNamesItsUndoRecordBeforeTheFilesGrowthIsDurable) {
  if (!std::filesystem::exists(kTdbKv)) GTEST_SKIP() << "subjects/tdb not built (no libtdb-dev)";
  testing::TempDir dir;
  const std::string db = dir.file("kv.tdb");
  const auto o =
      testing::crash_exec("rm -f " + db + " && " + kTdbKv + " create " + db, kTdbKv + " check {} 12", dir.file("out"),
                          {"--pool", db, "--budget", "600", "--granularity", "line", "--metadata", "at-sync"},
                          {kTdbKv, "insert", db, "12"}, {"TDB_KV_NOSYNC=0"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const nlohmann::json* run = o.run("line");
  ASSERT_NE(run, nullptr) << o.err;
  ASSERT_GT((*run)["failures"].size(), 0u);
  for (const auto& f : (*run)["failures"]) {
    EXPECT_EQ(f["crash_point"], 1) << f.dump();
    EXPECT_NE(f["checker_output"].get<std::string>().find("cannot open"), std::string::npos) << f.dump();
    EXPECT_NE(f["persisted"].get<std::string>().find("kv.tdb+0x0 "), std::string::npos) << f.dump();
    EXPECT_NE(f["metadata_lost"].get<std::string>().find("kv.tdb"), std::string::npos) << f.dump();
  }
}

// git, as Debian ships it, with core.fsync=all: each new object is written to a temporary file, fsynced and
// linked to its name (the temporary name unlinked); the branch's lock file is fsynced and renamed over the
// branch, and nothing is synced after that. Every crash state passes `git fsck`, in every model (the links
// followed: without them each new object would be gone). A commit that returned is there at git's exit where
// the file system commits each change at its call, and may be lost where changes wait for a sync, since the
// branch's rename is never synced: every failure is at the exit, HEAD still the commit before.
TEST(CrashExecEngines, GitsCommitIsConsistentEverywhereAndLostAfterItReturnsWhereRenamesWait) {
  if (!platform::find_program("git")) GTEST_SKIP() << "no git here";
  testing::TempDir dir;
  const std::string repo = dir.file("repo");
  auto exec = [&](const std::string& metadata, const std::string& check, const std::string& out) {
    return testing::crash_exec(
        kGitCommit + " setup " + repo, check, dir.file(out),
        {"--pool", repo + "/.git", "--granularity", "line", "--budget", "300", "--metadata", metadata},
        {"git", "-C", repo, "-c", "core.fsync=all", "-c", "core.fsyncMethod=fsync", "commit", "-q", "-a", "-m",
         "second"},
        {"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"});
  };
  const auto at_call = exec("at-call", kGitCommit + " check {}", "at-call");
  EXPECT_EQ(at_call.exit_code, 0) << at_call.err;
  EXPECT_GT(at_call.metric("line", "states_checked"), 100u) << at_call.err;
  for (const std::string metadata : {"at-sync", "at-own-sync"}) {
    const auto lost = exec(metadata, kGitCommit + " check {}", metadata);
    EXPECT_EQ(lost.exit_code, 1) << metadata << ": " << lost.err;
    const nlohmann::json* run = lost.run("line");
    ASSERT_NE(run, nullptr) << lost.err;
    EXPECT_FALSE((*run)["failures"].empty());
    for (const auto& f : (*run)["failures"]) {
      EXPECT_TRUE(f["at_exit"].get<bool>()) << f.dump();
      EXPECT_NE(f["checker_output"].get<std::string>().find("HEAD is the commit \"first\" after git commit returned"),
                std::string::npos)
          << f.dump();
    }
    const auto consistent = exec(metadata, "env PMLAB_CRASH_AT_EXIT=0 " + kGitCommit + " check {}", metadata + "-fsck");
    EXPECT_EQ(consistent.exit_code, 0) << metadata << ": " << consistent.err;
  }
}

}  // namespace
}  // namespace pmlab::crash::exec
