// What objdump read of a module, kept across runs: an entry is named by the module's bytes, read only whole,
// and gives what objdump would.
#include "pmlab/crash/exec/disassembly_cache.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

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

}  // namespace
}  // namespace pmlab::crash::exec
