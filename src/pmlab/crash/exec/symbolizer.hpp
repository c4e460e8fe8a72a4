// Return addresses of a traced run named as a programmer reads them: function, source file and line, and
// whether the frame is the program's own or a library's (libpmem, libpmemobj, the C library, pmlab's
// runtime), so a failure points at the program's line first. Names come from binutils' addr2line on the
// modules the trace recorded; without it, or without debug information, a frame is its module and offset.
// A return address inside code the compiler inlined stands for several frames, as a debugger shows them:
// the inlined function's line, then each caller it was inlined into, at the line of the call.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pmlab/crash/exec/trace_file.hpp"

namespace pmlab::crash::exec {

struct Frame {
  uint64_t address = 0;
  std::string function;      // "?" when unknown
  std::string location;      // "file.c:42", or "module+0x1234" without line information
  bool own = false;          // the program's code, not a library's
  std::string text() const;  // "function (location)"
};

class Symbolizer {
 public:
  explicit Symbolizer(std::vector<TraceModule> modules) : modules_(std::move(modules)) {}
  // Names every address in one addr2line run per module (call before frame()).
  void resolve(const std::vector<uint64_t>& addresses);
  Frame frame(uint64_t address);
  // The innermost of the address's frames, inlined ones included, that is the program's own; its innermost
  // frame where none is (an instruction in an intrinsic of the compiler's headers, named by the function
  // of the program's that it was inlined into).
  Frame own_frame(uint64_t address);
  // A stack's frames, inlined ones included, the program's own first where it has any: those up to `max`
  // of them, else the innermost frames.
  std::vector<Frame> own_frames(const std::vector<uint64_t>& stack, size_t max);

 private:
  const TraceModule* module_of(uint64_t address) const;
  // What one addr2line run printed for `list`: each address's innermost frame into known_, its inlined
  // callers into callers_.
  void read_names(const std::vector<uint64_t>& list, const std::string& out, bool named);
  std::vector<TraceModule> modules_;
  std::map<uint64_t, Frame> known_;
  std::map<uint64_t, std::vector<Frame>> callers_;  // the functions an address's code was inlined into, inner first
  std::map<std::string, bool> symbol_tables_;       // module path -> whether it keeps its full symbol table
};

// True for a library whose frames are not the program's own.
bool library_module(const std::string& path);
// True for a function of pmlab's own library, also where it is linked into the program statically: its
// frames are a library's too, and its flush instructions report themselves.
bool library_function(const std::string& function);
// True for a source file of a library's headers, whose inlined code is not the program's own: the system's
// (the C++ standard library's thread and invoke machinery, say), pmlab's own (pmlab/trace.h) and Rust's
// standard library, which every Rust program carries compiled in.
bool library_source(const std::string& path);
// True for a function of C++'s or Rust's standard library (std::, core::, alloc::): a frame of it without a
// line (compiled into the program without debug information) is the library's, not the program's.
bool standard_library_function(const std::string& function);

}  // namespace pmlab::crash::exec
