// Crash-testing a program nobody compiled for pmlab: `pmlab crash exec`.
//
// Per durability domain the program runs once under the preloaded runtime (src/pmlab-trace), after the user's
// setup command, and leaves a trace; with `schedules` above 1 it runs that many times, each run after the
// first with its threads paused at persistence calls where a seed says (pmlab-trace/schedule.hpp). Per
// granularity the trace is replayed twice through the durability model: the first replay sizes every crash
// point's state space so the budget is split as the simulator splits it; the second enumerates each point's
// crash states (the simulator's enumerator) and has the user's checker judge each distinct image, in
// parallel, on private copies of the program's persistent files. A failure is explained in the program's
// terms: the call stack of the crash point's fence and, for each line the state persisted, where it was
// stored and written back.
//
// Everything after the traced run is a function of (trace, domain, granularity, budget, seed): a shard
// replays the same trace and judges its share of the states, and `--replay P:S` rebuilds one image.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/durability_tracker.hpp"
#include "pmlab/crash/failure_groups.hpp"
#include "pmlab/crash/exec/replay.hpp"
#include "pmlab/crash/exec/trace_format.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::crash::exec {

struct ExecOptions {
  std::vector<std::string> program;  // PROGRAM and its arguments
  std::string setup;                 // shell command run untraced before each traced run (may be empty)
  std::string check;                 // shell command judging an image: `{}` is its path; exit 0 = consistent
  // What `check` is: a command run once per image; a command that stays and judges image after image, each
  // named in a request on its stdin and answered on its stdout (judges.hpp); or a Python script with its
  // arguments, run per image in a fork of one interpreter (python_checks.hpp).
  enum class CheckBy { command, server, python } check_by = CheckBy::command;
  std::vector<std::string> pools;  // files the program maps itself (PMDK's mappings are found without this)
  std::vector<persist::Domain> domains{persist::Domain::adr};
  std::vector<Granularity> granularities{Granularity::line, Granularity::word};
  // Traced runs per domain: the first as the program schedules its threads by itself, each further one with
  // its threads paused at persistence calls where the seed and the run's number say, so that they
  // interleave otherwise. A state whose image an earlier run's state had is not judged again.
  uint32_t schedules = 1;
  uint64_t budget = 2000;  // crash states per domain, granularity and schedule
  uint64_t seed = 1;
  unsigned jobs = 0;               // checkers at once; 0: one per CPU this process may use
  double timeout_s = 10;           // per check
  double program_timeout_s = 600;  // the traced program, and --setup, each time (0: none)
  uint64_t shard = 0, shards = 1;
  bool recheck = false;                                 // run the checker again on the image its first run left
  std::optional<std::pair<uint64_t, uint64_t>> replay;  // one (crash point, state)
  std::string replay_image;  // where --replay writes the image (the first file; others get .1, .2, …)
  std::string trace;         // a trace to reuse (when it exists) or to keep (when it does not)
  bool trace_only = false;   // write the trace and stop
  std::string work_dir;      // scratch for images; default a fresh directory under /dev/shm (removed after)
  unsigned stack_depth = 24;
  std::string runtime;              // libpmlab-trace.so; default beside the pmlab executable
  size_t max_failure_details = 20;  // causes explained (each by its first failure)
  // How the runtime finds plain stores (PMLAB_TRACE_WRITES): signals, faults, scan or compare; empty: the
  // first of them that works here.
  std::string find_stores;
  // The program, --setup and the checks run with address-space randomization. By default they run without
  // it, as a debugger runs a program: a program that stores pointers in its pool stores the same ones every
  // run, and the states a granularity tears out of them repeat.
  bool keep_aslr = false;
  // When a file made, removed, renamed, cut or extended is durable: when its call returns, or at the next
  // sync (a crash may lose the changes since the last sync from any one of them on).
  MetadataDurability metadata = MetadataDurability::at_call;
  // The program's own flush, fence and non-temporal store instructions, which no call reports: trapped by the
  // runtime (the run is traced again with the traps where the first run's code holds any), or left to the
  // program to report through pmlab/trace.h (the ones it does not are named in a note).
  bool trap_own_instructions = true;
};

// One line a failing state persisted, and where the program put it there.
struct PersistedLine {
  std::string where;         // file+offset
  std::string content;       // latest, written back, torn (+0:8 latest, …)
  std::string stored;        // "before fence #12 at btree_map_insert (btree_map.c:310) ← main (driver.c:88)"
  std::string written_back;  // "at pmemobj_tx_commit (…) before fence #12", or "never written back"
};

struct ExecFailure {
  uint64_t crash_point = 0, state = 0;
  trace::OperationCounts ops;  // operations the program marked before the crash point
  bool at_exit = false;
  trace::FenceCall call = trace::FenceCall::fence;  // what made the crash point's fence
  std::string strategy;
  std::string persisted;  // the enumerator's summary of the state
  // What the crash lost of the changes of the file system since the last sync ("": none; --metadata
  // at-sync).
  std::string lost;
  bool consistent = false;         // only a replayed state can be: it is explained whatever its verdict
  std::string outcome;             // the checker's: "exited with 1", "killed by signal 11 (SIGSEGV)", …
  std::string output;              // its last lines
  std::vector<std::string> stack;  // the crash point's fence, the program's own frames first
  std::vector<PersistedLine> lines;
  Alike alike;  // the failures of its cause (failure_causes.hpp) it stands for
  std::string replay() const { return replay_id(crash_point, state); }
};

// A call site of the program that costs without making anything more durable, and how often.
struct FindingSite {
  std::string kind;  // redundant_writeback, empty_fence, non_pm_writeback, unflushed_at_exit
  std::string site;  // function (file:line)
  uint64_t count = 0;
  // The site is in a library's code (libpmem, libpmemobj, pmlab's own library), not the program's: its
  // cost is the library's to remove, and the report shows it after the program's own.
  bool in_library = false;
};

// The traced run of one domain and schedule.
struct TracedRun {
  persist::Domain domain = persist::Domain::adr;
  uint32_t schedule = 1;  // 1: the program's own
  std::string trace_path;
  double seconds = 0;     // the program under the tracer
  std::string outcome;    // the program's exit
  bool complete = false;  // the trace ends with the program's exit
  std::string write_tracking;
  uint64_t fences = 0, records = 0, threads = 0, writebacks = 0, lines_written_back = 0;
  // The fences by the call that made them ("fence", "msync", "fdatasync", ...), the calls that made any.
  std::vector<std::pair<std::string, uint64_t>> fences_by_call;
  // Write-backs, fences and operation marks made by another thread than the one before them.
  uint64_t thread_switches = 0;
  std::vector<std::string> files;  // the persistent files it mapped, then the directories below --pool ones ("d/")
  std::vector<std::string> notes;
  std::vector<FindingSite> findings;
};

struct ExecRun {
  persist::Domain domain = persist::Domain::adr;
  uint32_t schedule = 1;
  Granularity granularity = Granularity::line;
  uint64_t crash_points = 0, crash_points_checked = 0;
  uint64_t states_enumerated = 0, states_checked = 0, duplicate_states = 0, failures = 0;
  uint64_t exhaustive_points = 0, max_pending_lines = 0, dropped_values = 0;
  uint64_t changes_taken_as_durable = 0;  // Findings::changes_taken_as_durable
  double state_space = 0, seconds = 0;
  uint64_t failure_kinds = 0;  // the failures' causes
  // The first failure of each cause, the first causes first (with --replay: the replayed state, whatever its
  // verdict).
  std::vector<ExecFailure> details;
  std::string label() const;  // "adr/word", or "adr/word, schedule 2"
};

struct ExecReport {
  std::string program;  // its name, as runs are named
  std::vector<TracedRun> traces;
  std::vector<ExecRun> runs;
  uint64_t failures() const;
};

// What the campaign is doing, for a progress line.
struct ExecProgress {
  std::string phase;  // "tracing adr", "adr/word"
  uint64_t done = 0, total = 0, failures = 0;
};

// The option that gives the check: --check, --check-server or --check-python.
const char* check_option(ExecOptions::CheckBy by);

Result<ExecReport> run_exec(const ExecOptions& options, const std::function<void(const ExecProgress&)>& progress);

// The traced run alone: the setup, then the program under the runtime, leaving its trace at `trace_path`
// and its output at `log_path`. An error when the program fails or leaves no trace. Schedule 1 is the
// program's own; another pauses its threads where `options.seed` and the schedule's number say.
// `trap_sites`: the instructions the runtime traps (trap_format.hpp), none where empty.
Result<TracedRun> trace_program(const ExecOptions& options, persist::Domain domain, const std::string& trace_path,
                                const std::string& log_path, uint32_t schedule = 1, const std::string& trap_sites = {});
// The environment a program runs in under test, traced or not (PMDK as on persistent memory, at the domain).
std::vector<std::string> program_environment(persist::Domain domain);

// Splits the budget over crash points of the given state counts. Where it covers every point 16 states
// deep, as the simulator splits it (allocate_budget); else half in breadth (every point its first states, or
// an even stride of them) and half in depth: 16 states each for points drawn with `seed`, every group (a
// point's fence stack) once before any twice. Sums to at most `budget`.
std::vector<uint64_t> allocate_exec_budget(const std::vector<double>& sizes, const std::vector<uint32_t>& groups,
                                           uint64_t budget, uint64_t seed);

// Where pmlab's runtime library is: $PMLAB_TRACE_RUNTIME, else beside the running executable.
Result<std::string> find_runtime();

}  // namespace pmlab::crash::exec
