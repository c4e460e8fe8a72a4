// The flush, fence and non-temporal store instructions in a traced program's own code. The runtime sees a
// program's persistence only through libpmem, libpmem2, pmlab's library and pmlab/trace.h: an instruction
// the program issues itself, unreported, is a write-back or a fence crash exec never sees, and the states
// it builds then hold stores that could not be lost. Found by disassembling the program's modules with
// binutils' objdump (frames are named with its addr2line), so a run can say where such instructions are.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/exec/symbolizer.hpp"
#include "pmlab/crash/exec/trace_file.hpp"

namespace pmlab::crash::exec {

struct RawInstruction {
  uint64_t address = 0;        // in the module's own (link-time) addresses
  std::string mnemonic;        // clwb, clflushopt, clflush, sfence, mfence, movnti, movntdq, vmovntdq, …
  std::string symbol;          // the function (symbol) it lies in; "" where objdump names none
  std::string operands;        // as objdump prints them (AT&T), its comment left out
  std::vector<uint8_t> bytes;  // the instruction's encoding, where objdump printed it
};

// A module's disassembly, kept to what crash exec asks of it.
struct ModuleCode {
  std::vector<RawInstruction> instructions;
  std::vector<std::pair<uint64_t, std::string>> symbols;  // each symbol's start, in address order
  // The symbol `address` lies in: the last one that starts at or before it ("" before the first).
  std::string symbol_at(uint64_t address) const;
  // That symbol's range, [its start, the next symbol's start): 0 before the first, UINT64_MAX after the last.
  std::pair<uint64_t, uint64_t> function_at(uint64_t address) const;
};

// Reads `objdump -d` output (AT&T syntax, with or without raw bytes). `kept`, where given: the lines it read
// anything from, each ending in a newline, which parse to the same ModuleCode (what the cache keeps).
ModuleCode parse_disassembly(std::string_view text, std::string* kept = nullptr);

// Disassembles the ELF file at `path` with objdump, or takes what objdump read of the same bytes before from
// the cache (disassembly_cache.hpp). Errc::unsupported when objdump is not installed.
Result<ModuleCode> disassemble(const std::string& path);

// Disassemblies by path, kept for the other domains' runs of the same program.
using ModuleCodeCache = std::map<std::string, Result<ModuleCode>>;

// Whether the module at `path` is the program's own code: not the system's (its libraries and programs, an
// interpreter running the program's script) and not pmlab's.
bool own_code(const std::string& path);
// The traced program's own code, each module once: its executable and its libraries that are own_code.
std::vector<const TraceModule*> own_modules(const TraceFile& t);

// Appends to `notes` one note naming the functions of the traced program's own code that hold persistence
// instructions but made no write-back or fence the trace records, each with its source line; or why a module
// could not be searched. Instructions in `trapped` ((module path, own address)) report themselves.
void note_unreported_instructions(const TraceFile& t, Symbolizer& symbols, ModuleCodeCache& code,
                                  const std::set<std::pair<std::string, uint64_t>>& trapped,
                                  std::vector<std::string>& notes);

}  // namespace pmlab::crash::exec
