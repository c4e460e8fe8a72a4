// The traced runs a campaign makes of a program: the first, whose files every later run starts from, and
// each domain's and schedule's run, or the trace --trace names in its place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pmlab/crash/exec/campaign.hpp"
#include "pmlab/crash/exec/starting_files.hpp"
#include "pmlab/crash/exec/trace_file.hpp"

namespace pmlab::crash::exec {

// The first run the campaign made of the program, without --setup: the files every later run starts from.
struct FirstRun {
  std::optional<StartingFiles> files;
  std::string trace;
  int64_t cutoff = 0;  // of the run that is to be the first, until its trace is read

  void found(const TraceFile& t, const std::string& path) {
    if (cutoff == 0 || files) return;
    files = StartingFiles::of(t, cutoff);
    trace = path;
  }
};

// The traced run of a domain and schedule: the trace --trace names when it exists, else the program run under
// the runtime (with `trap_sites`, trap_format.hpp, where not empty). Traces are told apart by a suffix: the
// domain's where there are several, the schedule's past the first (`FILE.adr.schedule2`), so a failure's
// replay, with one domain and schedule, reads FILE itself.
Result<TracedRun> run_or_reuse(const ExecOptions& o, persist::Domain domain, uint32_t schedule,
                               const std::string& scratch, FirstRun& first, const std::string& trap_sites);

}  // namespace pmlab::crash::exec
