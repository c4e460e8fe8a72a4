// What a traced run says of itself in the report: its trace's summary, and the findings of its replay (what
// the run did that costs without making anything more durable), named by the program's own call sites.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pmlab/crash/exec/campaign.hpp"
#include "pmlab/crash/exec/raw_instructions.hpp"
#include "pmlab/crash/exec/replay.hpp"
#include "pmlab/crash/exec/symbolizer.hpp"
#include "pmlab/crash/exec/trace_file.hpp"

namespace pmlab::crash::exec {

// "f (a.c:1) <- g (b.c:2)": frames, innermost first.
std::string joined(const std::vector<Frame>& frames);

// The trace's summary; `schedules`: how many traced runs the campaign makes of each domain.
void describe_trace(TracedRun& run, const TraceFile& t, const Replay& replay, uint32_t schedules);

void add_findings(TracedRun& run, const Findings& f, Symbolizer& symbols, const TraceFile& t);

// The program's own persistence instructions the runtime did not hear of, when the run shows what unseen
// ones leave behind: no fence at all, or stores never written back (raw_instructions.hpp).
void note_unseen_instructions(TracedRun& run, const TraceFile& t, const Findings& f, Symbolizer& symbols,
                              ModuleCodeCache& code, const std::set<std::pair<std::string, uint64_t>>& trapped);

}  // namespace pmlab::crash::exec
