// Failing states of a program that are one bug seen again (crash/failure_groups.hpp): taken as alike where
// the program was at the same place (the crash point's call stack), what they persisted was stored and
// written back at the same places, and the checker said the same (its exit, and its last line but for the
// numbers in it). Which bytes persisted, and which record, do not count: that is what changes from one
// showing of a bug to the next.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace pmlab::crash::exec {

// What decides a failing state's cause.
struct FailureFacts {
  bool at_exit = false;
  uint32_t call = 0;                                   // what made the crash point's fence (trace::FenceCall)
  const std::vector<uint64_t>* crash_stack = nullptr;  // its return addresses
  // Per persisted line: the stack of the fence its content was stored before, and its last write-back's site.
  std::vector<std::pair<const std::vector<uint64_t>*, uint64_t>> persisted;
  std::string_view lost;     // what the crash lost of the file system's changes
  std::string_view outcome;  // the checker's exit
  std::string_view output;   // its last lines
};

// The same key for states alike as above. Persisted lines count as a set: the order the enumerator lists
// them in, or a second line of the same sites, makes no other cause.
uint64_t failure_cause(const FailureFacts& facts);

}  // namespace pmlab::crash::exec
