// Which of a program's own persistence instructions the runtime can trap, and how it finds their addresses.
#include "pmlab/crash/exec/trap_sites.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../../support/temp_dir.hpp"

namespace pmlab::crash::exec {
namespace {

using traps::Register;
using traps::TrapKind;

TEST(TrapSites, ReadsEveryMemoryOperandTheCompilerWrites) {
  struct Case {
    const char* text;
    Register base, index;
    int scale;
    int64_t displacement;
  };
  const Case cases[] = {
      {"(%rax)", Register::rax, Register::none, 1, 0},
      {"0x40(%rdi)", Register::rdi, Register::none, 1, 0x40},
      {"-0x10(%rbp)", Register::rbp, Register::none, 1, -0x10},
      {"0x960(%rcx,%r8,8)", Register::rcx, Register::r8, 8, 0x960},
      {"(%rcx,%r8,1)", Register::rcx, Register::r8, 1, 0},
      {"0x0(,%rax,8)", Register::none, Register::rax, 8, 0},
      {"0x2fc5(%rip)", Register::rip, Register::none, 1, 0x2fc5},
      {" (%r15) ", Register::r15, Register::none, 1, 0},
  };
  for (const Case& c : cases) {
    const auto m = parse_memory_operand(c.text);
    ASSERT_TRUE(m.has_value()) << c.text;
    EXPECT_EQ(m->base, c.base) << c.text;
    EXPECT_EQ(m->index, c.index) << c.text;
    EXPECT_EQ(m->scale, c.scale) << c.text;
    EXPECT_EQ(m->displacement, c.displacement) << c.text;
  }
}

TEST(TrapSites, RefusesOperandsTheRegistersAloneDoNotGive) {
  for (const char* text : {"", "%rax", "0x601040", "%fs:0x10", "%fs:(%rax)", "(%eax)", "0x8(%rax,%rbx,3)",
                           "(%rax,%rip,1)", "0x8(%rip,%rax,1)", "(%rax,%rbx,2,1)", "zz(%rax)", "(%xmm0)"})
    EXPECT_FALSE(parse_memory_operand(text).has_value()) << text;
}

RawInstruction instruction(std::string mnemonic, std::string operands,
                           std::vector<uint8_t> bytes = {0x0f, 0xae, 0x38}) {
  RawInstruction i;
  i.address = 0x1150;
  i.mnemonic = std::move(mnemonic);
  i.operands = std::move(operands);
  i.bytes = std::move(bytes);
  return i;
}

TEST(TrapSites, TrapsWriteBacksFencesAndNonTemporalStoresOfEveryWidth) {
  auto clwb = trap_site(instruction("clwb", "0x40(%rdi,%rcx,8)"));
  ASSERT_TRUE(clwb.ok()) << clwb.status().message();
  EXPECT_EQ(clwb->kind, TrapKind::clwb);
  EXPECT_EQ(clwb->operand.index, Register::rcx);
  EXPECT_EQ(clwb->size, 0u);
  EXPECT_EQ(trap_site(instruction("clflushopt", "(%rsi)"))->kind, TrapKind::clflushopt);
  EXPECT_EQ(trap_site(instruction("clflush", "(%rsi)"))->kind, TrapKind::clflush);
  // A fence has no operand; a write-back relative to rip is computed from the instruction's own address.
  EXPECT_EQ(trap_site(instruction("sfence", ""))->kind, TrapKind::sfence);
  EXPECT_EQ(trap_site(instruction("mfence", ""))->kind, TrapKind::mfence);
  EXPECT_EQ(trap_site(instruction("clwb", "0x10(%rip)"))->operand.base, Register::rip);
  const std::pair<const char*, uint32_t> stores[] = {
      {"%rsi,0xc3500(%rdi)", 8}, {"%edx,0x1c(%rdi)", 4},   {"%r9d,(%rax)", 4},   {"%r9,(%rax)", 8},
      {"%xmm2,0x50(%rdi)", 16},  {"%ymm1,0x60(%rdi)", 32}, {"%zmm0,(%rdi)", 64}, {"%mm0,(%rdi)", 8}};
  for (const auto& [operands, size] : stores) {
    const std::string mnemonic = operands[1] == 'r' || operands[1] == 'e' ? "movnti" : "vmovntdq";
    auto s = trap_site(instruction(mnemonic, operands));
    ASSERT_TRUE(s.ok()) << operands << ": " << s.status().message();
    EXPECT_EQ(s->kind, TrapKind::non_temporal_store) << operands;
    EXPECT_EQ(s->size, size) << operands;
  }
  EXPECT_EQ(trap_site(instruction("movntdq", "%xmm7,-0x10(%rax)"))->operand.displacement, -0x10);
}

TEST(TrapSites, SaysWhyAnInstructionCannotBeTrapped) {
  // A store relative to rip would be run elsewhere, where rip is not the same.
  EXPECT_NE(trap_site(instruction("movnti", "%eax,0x0(%rip)")).status().message().find("relative to rip"),
            std::string::npos);
  EXPECT_FALSE(trap_site(instruction("movdir64b", "(%rsi),%rdi")).ok());
  EXPECT_FALSE(trap_site(instruction("clwb", "%fs:0x10")).ok());
  EXPECT_FALSE(trap_site(instruction("clwb", "(%rax)", {})).ok()) << "no bytes to check and restore";
  EXPECT_FALSE(trap_site(instruction("movnti", "%eax,(%rdx)", std::vector<uint8_t>(16, 0x90))).ok());
}

// Two static functions of one name, one of them with a store that cannot be trapped: that one keeps all its
// instructions untrapped (and is named), the other and every other function are trapped whole.
TEST(TrapSites, AFunctionIsTrappedWholeOrNotAtAll) {
  ModuleCodeCache code;
  code.emplace("/opt/app/engine", parse_disassembly(R"(
0000000000001000 <flush>:
    1000:	66 0f ae 37          	clwb   (%rdi)
    1004:	0f ae f8             	sfence
0000000000001100 <flush>:
    1100:	0f c3 05 00 00 00 00 	movnti %eax,0x0(%rip)        # 1107 <flush+0x7>
    1107:	66 0f ae 36          	clwb   (%rsi)
0000000000001200 <fence>:
    1200:	0f ae f8             	sfence
)"));
  std::vector<std::string> notes;
  const auto modules = own_traps({"/opt/app/engine"}, code, notes);
  ASSERT_EQ(modules.size(), 1u);
  std::vector<uint64_t> sites;
  for (const TrapSite& s : modules[0].sites) sites.push_back(s.address);
  EXPECT_EQ(sites, (std::vector<uint64_t>{0x1000, 0x1004, 0x1200}));
  EXPECT_EQ(modules[0].functions, (std::vector<std::pair<uint64_t, uint64_t>>{{0x1000, 0x1100}, {0x1200, UINT64_MAX}}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("flush in engine (movnti %eax,0x0(%rip): a non-temporal store relative to rip)"),
            std::string::npos)
      << notes[0];
  // A module that cannot be read is said so, and traps nothing.
  code.emplace("/opt/app/broken", Status(Errc::failed, "objdump exited with 1"));
  notes.clear();
  EXPECT_TRUE(own_traps({"/opt/app/broken"}, code, notes).empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("broken was not searched"), std::string::npos) << notes[0];
}

TEST(TrapSites, WritesTheFileTheRuntimeReads) {
  testing::TempDir dir;
  ModuleTraps m{"/opt/app/bin/engine", {}, {{0x1100, 0x1200}}};
  m.sites.push_back(*trap_site(instruction("clwb", "0x40(%rdi,%rcx,8)", {0x66, 0x0f, 0xae, 0x74, 0xcf, 0x40})));
  m.sites.push_back(*trap_site(instruction("movnti", "%rsi,-0x8(%rdi)", {0x48, 0x0f, 0xc3, 0x77, 0xf8})));
  ASSERT_TRUE(write_trap_sites({m}, dir.file("sites")).ok());
  std::ifstream in(dir.file("sites"));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "pmlab-trap-sites 1\n"
            "module /opt/app/bin/engine\n"
            "function 1100 1200\n"
            "site 1150 2 7 1 8 64 0 660fae74cf40\n"
            "site 1150 5 7 -1 1 -8 8 480fc377f8\n");
  EXPECT_EQ(trapped_addresses({m}).size(), 1u) << "one address, two sites: the set is by address";
  EXPECT_FALSE(write_trap_sites({m}, dir.file("no/such/dir/sites")).ok());
}

}  // namespace
}  // namespace pmlab::crash::exec
