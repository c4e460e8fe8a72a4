// Which of a program's own persistence instructions the runtime traps (trap_format.hpp), worked out from the
// modules a traced run loaded: a program with its own flush macros is then crash-tested unmodified.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/exec/raw_instructions.hpp"
#include "pmlab/crash/exec/trap_format.hpp"

namespace pmlab::crash::exec {

// A memory operand, as the runtime computes its address from the registers at the instruction.
struct MemoryOperand {
  traps::Register base = traps::Register::none;
  traps::Register index = traps::Register::none;
  uint8_t scale = 1;
  int64_t displacement = 0;
};

// "0x40(%rdi,%rcx,8)", "(%rax)", "-0x8(%rbp)", "0x10(%rip)", "0x0(,%rax,8)"; none for what the runtime cannot
// compute from the registers it is handed (a segment such as %fs:, a 32-bit register, an absolute address).
std::optional<MemoryOperand> parse_memory_operand(std::string_view text);

struct TrapSite {
  uint64_t address = 0;  // the module's own address
  traps::TrapKind kind = traps::TrapKind::sfence;
  MemoryOperand operand;  // where a flush or a store goes
  uint32_t size = 0;      // the bytes a non-temporal store writes
  std::vector<uint8_t> bytes;
};

// The site of one instruction, or why it cannot be trapped: no bytes, an operand the runtime cannot compute,
// a non-temporal store relative to rip (the runtime runs such a store elsewhere), movdir64b.
Result<TrapSite> trap_site(const RawInstruction& i);

// A module's trapped sites, and the functions they lie in ([begin, end), own addresses): pmlab/trace.h's
// reports from those are dropped, since the traps report the same instructions.
struct ModuleTraps {
  std::string path;
  std::vector<TrapSite> sites;
  std::vector<std::pair<uint64_t, uint64_t>> functions;
};

// The traps for the program's own code in the modules at `paths` (own_modules of a traced run, as
// note_unreported_instructions searches them). A function is trapped whole or not at all: one with an
// instruction that cannot be trapped keeps all of them untrapped, to be reported through pmlab/trace.h;
// `notes` says which and why, and why a module could not be searched.
std::vector<ModuleTraps> own_traps(const std::vector<std::string>& paths, ModuleCodeCache& code,
                                   std::vector<std::string>& notes);

// Writes `modules` in trap_format.hpp's form.
Status write_trap_sites(const std::vector<ModuleTraps>& modules, const std::string& path);

// (module path, own address) of every trapped site.
std::set<std::pair<std::string, uint64_t>> trapped_addresses(const std::vector<ModuleTraps>& modules);

}  // namespace pmlab::crash::exec
