// objdump's disassembly as crash exec reads it to find, and trap, a program's own persistence instructions:
// parse_disassembly on arbitrary text (and again on the lines it kept, which must give the same), and each
// instruction it finds through trap_site. Nothing may crash,
// and a site it accepts must be one the runtime can run: the bytes of one instruction, a scale the
// encoding has, and a non-temporal store of a known width that is not relative to rip.
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "pmlab/crash/exec/raw_instructions.hpp"
#include "pmlab/crash/exec/trap_sites.hpp"

using namespace pmlab::crash::exec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string kept;
  const ModuleCode code = parse_disassembly(text, &kept);
  // What the cache keeps parses to the same instructions and symbols.
  const ModuleCode again = parse_disassembly(kept);
  if (again.symbols != code.symbols || again.instructions.size() != code.instructions.size()) std::abort();
  for (size_t i = 0; i < code.instructions.size(); ++i) {
    const RawInstruction &a = code.instructions[i], &b = again.instructions[i];
    if (a.address != b.address || a.mnemonic != b.mnemonic || a.symbol != b.symbol || a.operands != b.operands ||
        a.bytes != b.bytes)
      std::abort();
  }
  for (const RawInstruction& i : code.instructions) {
    (void)code.symbol_at(i.address);
    auto site = trap_site(i);
    if (!site) continue;
    const TrapSite& s = *site;
    if (s.bytes.empty() || s.bytes.size() > traps::kMaxInstructionBytes) std::abort();
    if (s.operand.scale != 1 && s.operand.scale != 2 && s.operand.scale != 4 && s.operand.scale != 8) std::abort();
    if (s.kind == traps::TrapKind::non_temporal_store && (s.size == 0 || s.operand.base == traps::Register::rip))
      std::abort();
  }
  (void)parse_memory_operand(text);
  return 0;
}
