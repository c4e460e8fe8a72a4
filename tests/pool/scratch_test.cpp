#include "pmlab/pool/scratch.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/ended_pid.hpp"
#include "../support/temp_dir.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab::pool {
namespace {

using pmlab::testing::ended_pid;
using pmlab::testing::TempDir;

std::string name_for(pid_t pid, const std::string& what) {
  return "pmlab-" + std::to_string(pid) + (what.empty() ? "" : "-" + what) + ".pool";
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST(ScratchPool, NamesCarryTheOwnerAndParseBack) {
  const std::string run = scratch_pool_path("/dev/shm");
  EXPECT_EQ(run, "/dev/shm/pmlab-" + std::to_string(getpid()) + ".pool");
  for (const char* what : {"ds-hashtable-tx", "ptm-pmdk", "pmemlog", "ds-bptree-2"}) {
    const std::filesystem::path side = scratch_pool_path("/tmp", what);
    EXPECT_EQ(scratch_pool_owner(side.filename().string()), getpid()) << side;
  }
  EXPECT_THROW(scratch_pool_path("/tmp", "a/b"), std::invalid_argument);
}

TEST(ScratchPool, APoolBeingCreatedIsNamedByItsHiddenName) {
  EXPECT_EQ(pool_being_created(".pmlab-12.pool.pmlab-new-Ab3dE9"), "pmlab-12.pool");
  EXPECT_EQ(pool_being_created(".kv.pool.pmlab-new-Ab3dE9"), "kv.pool");
  for (const char* name : {"kv.pool.pmlab-new-Ab3dE9", ".kv.pool.pmlab-new-Ab3", ".pmlab-new-Ab3dE9", ".kv.pool"})
    EXPECT_FALSE(pool_being_created(name).has_value()) << name;
}

TEST(ScratchPool, OtherNamesHaveNoOwner) {
  for (const char* name : {"pmlab-.pool", "pmlab-abc.pool", "pmlab-12-.pool", "pmlab-12", "other-12.pool",
                           "pmlab-0.pool", "pmlab-12-a b.pool", "pmlab-99999999999.pool", "pmlab-test-Xy12.pool"})
    EXPECT_FALSE(scratch_pool_owner(name).has_value()) << name;
}

// What a SIGKILLed run leaves: its pool, a side pool of ours, one of PMDK's, one it was still allocating and
// one it was making under the hidden name Pool::create gives a pool until it is whole. All five go; a file
// under a scratch name that no pmlab process made, and the pools of a live process, stay.
TEST(ScratchPool, SweepRemovesTheStalePoolsOfEndedProcessesOnly) {
  TempDir dir;
  const pid_t dead = ended_pid();
  const std::string run = dir.file(name_for(dead, ""));
  const std::string side = dir.file(name_for(dead, "ds-hashtable-tx"));
  const std::string pmdk = dir.file(name_for(dead, "ptm-pmdk"));
  const std::string unfinished = dir.file(name_for(dead, "ds-bptree-1"));  // killed while it was allocated
  const std::string making = dir.file("." + name_for(dead, "ds-skiplist") + ".pmlab-new-a1B2c3");
  const std::string foreign = dir.file(name_for(dead, "notes"));
  const std::string live = dir.file(name_for(getppid(), "ds-array"));
  for (const std::string& path : {run, side, live}) ASSERT_TRUE(Pool::create(path, 1 << 20, "bench").ok()) << path;
  write_file(pmdk, std::string("PMEMOBJ") + std::string(8185, '\0'));
  write_file(unfinished, std::string(1 << 16, '\0'));
  write_file(making, "half a header");
  write_file(foreign, "a user's own file, not a pool");

  std::vector<std::string> notes;
  sweep_scratch_pools(dir.path(), [&](const std::string& line) { notes.push_back(line); });

  namespace fs = std::filesystem;
  EXPECT_FALSE(fs::exists(run));
  EXPECT_FALSE(fs::exists(side));
  EXPECT_FALSE(fs::exists(pmdk));
  EXPECT_FALSE(fs::exists(unfinished));
  EXPECT_FALSE(fs::exists(making));
  EXPECT_TRUE(fs::exists(foreign));
  EXPECT_TRUE(fs::exists(live));
  ASSERT_EQ(notes.size(), 6u);
  size_t removed = 0, kept = 0;
  for (const std::string& line : notes) {
    removed += line.find("removed stale pool") != std::string::npos;
    kept += line.find(foreign) != std::string::npos && line.find("not removed") != std::string::npos;
  }
  EXPECT_EQ(removed, 5u);
  EXPECT_EQ(kept, 1u);
}

TEST(ScratchPool, APoolStillOpenIsLeftAlone) {
  TempDir dir;
  const std::string path = dir.file(name_for(ended_pid(), "ds-list"));
  auto pool = Pool::create(path, 1 << 20, "bench");
  ASSERT_TRUE(pool.ok());
  std::vector<std::string> notes;
  sweep_scratch_pools(dir.path(), [&](const std::string& line) { notes.push_back(line); });
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace pmlab::pool
