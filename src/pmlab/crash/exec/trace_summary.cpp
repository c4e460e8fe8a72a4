#include "pmlab/crash/exec/trace_summary.hpp"

#include <algorithm>
#include <map>

namespace pmlab::crash::exec {

std::string joined(const std::vector<Frame>& frames) {
  std::string out;
  for (const Frame& f : frames) out += (out.empty() ? "" : " <- ") + f.text();
  return out;
}

void describe_trace(TracedRun& run, const TraceFile& t, const Replay& replay, uint32_t schedules) {
  run.complete = t.complete();
  const char* tracking = trace::describe(t.write_tracking());
  run.write_tracking = tracking != nullptr
                           ? tracking
                           : "a way this pmlab does not know (" + std::to_string(t.header().write_tracking) + ")";
  run.fences = t.fences();
  run.fences_by_call = t.fences_by_call();
  run.records = t.records();
  run.threads = t.threads();
  run.thread_switches = t.thread_switches();
  if (run.schedule == 1 && schedules == 1 && t.persisting_threads() > 1)
    run.notes.push_back(std::to_string(t.persisting_threads()) +
                        " threads made persistence calls, and this run judged the one interleaving they took: "
                        "--schedules N traces the program again with its threads paused at persistence calls, so "
                        "that they interleave otherwise");
  run.notes.insert(run.notes.end(), t.notes().begin(), t.notes().end());
  for (const ImageFile& f : replay.files())
    run.files.push_back(f.directory ? f.path + "/" : f.path.empty() ? "(a file with no name, never linked)" : f.path);
  if (!t.complete()) run.notes.push_back("the trace ends before the program's exit: no crash point at exit");
}

void add_findings(TracedRun& run, const Findings& f, Symbolizer& symbols, const TraceFile& t) {
  run.writebacks = f.writebacks;
  run.lines_written_back = f.lines_written_back;
  // One addr2line per module for every address named below.
  std::vector<uint64_t> wanted;
  for (const auto* m : {&f.redundant_writebacks, &f.empty_fences, &f.non_pm_writebacks})
    for (const auto& [site, n] : *m) wanted.push_back(site);
  for (const auto& line : f.unflushed_at_exit)
    if (line.second.stored_before_fence) {
      const auto& stack = t.stack(line.second.stored_stack);
      wanted.insert(wanted.end(), stack.begin(), stack.end());
    }
  symbols.resolve(wanted);
  auto top = [&](const std::map<uint64_t, uint64_t>& by_site, const char* kind) {
    std::vector<std::pair<uint64_t, uint64_t>> v(by_site.begin(), by_site.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    for (size_t i = 0; i < v.size() && i < 10; ++i) {
      const Frame site = symbols.frame(v[i].first);
      run.findings.push_back({kind, site.text(), v[i].second, !site.own});
    }
  };
  top(f.redundant_writebacks, "redundant_writeback");
  top(f.empty_fences, "empty_fence");
  top(f.non_pm_writebacks, "non_pm_writeback");
  // Lines never written back, grouped by the stack of the fence that saw their last store.
  std::map<std::string, std::pair<uint64_t, uint64_t>> unflushed;  // where -> (lines, first fence)
  for (const auto& line : f.unflushed_at_exit) {
    const LineOrigin& origin = line.second;
    const std::string where = origin.stored_before_fence ? joined(symbols.own_frames(t.stack(origin.stored_stack), 2))
                                                         : "after the last fence";
    auto& [lines, first] = unflushed[where];
    ++lines;
    if (origin.stored_before_fence && (first == 0 || origin.stored_before_fence < first))
      first = origin.stored_before_fence;
  }
  for (const auto& [where, counts] : unflushed)
    run.findings.push_back(
        {"unflushed_at_exit",
         counts.second ? "stored before fences at " + where + " (first #" + std::to_string(counts.second) + ")" : where,
         counts.first});
  std::stable_partition(run.findings.begin(), run.findings.end(),
                        [](const FindingSite& found) { return !found.in_library; });
}

void note_unseen_instructions(TracedRun& run, const TraceFile& t, const Findings& f, Symbolizer& symbols,
                              ModuleCodeCache& code, const std::set<std::pair<std::string, uint64_t>>& trapped) {
  if (t.fences() > 0 && f.unflushed_at_exit.empty()) return;
  note_unreported_instructions(t, symbols, code, trapped, run.notes);
}

}  // namespace pmlab::crash::exec
