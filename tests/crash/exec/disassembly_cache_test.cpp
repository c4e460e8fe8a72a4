// What objdump read of a module, kept across runs: an entry is named by the module's bytes, read only whole,
// and gives what objdump would.
#include "pmlab/crash/exec/disassembly_cache.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../../support/temp_dir.hpp"
#include "pmlab/crash/exec/raw_instructions.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

// The instructions a parse found, each as "address mnemonic operands @symbol bytes".
std::vector<std::string> listed(const ModuleCode& code) {
  std::vector<std::string> out;
  for (const RawInstruction& i : code.instructions) {
    std::string bytes;
    for (uint8_t b : i.bytes) bytes += std::to_string(b) + ",";
    out.push_back(std::to_string(i.address) + " " + i.mnemonic + " " + i.operands + " @" + i.symbol + " " + bytes);
  }
  for (const auto& [address, name] : code.symbols) out.push_back(std::to_string(address) + " <" + name + ">");
  return out;
}

TEST(DisassemblyCache, TheLinesKeptParseToWhatTheWholeDisassemblyDoes) {
  const std::string text =
      "\n/tmp/raw:     file format elf64-x86-64\n\nDisassembly of section .text:\n\n"
      "0000000000001060 <main>:\n    1060:\tpush   %rbx\n    1079:\tclwb   (%rax)\n    107d:\tsfence\n"
      "0000000000001090 <quiet>:\n    1090:\tret\n"
      "00000000000010a0 <memcpy_nt@@MYLIB_1.0>:\n    10a0:\t66 0f e7 07          \tmovntdq %xmm0,(%rdi)\n";
  std::string kept;
  const ModuleCode whole = parse_disassembly(text, &kept);
  EXPECT_EQ(listed(parse_disassembly(kept)), listed(whole));
  EXPECT_EQ(kept.find("push"), std::string::npos) << kept;
  EXPECT_NE(kept.find("<quiet>:"), std::string::npos) << "a function's end is the next symbol's start";
}

TEST(DisassemblyCache, AnEntryIsReadOnlyWhole) {
  testing::TempDir dir;
  const std::string entry = dir.file("d/disassembly/e.txt");
  ASSERT_TRUE(write_cached_disassembly(entry, "0000000000001060 <main>:\n    1079:\tclwb   (%rax)\n").ok());
  EXPECT_EQ(read_cached_disassembly(entry), "0000000000001060 <main>:\n    1079:\tclwb   (%rax)\n");
  ASSERT_TRUE(write_cached_disassembly(entry, "").ok());
  EXPECT_EQ(read_cached_disassembly(entry), "") << "a module with no symbol and no instruction";
  ASSERT_TRUE(write_cached_disassembly(entry, "0000000000001060 <main>:\n    1079:\tclwb   (%rax)\n").ok());
  const std::string good = testing::read_all(entry);
  for (size_t cut : {size_t{0}, size_t{10}, good.size() - 1}) {  // a torn write, or one cut short
    testing::write_all(entry, good.substr(0, cut));
    EXPECT_FALSE(read_cached_disassembly(entry).has_value()) << cut;
  }
  std::string flipped = good;
  flipped[20] ^= 1;
  testing::write_all(entry, flipped);
  EXPECT_FALSE(read_cached_disassembly(entry).has_value());
  EXPECT_FALSE(read_cached_disassembly(dir.file("none.txt")).has_value());
}

TEST(DisassemblyCache, AnEntryIsNamedByTheModulesBytesNotItsPath) {
  testing::TempDir dir;
  const auto objdump = platform::find_program("objdump");
  if (!objdump) GTEST_SKIP() << "binutils' objdump is not installed";
  testing::write_all(dir.file("a"), "one module");
  testing::write_all(dir.file("b"), "one module");
  testing::write_all(dir.file("c"), "another module");
  const std::string a = disassembly_cache_file(dir.path(), dir.file("a"), *objdump, "clwb");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, disassembly_cache_file(dir.path(), dir.file("b"), *objdump, "clwb"));
  EXPECT_NE(a, disassembly_cache_file(dir.path(), dir.file("c"), *objdump, "clwb"));
  EXPECT_NE(a, disassembly_cache_file(dir.path(), dir.file("a"), *objdump, "clwb sfence"))
      << "a parse that keeps other lines reads other entries";
  EXPECT_EQ(disassembly_cache_file(dir.path(), dir.file("none"), *objdump, "clwb"), "");
  EXPECT_EQ(disassembly_cache_file("", dir.file("a"), *objdump, "clwb"), "") << "no cache";
}

// disassemble() keeps what objdump read, gives the same again from the entry, and reads the entry rather
// than objdump where there is one (an entry planted with another instruction is what it gives).
TEST(DisassemblyCache, ADisassemblyIsTakenFromItsEntryOnceKept) {
  testing::TempDir dir;
  const auto objdump = platform::find_program("objdump");
  if (!objdump) GTEST_SKIP() << "binutils' objdump is not installed";
  const char* before = std::getenv("PMLAB_CACHE_DIR");
  const std::string restore = before != nullptr ? before : "";
  setenv("PMLAB_CACHE_DIR", dir.path().c_str(), 1);
  const std::string plugin = std::string(PMLAB_SUBJECTS_DIR) + "/libpmem-log-plugin.so";
  auto first = disassemble(plugin);
  ASSERT_TRUE(first.ok()) << first.status().message();
  std::vector<std::string> entries;  // the one entry the disassembly left
  for (const auto& e : std::filesystem::directory_iterator(dir.file("disassembly"))) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 1u);
  const std::string& entry = entries.front();
  EXPECT_TRUE(read_cached_disassembly(entry).has_value());
  auto again = disassemble(plugin);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(listed(*again), listed(*first));
  ASSERT_TRUE(write_cached_disassembly(entry, "0000000000001000 <planted>:\n    1004:\tmfence\n").ok());
  auto planted = disassemble(plugin);
  ASSERT_TRUE(planted.ok());
  ASSERT_EQ(planted->instructions.size(), 1u);
  EXPECT_EQ(planted->instructions[0].symbol, "planted");
  setenv("PMLAB_CACHE_DIR", "", 1);  // no cache: objdump again
  auto uncached = disassemble(plugin);
  ASSERT_TRUE(uncached.ok());
  EXPECT_EQ(listed(*uncached), listed(*first));
  if (before != nullptr) setenv("PMLAB_CACHE_DIR", restore.c_str(), 1);
  else unsetenv("PMLAB_CACHE_DIR");
}

void set_mtime(const std::string& path, time_t seconds_ago) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const timespec times[2] = {now, {now.tv_sec - seconds_ago, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// The cache keeps to its size by dropping what was used longest ago: reading an entry keeps it, the entry
// just written stays whatever its age, and a dead write's hidden file goes only once it is old.
TEST(DisassemblyCache, ThePruneDropsTheLeastRecentlyUsedEntriesFirst) {
  testing::TempDir dir;
  const std::string lines(1000, 'x');
  auto entry = [&](const char* name) { return dir.file(std::string("disassembly/") + name); };
  for (const char* name : {"a.txt", "b.txt", "c.txt", "d.txt", "e.txt"})
    ASSERT_TRUE(write_cached_disassembly(entry(name), lines + "\n").ok());
  set_mtime(entry("a.txt"), 500);  // the oldest, but the one just written
  set_mtime(entry("b.txt"), 400);
  set_mtime(entry("c.txt"), 300);  // read below: the most recently used
  set_mtime(entry("d.txt"), 200);
  set_mtime(entry("e.txt"), 100);
  testing::write_all(entry(".f.txt.tmp-1"), "a write that died");
  set_mtime(entry(".f.txt.tmp-1"), 7200);
  testing::write_all(entry(".g.txt.tmp-2"), "a write still going");
  testing::write_all(entry("notes"), "not an entry");
  ASSERT_TRUE(read_cached_disassembly(entry("c.txt")).has_value());
  const uint64_t one = std::filesystem::file_size(entry("a.txt"));

  EXPECT_EQ(prune_disassembly_cache(dir.path(), 5 * one, entry("a.txt")), 1u) << "only the dead write's file";
  EXPECT_EQ(prune_disassembly_cache(dir.path(), 3 * one, entry("a.txt")), 2u);
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("disassembly")))
    left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{".g.txt.tmp-2", "a.txt", "c.txt", "e.txt", "notes"}));
  EXPECT_EQ(prune_disassembly_cache(dir.path(), 0, entry("a.txt")), 2u);
  EXPECT_TRUE(std::filesystem::exists(entry("a.txt")));
  EXPECT_EQ(prune_disassembly_cache("", 0, ""), 0u) << "no cache";
  EXPECT_EQ(prune_disassembly_cache(dir.file("none"), 0, ""), 0u);
}

}  // namespace
}  // namespace pmlab::crash::exec
