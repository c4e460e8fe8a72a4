// Call stacks sampled by `perf record`, read from `perf script` text: folding into flame-graph stacks
// named as pmlab's designs are, and the time breakdown by what the sampled code was doing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::profile {

struct Frame {
  std::string symbol;   // as perf printed it (mangled: perf script runs with --no-demangle)
  uint64_t offset = 0;  // from the symbol's start (perf's +0x… suffix)
  std::string dso;      // the binary or library the frame is in
};

struct Sample {
  int tid = 0;
  uint64_t period = 1;        // cpu-clock: nanoseconds this sample stands for
  std::vector<Frame> frames;  // leaf first, as perf prints them
};

// Parses `perf script -F tid,period,ip,sym,symoff,dso --no-demangle` output (with call chains).
// A malformed line is an error naming the line; an empty input is zero samples.
Result<std::vector<Sample>> parse_perf_script(std::string_view text);

// The name a frame is shown under: demangled, argument list dropped ("pmlab::persist::Persister::copy_nt"),
// "[unknown]" replaced by the binary's file name.
std::string display_name(const Frame& f);

// Folded stacks ("root;…;leaf" → summed period), the input of the flame graph. Frames from the process
// entry down to the first frame in pmlab's own namespace (_start, libc, std::thread plumbing) are dropped,
// so each stack starts at pmlab's code; samples without any pmlab frame keep their whole stack.
std::map<std::string, uint64_t> fold(const std::vector<Sample>& samples);

// What a sample was doing. The classification rules (documented in docs/profiling.md):
//  1. the leaf instruction is a persistence instruction, or the one right after it (the timer interrupt
//     reports the next instruction): Persister::flush and fence are inlined into every design, so the
//     instruction, not the function, tells a clwb or sfence apart from the design's own work;
//  2. otherwise the innermost frame matching a pattern decides, in this order per frame —
//     persistence: pmlab::persist:: (flush, fence, copy_nt kernels), libpmem2's pmem2_ functions;
//     allocation: malloc, calloc, realloc, free, operator new/delete, mmap, munmap, or an "alloc" in a
//       pmlab name;
//     logging: a pmlab name segment that is or ends in "log" ("ClassicLog", "scan_log", "log");
//     search: a pmlab name segment containing search, find, lookup, travers, scan, seek, walk, probe;
//  3. otherwise other.
enum class Activity { persistence, logging, allocation, search, other };
constexpr int kActivities = 5;
const char* to_string(Activity a) noexcept;

// Persistence instructions of a binary by symbol and offset: "symbol+offset" of each clwb, clflushopt,
// clflush, sfence, mfence, non-temporal store, and of the kPersistSkid instructions after each (fewer when
// a jump, call or return ends the run first). The window is the sampling skid: a timer interrupt is taken
// when the stalled instruction retires, and a fence's stall can surface on a later serializing instruction
// (in core.persist, sfence; counter increment; rdtscp; the sample lands right after the rdtscp).
inline constexpr int kPersistSkid = 3;
struct PersistSites {
  std::unordered_set<std::string> keys;
  bool contains(const Frame& f) const;
};
// Reads `objdump -d --no-show-raw-insn` output.
PersistSites parse_objdump(std::string_view text);

Activity classify(const Sample& s, const PersistSites& sites);
// Like classify, for a display name alone (rule 2); used by the flame graph's colours.
Activity classify_name(std::string_view display);

struct Breakdown {
  uint64_t samples = 0;
  uint64_t total_period = 0;
  uint64_t period[kActivities] = {};
  double share(Activity a) const {
    return total_period ? static_cast<double>(period[static_cast<int>(a)]) / static_cast<double>(total_period) : 0.0;
  }
};
Breakdown breakdown(const std::vector<Sample>& samples, const PersistSites& sites);

}  // namespace pmlab::profile
