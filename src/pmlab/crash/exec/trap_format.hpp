// The instructions `pmlab crash exec` has the runtime trap: the flushes, fences and non-temporal stores of
// a program's own code, which no call reports. crash exec finds them by disassembling the program's modules
// (raw_instructions.hpp) and writes them to a file the runtime (src/pmlab-trace/traps.cpp) reads at its
// start (PMLAB_TRACE_TRAPS names it). The runtime puts a breakpoint on each, and reports what it does as
// the program runs it, as pmlab/trace.h's calls would.
//
// The file is text, a line each:
//   pmlab-trap-sites 1
//   module PATH                     the module's path as the trace names it (to the end of the line)
//   function BEGIN END              a function whose instructions are trapped (pmlab/trace.h's reports from
//                                   it are dropped: the traps report the same instructions)
//   site ADDRESS KIND BASE INDEX SCALE DISPLACEMENT SIZE BYTES
// BEGIN, END and ADDRESS: hex, in the module's own (link-time) addresses; KIND: TrapKind as a number; BASE and INDEX:
// the memory operand's registers (Register, or -1 for none); SCALE: 1, 2, 4 or 8; DISPLACEMENT: signed decimal; SIZE:
// the bytes a non-temporal store writes (0 for the others); BYTES: the instruction's bytes in hex. A site whose bytes
// differ from what the module holds is not trapped.
#pragma once

#include <cstdint>

namespace pmlab::crash::exec::traps {

inline constexpr const char* kHeader = "pmlab-trap-sites 1";
inline constexpr unsigned kMaxInstructionBytes = 15;  // x86-64's limit

enum class TrapKind : uint8_t { clflush = 0, clflushopt, clwb, sfence, mfence, non_temporal_store };

// A memory operand's registers in the order of their encoding (rax 0 … r15 15), and rip for an operand
// relative to the next instruction.
enum class Register : int8_t {
  none = -1,
  rax = 0,
  rcx,
  rdx,
  rbx,
  rsp,
  rbp,
  rsi,
  rdi,
  r8,
  r9,
  r10,
  r11,
  r12,
  r13,
  r14,
  r15,
  rip
};

}  // namespace pmlab::crash::exec::traps
