// Reading objdump's disassembly for the persistence instructions a program issues itself.
#include "pmlab/crash/exec/raw_instructions.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace pmlab::crash::exec {
namespace {

constexpr const char* kDisassembly = R"(
/tmp/raw:     file format elf64-x86-64


Disassembly of section .text:

0000000000001060 <main>:
    1060:	push   %rbx
    1079:	clwb   (%rax)
    107d:	sfence
    1080:	lock cmpxchg %rdx,(%rcx)
    1085:	rex.W movnti %rax,(%rdx)

00000000000010a0 <memcpy_nt@@MYLIB_1.0>:
    10a0:	66 0f e7 07          	movntdq %xmm0,(%rdi)
    10a4:	c5 fd e7 07          	vmovntdq %ymm0,(%rdi)
    10a8:	0f ae f8             	sfence
    10ab:	c3                   	ret

00000000000010b0 <clflush_like_name>:
    10b0:	call   1060 <main>
    10b5:	mfence
    10b8:	clflushopt (%rsi)
)";

TEST(RawInstructions, FindsEachPersistenceInstructionInItsFunction) {
  const ModuleCode code = parse_disassembly(kDisassembly);
  std::vector<std::string> found;
  for (const RawInstruction& i : code.instructions) found.push_back(i.mnemonic + "@" + i.symbol);
  EXPECT_EQ(found, (std::vector<std::string>{"clwb@main", "sfence@main", "movnti@main", "movntdq@memcpy_nt",
                                             "vmovntdq@memcpy_nt", "sfence@memcpy_nt", "mfence@clflush_like_name",
                                             "clflushopt@clflush_like_name"}));
  EXPECT_EQ(code.instructions[0].address, 0x1079u);
  EXPECT_EQ(code.instructions[3].address, 0x10a0u);
}

TEST(RawInstructions, KeepsEachInstructionsBytesAndOperandsWhereObjdumpPrintsThem) {
  const ModuleCode code = parse_disassembly(kDisassembly);
  EXPECT_TRUE(code.instructions[0].bytes.empty());
  EXPECT_EQ(code.instructions[0].operands, "(%rax)");
  EXPECT_EQ(code.instructions[3].bytes, (std::vector<uint8_t>{0x66, 0x0f, 0xe7, 0x07}));
  EXPECT_EQ(code.instructions[3].operands, "%xmm0,(%rdi)");
  EXPECT_EQ(code.instructions[5].bytes, (std::vector<uint8_t>{0x0f, 0xae, 0xf8}));
  EXPECT_EQ(code.instructions[5].operands, "");
  const ModuleCode commented = parse_disassembly(
      "0000000000000050 <h>:\n  50:\t66 0f ae 35 00 00 00 00 \tclwb   0x0(%rip)        # 58 <h+0x8>\n");
  ASSERT_EQ(commented.instructions.size(), 1u);
  EXPECT_EQ(commented.instructions[0].operands, "0x0(%rip)");
  EXPECT_EQ(commented.instructions[0].bytes.size(), 8u);
}

TEST(RawInstructions, NamesTheFunctionAnAddressLiesIn) {
  const ModuleCode code = parse_disassembly(kDisassembly);
  EXPECT_EQ(code.symbol_at(0x1000), "");
  EXPECT_EQ(code.symbol_at(0x1060), "main");
  EXPECT_EQ(code.symbol_at(0x109f), "main");
  EXPECT_EQ(code.symbol_at(0x10a4), "memcpy_nt");
  EXPECT_EQ(code.symbol_at(0x20000), "clflush_like_name");
  EXPECT_EQ(code.function_at(0x1000), (std::pair<uint64_t, uint64_t>{0, 0x1060}));
  EXPECT_EQ(code.function_at(0x109f), (std::pair<uint64_t, uint64_t>{0x1060, 0x10a0}));
  EXPECT_EQ(code.function_at(0x10b8), (std::pair<uint64_t, uint64_t>{0x10b0, UINT64_MAX}));
}

TEST(RawInstructions, ReadsNothingFromTextThatIsNotADisassembly) {
  EXPECT_TRUE(parse_disassembly("").instructions.empty());
  EXPECT_TRUE(parse_disassembly("clwb\nsfence: 12\n0x10: sfence\n <main>:\n1060 <main>\n").instructions.empty());
}

TEST(RawInstructions, DisassemblesAProgramThatFlushesWithItsOwnInstructions) {
  const std::string log = std::string(PMLAB_SUBJECTS_DIR) + "/pmem-log";
  auto code = disassemble(log);
  if (!code && code.status().code() == Errc::unsupported) GTEST_SKIP() << code.status().message();
  ASSERT_TRUE(code.ok()) << code.status().message();
  bool clwb_in_flush = false, sfence_in_fence = false;
  for (const RawInstruction& i : code->instructions) {
    clwb_in_flush |= i.mnemonic == "clwb" && i.symbol == "flush";
    sfence_in_fence |= i.mnemonic == "sfence" && i.symbol == "fence";
  }
  EXPECT_TRUE(clwb_in_flush);
  EXPECT_TRUE(sfence_in_fence);
  EXPECT_FALSE(disassemble("/no/such/file").ok());
}

}  // namespace
}  // namespace pmlab::crash::exec
