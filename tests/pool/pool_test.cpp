#include "pmlab/pool/pool.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <functional>
#include <fstream>
#include <regex>

#include "../support/temp_dir.hpp"
#include "pmlab/pool/layout.hpp"

namespace pmlab::pool {
namespace {

using pmlab::testing::digest;
using pmlab::testing::TempDir;

constexpr uint64_t kSize = 4ULL << 20;

std::string create_pool(const TempDir& dir, const std::string& name = "p.pool", std::string_view layout = "test") {
  std::string path = dir.file(name);
  auto pool = Pool::create(path, kSize, layout);
  EXPECT_TRUE(pool.ok()) << pool.status().message();
  return path;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST(Pool, CreateWritesAValidHeaderAndOpenReadsIt) {
  TempDir dir;
  std::string path = dir.file("p.pool");
  {
    auto pool = Pool::create(path, kSize, "test", 3);
    ASSERT_TRUE(pool.ok()) << pool.status().message();
    EXPECT_EQ((*pool)->size(), kSize);
    EXPECT_EQ((*pool)->data_size(), kSize - kHeaderSize);
    std::memset((*pool)->data(), 0xab, 4096);
  }
  auto pool = Pool::open(path, {.layout = "test", .persist = std::nullopt, .read_only = false});
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  const Header& h = (*pool)->header();
  EXPECT_EQ(layout_name(h), "test");
  EXPECT_EQ(h.layout_version, 3u);
  EXPECT_EQ(h.pool_size, kSize);
  EXPECT_TRUE(std::regex_match(uuid_string(h),
                               std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
  EXPECT_EQ(static_cast<unsigned char>((*pool)->data()[100]), 0xab);
  // /dev/shm is tmpfs: an emulated pool, ADR with the CPU's best flush unless forced.
  EXPECT_EQ((*pool)->medium(), Medium::emulated);
  EXPECT_STREQ((*pool)->store_granularity(), "page");
  EXPECT_EQ((*pool)->persister().domain(), persist::Domain::adr);
}

TEST(Pool, TwoPoolsHaveDifferentUuids) {
  TempDir dir;
  auto a = read_header(create_pool(dir, "a.pool"));
  auto b = read_header(create_pool(dir, "b.pool"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(uuid_string(*a), uuid_string(*b));
}

TEST(Pool, SecondOpenIsRefusedWhileTheFirstHoldsIt) {
  TempDir dir;
  std::string path = create_pool(dir);
  auto first = Pool::open(path);
  ASSERT_TRUE(first.ok());
  auto second = Pool::open(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Errc::busy);
  EXPECT_NE(second.status().message().find("in use"), std::string::npos);
  auto reader = Pool::open(path, {.layout = {}, .persist = std::nullopt, .read_only = true});
  EXPECT_EQ(reader.status().code(), Errc::busy);
  first.value().reset();
  EXPECT_TRUE(Pool::open(path).ok());
}

TEST(Pool, OverridesTheMapTimeChoice) {
  TempDir dir;
  std::string path = create_pool(dir);
  persist::Config eadr{.domain = persist::Domain::eadr,
                       .flush = persist::FlushInstruction::clflush,
                       .elide_flush = false,
                       .elide_fence = false};
  auto pool = Pool::open(path, {.layout = {}, .persist = eadr, .read_only = false});
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ((*pool)->persister().domain(), persist::Domain::eadr);
  EXPECT_FALSE((*pool)->persister().issues_flushes());
}

// Bad input: a clear error, and the file is exactly as it was.
struct BadInput : ::testing::Test {
  TempDir dir;
};

TEST_F(BadInput, CreateRefusesAnExistingFile) {
  std::string path = dir.file("precious.txt");
  write_bytes(path, "do not overwrite me");
  const uint64_t before = digest(path);
  auto pool = Pool::create(path, kSize, "test");
  EXPECT_EQ(pool.status().code(), Errc::already_exists);
  EXPECT_NE(pool.status().message().find("refusing to overwrite"), std::string::npos);
  // `pmlab pool remove` would refuse a file that is no pool: the message suggests it for a pool only.
  EXPECT_EQ(pool.status().message().find("pool remove"), std::string::npos) << pool.status().message();
  EXPECT_EQ(digest(path), before);
  const std::string existing = create_pool(dir);
  EXPECT_NE(Pool::create(existing, kSize, "test").status().message().find("(pmlab pool remove " + existing + " first)"),
            std::string::npos);
}

// Everything in `dir` but what it named: the hidden files a create makes and leaves.
std::vector<std::string> names_in(const TempDir& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The hidden file a pool is made under is created as the pool's own name would be: the umask applies.
TEST(Pool, ANewPoolsModeFollowsTheUmask) {
  TempDir dir;
  const mode_t before = ::umask(077);
  auto pool = Pool::create(dir.file("p.pool"), kSize, "test");
  ::umask(before);
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("p.pool").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(BadInput, AFormatThatFailsLeavesNothingBehind) {
  auto pool = Pool::create(dir.file("p.pool"), kSize, "test", 1, {},
                           [](Pool&) { return error(Errc::invalid_argument, "the layout refused"); });
  EXPECT_EQ(pool.status().message(), "the layout refused");
  EXPECT_TRUE(names_in(dir).empty());
}

// A process killed while it creates a pool (here in its layout's format) leaves no file under the pool's
// name, only its hidden one, which the next create of that name removes: open_or_create then starts afresh.
TEST_F(BadInput, ACreateCutOffLeavesNoPoolAndTheNextCreateSweepsIt) {
  const std::string path = dir.file("p.pool");
  const pid_t child = fork();
  if (child == 0) {
    (void)Pool::create(path, kSize, "test", 1, {}, [](Pool& p) -> Status {
      std::memset(p.data(), 0xab, 4096);
      ::kill(::getpid(), SIGKILL);
      return Status::success();
    });
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  ASSERT_FALSE(std::filesystem::exists(path));
  const auto left = names_in(dir);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_TRUE(left[0].starts_with(".p.pool.pmlab-new-")) << left[0];
  auto pool = Pool::create(path, kSize, "test");
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"p.pool"});
  // A create in progress (its hidden file locked) is left alone by another create of the same name, and the
  // one that names its pool second gets already_exists, not the other's pool overwritten.
  bool inner_made = false;
  auto outer = Pool::create(dir.file("q.pool"), kSize, "test", 1, {}, [&](Pool&) -> Status {
    inner_made = Pool::create(dir.file("q.pool"), kSize, "inner").ok();
    return Status::success();
  });
  EXPECT_TRUE(inner_made);
  EXPECT_EQ(outer.status().code(), Errc::already_exists) << outer.status().message();
  auto q = Pool::open(dir.file("q.pool"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(layout_name((*q)->header()), "inner");
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"p.pool", "q.pool"}));
}

TEST_F(BadInput, CreateInAMissingDirectory) {
  auto pool = Pool::create(dir.file("no/such/dir/p.pool"), kSize, "test");
  EXPECT_EQ(pool.status().code(), Errc::not_found);
  EXPECT_NE(pool.status().message().find("does not exist"), std::string::npos);
}

TEST_F(BadInput, CreateWithAnEmptyPath) {
  auto pool = Pool::create("", kSize, "test");
  EXPECT_EQ(pool.status().code(), Errc::invalid_argument);
  EXPECT_NE(pool.status().message().find("path is empty"), std::string::npos) << pool.status().message();
}

TEST_F(BadInput, CreateWithoutSpaceLeavesNothingBehind) {
  std::string path = dir.file("huge.pool");
  auto pool = Pool::create(path, 1ULL << 50, "test");  // 1 PiB
  EXPECT_EQ(pool.status().code(), Errc::no_space);
  EXPECT_NE(pool.status().message().find("no space"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(BadInput, CreateTooSmallOrBadLayoutName) {
  EXPECT_EQ(Pool::create(dir.file("a"), 4096, "test").status().code(), Errc::invalid_argument);
  EXPECT_EQ(Pool::create(dir.file("b"), kSize + 1, "test").status().code(), Errc::invalid_argument);
  EXPECT_EQ(Pool::create(dir.file("c"), kSize, "").status().code(), Errc::invalid_argument);
  EXPECT_EQ(Pool::create(dir.file("d"), kSize, "bad name!").status().code(), Errc::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir.file("a")));
}

TEST_F(BadInput, OpenAMissingFile) { EXPECT_EQ(Pool::open(dir.file("nothing.pool")).status().code(), Errc::not_found); }

TEST_F(BadInput, OpenSomethingThatIsNotAPool) {
  std::string path = dir.file("notes.txt");
  write_bytes(path, std::string(8192, 'x'));
  const uint64_t before = digest(path);
  auto pool = Pool::open(path);
  EXPECT_EQ(pool.status().code(), Errc::not_a_pool);
  EXPECT_NE(pool.status().message().find("not a pmlab pool"), std::string::npos);
  EXPECT_EQ(digest(path), before);
}

TEST_F(BadInput, OpenAFileTooSmallForAHeader) {
  std::string path = dir.file("tiny");
  write_bytes(path, "PMLABPOL");
  auto pool = Pool::open(path);
  EXPECT_EQ(pool.status().code(), Errc::not_a_pool);
  EXPECT_NE(pool.status().message().find("too small"), std::string::npos);
}

TEST_F(BadInput, OpenACorruptedHeader) {
  std::string path = create_pool(dir);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('Z');  // inside the layout name
  }
  const uint64_t before = digest(path);
  auto pool = Pool::open(path);
  EXPECT_EQ(pool.status().code(), Errc::corrupted);
  EXPECT_NE(pool.status().message().find("checksum"), std::string::npos);
  EXPECT_EQ(digest(path), before);
}

TEST_F(BadInput, OpenATruncatedPool) {
  std::string path = create_pool(dir);
  ASSERT_EQ(truncate(path.c_str(), kSize / 2), 0);
  const uint64_t before = digest(path);
  auto pool = Pool::open(path);
  EXPECT_EQ(pool.status().code(), Errc::corrupted);
  EXPECT_NE(pool.status().message().find("truncated"), std::string::npos);
  EXPECT_EQ(digest(path), before);
}

TEST_F(BadInput, OpenWithTheWrongLayout) {
  std::string path = create_pool(dir, "p.pool", "hashmap");
  const uint64_t before = digest(path);
  auto pool = Pool::open(path, {.layout = "btree", .persist = std::nullopt, .read_only = false});
  EXPECT_EQ(pool.status().code(), Errc::wrong_layout);
  EXPECT_NE(pool.status().message().find("'hashmap'"), std::string::npos);
  EXPECT_EQ(digest(path), before);
}

TEST_F(BadInput, OpenAReadOnlyFileForWriting) {
  std::string path = create_pool(dir);
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  const uint64_t before = digest(path);
  auto pool = Pool::open(path);
  EXPECT_EQ(pool.status().code(), Errc::permission_denied);
  EXPECT_NE(pool.status().message().find("read-only"), std::string::npos);
  EXPECT_EQ(digest(path), before);
  EXPECT_TRUE(Pool::open(path, {.layout = {}, .persist = std::nullopt, .read_only = true}).ok());
}

TEST_F(BadInput, OpenADirectory) {
  EXPECT_EQ(Pool::open(dir.path()).status().code(), Errc::not_a_file);
  EXPECT_EQ(read_header(dir.path()).status().code(), Errc::not_a_file);
}

// Opening a FIFO would wait for a writer forever; every path that opens a pool refuses it at once.
TEST_F(BadInput, OpenAFifoDoesNotBlock) {
  std::string path = dir.file("fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0644), 0);
  EXPECT_EQ(Pool::open(path).status().code(), Errc::not_a_file);
  EXPECT_EQ(Pool::open(path, {.layout = {}, .persist = std::nullopt, .read_only = true}).status().code(),
            Errc::not_a_file);
  EXPECT_EQ(read_header(path).status().code(), Errc::not_a_file);
  EXPECT_EQ(remove(path, RemoveMode::damaged_too).code(), Errc::not_a_file);
  EXPECT_TRUE(std::filesystem::exists(path));
}

// Rewrites a pool's header with `edit` applied and a valid checksum: a crafted header.
void craft_header(const std::string& path, const std::function<void(Header&)>& edit) {
  Header h{};
  {
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(&h), sizeof h);
  }
  edit(h);
  h.checksum = header_checksum(h);
  std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
  out.write(reinterpret_cast<const char*>(&h), sizeof h);
}

TEST_F(BadInput, AKnownLayoutInAnUnknownVersionIsRefused) {
  std::string path = create_pool(dir, "v.pool", "bench");
  craft_header(path, [](Header& h) { h.layout_version = 999; });
  auto header = read_header(path);
  EXPECT_EQ(header.status().code(), Errc::wrong_layout);
  EXPECT_NE(header.status().message().find("version 999"), std::string::npos);
}

TEST_F(BadInput, AHeaderThatDisagreesWithTheFileSizeIsRefused) {
  std::string path = create_pool(dir);
  craft_header(path, [](Header& h) { h.pool_size = kSize / 2; });
  EXPECT_EQ(read_header(path).status().code(), Errc::corrupted);
  craft_header(path, [](Header& h) { h.pool_size = kSize + 4096; });
  EXPECT_EQ(read_header(path).status().code(), Errc::corrupted);
  craft_header(path, [](Header& h) {
    h.pool_size = 4096;
    h.data_offset = 4096;
  });
  EXPECT_EQ(read_header(path).status().code(), Errc::corrupted);
}

TEST_F(BadInput, RemoveNeedsForceForADamagedPool) {
  std::string path = create_pool(dir);
  ASSERT_EQ(truncate(path.c_str(), kSize / 2), 0);
  const uint64_t before = digest(path);
  Status refused = remove(path);
  EXPECT_EQ(refused.code(), Errc::corrupted);
  EXPECT_NE(refused.message().find("--force"), std::string::npos);
  EXPECT_EQ(digest(path), before);
  EXPECT_TRUE(remove(path, RemoveMode::damaged_too).ok());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(BadInput, RemoveNeverTakesAShortFileThatOnlyBeginsWithTheMagic) {
  std::string path = dir.file("notes.txt");
  write_bytes(path, std::string(kMagic, sizeof kMagic) + " is how a pool begins, says this text");
  const uint64_t before = digest(path);
  EXPECT_EQ(remove(path).code(), Errc::not_a_pool);
  EXPECT_EQ(remove(path, RemoveMode::damaged_too).code(), Errc::not_a_pool);
  EXPECT_EQ(digest(path), before);
}

TEST_F(BadInput, RemoveRefusesFilesThatAreNotPools) {
  std::string path = dir.file("notes.txt");
  write_bytes(path, std::string(8192, 'x'));
  EXPECT_EQ(remove(path).code(), Errc::not_a_pool);
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST_F(BadInput, RemoveRefusesAPoolInUse) {
  std::string path = create_pool(dir);
  auto pool = Pool::open(path);
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(remove(path).code(), Errc::busy);
  EXPECT_TRUE(std::filesystem::exists(path));
  pool.value().reset();
  EXPECT_TRUE(remove(path).ok());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Layout, RecoverRunsTheRegisteredEntryPoint) {
  static int recovered = 0;
  ASSERT_TRUE(LayoutRegistry::instance().add({"test-recovering",
                                              1,
                                              "test",
                                              [](Pool&) {
                                                ++recovered;
                                                return Status::success();
                                              },
                                              {}}));
  EXPECT_FALSE(LayoutRegistry::instance().add({"test-recovering", 1, "dup", {}, {}}));
  TempDir dir;
  std::string path = create_pool(dir, "r.pool", "test-recovering");
  auto pool = Pool::open(path);
  ASSERT_TRUE(pool.ok());
  EXPECT_TRUE((*pool)->recover().ok());
  EXPECT_EQ(recovered, 1);
}

}  // namespace
}  // namespace pmlab::pool
