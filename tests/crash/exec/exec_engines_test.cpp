// Storage engines nobody here wrote, crash-tested as their distribution ships them (subjects/lmdb).
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

}  // namespace
}  // namespace pmlab::crash::exec
