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

// LMDB with MDB_WRITEMAP commits in two steps, each made durable by an msync: the new pages, then the meta
// page that points at them, written in place. Its fields are stored one by one, the transaction id last,
// and the page's cache lines reach persistent memory in any order before its msync: a crash can keep the
// new transaction id and root beside the entry count of the transaction before last. Every such failure is
// at the meta page's msync (every second crash point of a commit), and in the meta pages' lines only.
TEST(CrashExecEngines, LmdbsMetaPageTearsWhenItsLinesPersistApart) {
  if (!std::filesystem::exists(kLmdbKv)) GTEST_SKIP() << "subjects/lmdb not built (no liblmdb-dev)";
  testing::TempDir dir;
  const std::string env = dir.file("kv.mdb"), n = std::to_string(kInserts);
  const std::string setup = "rm -f " + env + " " + env + "-lock && " + kLmdbKv + " create " + env;
  const std::vector<std::string> options = {"--pool", env, "--granularity", "line", "--domain", "adr"};
  const auto o =
      testing::crash_exec(setup, kLmdbKv + " check {} " + n, dir.file("map"), options, {kLmdbKv, "insert", env, n});
  ASSERT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.metric("line", "crash_points"), 2 * kInserts + 1) << "two msyncs per commit, and the exit";
  const nlohmann::json* line = o.run("line");
  ASSERT_NE(line, nullptr);
  ASSERT_GT((*line)["failures"].size(), 0u);
  for (const auto& f : (*line)["failures"]) {
    EXPECT_EQ(f["call"], "msync");
    EXPECT_EQ(f["crash_point"].get<uint64_t>() % 2, 0u) << "a failure at the data pages' msync: " << f.dump();
    EXPECT_NE(f["checker_output"].get<std::string>().find("the database counts"), std::string::npos) << f.dump();
    bool transaction_id = false;
    for (const auto& l : f["lines"]) {
      const uint64_t at = offset_of(l["where"].get<std::string>());
      EXPECT_LT(at, kMetaPages * kPageBytes) << "a persisted line outside the meta pages: " << f.dump();
      transaction_id |= at % kPageBytes == kTransactionIdLine;
    }
    EXPECT_TRUE(transaction_id) << "a failure without the new transaction id: " << f.dump();
  }

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

// Without MDB_WRITEMAP, LMDB maps its file read-only and writes pages with pwrite(2): nothing persists
// through a mapping, and exec mode says why it has nothing to test.
TEST(CrashExecEngines, AnEngineThatWritesItsMappedFileWithPwriteIsToldApart) {
  if (!std::filesystem::exists(kLmdbKv)) GTEST_SKIP() << "subjects/lmdb not built (no liblmdb-dev)";
  testing::TempDir dir;
  const std::string env = dir.file("kv.mdb");
  const auto o = testing::crash_exec("rm -f " + env + " " + env + "-lock && " + kLmdbKv + " create " + env,
                                     kLmdbKv + " check {} 4", dir.file("write"), {"--pool", env},
                                     {kLmdbKv, "insert", env, "4"}, {"LMDB_KV_WRITES=write"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("the program mapped no persistent memory"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(env + " is mapped read-only or private"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("pwrite(2)"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace pmlab::crash::exec
