// pmlab crash exec: crash-test a program of the user's own, unmodified, with its own checker as the judge
// (crash/exec/campaign.hpp). This file parses, calls the campaign, prints and records.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "pmlab/bench/context.hpp"
#include "pmlab/bench/results.hpp"
#include "pmlab/cli/commands.hpp"
#include "pmlab/cli/crash_common.hpp"
#include "pmlab/cli/options.hpp"
#include "pmlab/common/files.hpp"
#include "pmlab/common/stop_signal.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/crash/exec/campaign.hpp"
#include "pmlab/platform/clock.hpp"

namespace pmlab::cli {
namespace {

using json = nlohmann::ordered_json;

struct ExecArgs {
  std::string setup, check, check_server, check_python, granularity = "line,word", shard, out, replay, image, trace,
                                                        work_dir, name, stores, metadata = "at-call",
                                                        own_instructions = "trap";
  std::vector<std::string> pools, domains, program;
  uint64_t budget = 2000, seed = 1, jobs = 0, stack_depth = 24, schedules = 1;
  double timeout = 10;
  double program_timeout = 600;
  bool recheck = false, trace_only = false, compare_pages = false, keep_aslr = false;
};

// The check command, server or script, whichever option gave it, and which that was.
const std::string& checker_of(const ExecArgs& a) {
  return !a.check_server.empty() ? a.check_server : !a.check_python.empty() ? a.check_python : a.check;
}
crash::exec::ExecOptions::CheckBy check_by_of(const ExecArgs& a) {
  using CheckBy = crash::exec::ExecOptions::CheckBy;
  return !a.check_server.empty() ? CheckBy::server : !a.check_python.empty() ? CheckBy::python : CheckBy::command;
}

// Schedule 1, the program's own, is named as a run without --schedules is.
std::string run_name(const std::string& program, const crash::exec::ExecRun& r) {
  return "crash.exec:" + program + "/domain:" + persist::to_string(r.domain) +
         "/granularity:" + crash::to_string(r.granularity) +
         (r.schedule > 1 ? "/schedule:" + std::to_string(r.schedule) : "");
}

json failure_json(const crash::exec::ExecFailure& f) {
  json lines = json::array();
  for (const auto& l : f.lines)
    lines.push_back(
        {{"where", l.where}, {"content", l.content}, {"stored", l.stored}, {"written_back", l.written_back}});
  return {{"crash_point", f.crash_point},
          {"state", f.state},
          {"replay", f.replay()},
          {"at_exit", f.at_exit},
          {"call", f.at_exit ? "exit" : to_string(f.call)},
          {"operations_begun", f.ops.begun},
          {"operations_returned", f.ops.ended},
          {"site", f.stack.empty() ? "" : f.stack.front()},
          {"stack", f.stack},
          {"strategy", f.strategy},
          {"persisted", f.persisted},
          {"metadata_lost", f.lost},
          {"property", f.outcome + (f.output.empty() ? "" : ": " + f.output)},
          {"checker_output", f.output},
          {"lines", lines}};
}

record::RunRecord exec_record(const crash::exec::ExecReport& report, const crash::exec::ExecRun& r,
                              const crash::exec::TracedRun& traced, uint64_t hash) {
  record::RunRecord run = crash_run_record(
      run_name(report.program, r), "exec:" + report.program, r, [](const auto& f) { return f.outcome; }, hash);
  if (r.schedule > 1) run.params["schedule"] = r.schedule;
  const auto count = [](uint64_t v) { return static_cast<double>(v); };
  measure_states(run, r);
  measure_outcome(run, r);
  measured(run, "coverage",
           r.state_space > 0 ? std::min(1.0, count(r.states_checked + r.duplicate_states) / r.state_space) : 1.0,
           "ratio");
  measured(run, "exhaustive_points", count(r.exhaustive_points), "count");
  measured(run, "max_pending_lines", count(r.max_pending_lines), "count");
  measured(run, "dropped_values", count(r.dropped_values), "count");
  measured(run, "traced_seconds", traced.seconds, "s");
  measured(run, "fences", count(traced.fences), "count");
  measured(run, "writebacks", count(traced.writebacks), "count");
  json failures = json::array();
  for (const auto& f : r.details)
    if (!f.consistent) failures.push_back(with_alike(failure_json(f), f.alike));
  run.details["failures"] = failures;
  json findings = json::array();
  for (const auto& f : traced.findings)
    findings.push_back({{"kind", f.kind}, {"site", f.site}, {"count", f.count}, {"in_library", f.in_library}});
  run.details["findings"] = findings;
  run.details["trace"] = {
      {"path", traced.trace_path},   {"files", traced.files},     {"write_tracking", traced.write_tracking},
      {"complete", traced.complete}, {"program", traced.outcome}, {"threads", traced.threads},
      {"notes", traced.notes}};
  run.details["trace"]["schedule"] = traced.schedule;
  run.details["trace"]["thread_switches"] = traced.thread_switches;
  run.details["trace"]["fences_by_call"] =
      std::map<std::string, uint64_t>(traced.fences_by_call.begin(), traced.fences_by_call.end());
  return run;
}

// The command line that judges one state again: the options that decide the states, and the program.
struct ReplayHint {
  std::string options;  // "pmlab crash exec --check … --domain adr --granularity word --trace …"
  std::string program;  // "prog args", each word as a shell reads it back
};

void print_failure(const crash::exec::ExecFailure& f, const ReplayHint& replay) {
  std::fprintf(stderr, "  %s at crash point %s (%s%s)\n", f.consistent ? "consistent" : "FAILED", f.replay().c_str(),
               f.at_exit                                        ? "at exit"
               : f.call == crash::exec::trace::FenceCall::fence ? "a fence"
                                                                : to_string(f.call),
               f.stack.empty() ? "" : (" in " + f.stack.front()).c_str());
  for (size_t i = 1; i < f.stack.size(); ++i) std::fprintf(stderr, "      called from %s\n", f.stack[i].c_str());
  if (f.ops.begun != 0)
    std::fprintf(stderr, "    operations: %llu returned, %llu begun (pmlab_op_end, pmlab_op_begin)\n",
                 static_cast<unsigned long long>(f.ops.ended), static_cast<unsigned long long>(f.ops.begun));
  std::fprintf(stderr, "    checker: %s\n", f.outcome.c_str());
  print_marked_lines(f.output, "      ");
  std::fprintf(stderr, "    persisted (%s): %s\n", f.strategy.c_str(), f.persisted.c_str());
  if (!f.lost.empty()) std::fprintf(stderr, "    file system: %s\n", f.lost.c_str());
  for (size_t i = 0; i < f.lines.size() && i < 8; ++i)
    std::fprintf(stderr, "      %s %s: stored %s; %s\n", f.lines[i].where.c_str(), f.lines[i].content.c_str(),
                 f.lines[i].stored.c_str(), f.lines[i].written_back.c_str());
  print_alike(f.alike);
  std::fprintf(stderr, "    replay: %s --replay %s --image FILE -- %s\n", replay.options.c_str(), f.replay().c_str(),
               replay.program.c_str());
}

ReplayHint replay_hint(const ExecArgs& a, const crash::exec::ExecRun& r, const std::string& trace) {
  ReplayHint hint{"pmlab crash exec", ""};
  std::string& o = hint.options;
  if (!a.setup.empty()) o += " --setup " + shell_word(a.setup);
  o += std::string(" ") + crash::exec::check_option(check_by_of(a)) + " " + shell_word(checker_of(a));
  for (const auto& p : a.pools) o += " --pool " + shell_word(p);
  o += std::string(" --domain ") + persist::to_string(r.domain) + " --granularity " + crash::to_string(r.granularity);
  if (a.budget != 2000) o += " --budget " + std::to_string(a.budget);
  if (a.seed != 1) o += " --seed " + std::to_string(a.seed);
  if (a.metadata != "at-call") o += " --metadata " + shell_word(a.metadata);
  o += " --trace " + shell_word(trace);
  for (const auto& w : a.program) hint.program += (hint.program.empty() ? "" : " ") + shell_word(w);
  return hint;
}

// The campaign's options from the command line; `out` the run directory, made here unless the run only
// replays a state, and `made` the first directory that making it made (empty when none). The run directory
// keeps the trace, so a failure replays on the very run that showed it (a program with threads, or with time
// in it, need not repeat itself); --trace names another place.
Result<crash::exec::ExecOptions> exec_options(const ExecArgs& a, std::filesystem::path& out,
                                              std::filesystem::path& made) {
  crash::exec::ExecOptions o;
  o.program = a.program;
  o.setup = a.setup;
  o.check_by = check_by_of(a);
  o.check = checker_of(a);
  o.pools = a.pools;
  if (!a.domains.empty()) {
    std::vector<std::string> names;
    for (const auto& list : a.domains)
      for (std::string& name : split_commas(list)) names.push_back(std::move(name));
    auto d = parse_domains(names);
    if (!d) return d.status();
    o.domains = *d;
  }
  auto g = parse_granularities(a.granularity);
  if (!g) return g.status();
  o.granularities = *g;
  o.budget = a.budget;
  o.schedules = static_cast<uint32_t>(a.schedules);
  o.seed = a.seed;
  o.jobs = static_cast<unsigned>(a.jobs);
  o.timeout_s = a.timeout;
  o.program_timeout_s = a.program_timeout;
  PMLAB_TRY(read_shard_and_replay(a.shard, a.replay, o));
  if (!a.replay.empty()) {
    if (o.domains.size() != 1 || o.granularities.size() != 1)
      return error(Errc::invalid_argument,
                   "--replay names a state of one domain and granularity: give one --domain and one --granularity");
    o.replay_image = a.image;
  } else if (!a.image.empty()) {
    return error(Errc::invalid_argument, "--image goes with --replay POINT:STATE");
  }
  o.recheck = a.recheck;
  std::error_code ec;
  // The default run directory is made at once (so that two runs never share one), results/ with it.
  const bool had_results = std::filesystem::exists("results", ec);
  out = out_dir(a.out, "crash-exec-" + bench::run_id_now());
  if (a.out.empty() && !o.replay) made = std::filesystem::absolute(had_results ? out : "results", ec);
  if (!o.replay) {
    PMLAB_TRY(bench::check_out_dir(out, /*force=*/false));
    for (std::filesystem::path p = std::filesystem::absolute(out, ec); !p.empty() && !std::filesystem::exists(p, ec);
         p = p.parent_path() == p ? std::filesystem::path() : p.parent_path())
      made = p;
    std::filesystem::create_directories(out, ec);
    if (ec) return error(Errc::io_error, "cannot create " + out.string() + ": " + ec.message());
  }
  o.trace = !a.trace.empty() || o.replay ? a.trace : (out / "trace.pmtrace").string();
  o.trace_only = a.trace_only;
  o.work_dir = a.work_dir;
  o.stack_depth = static_cast<unsigned>(a.stack_depth);
  o.find_stores = a.compare_pages ? "compare" : a.stores;
  o.keep_aslr = a.keep_aslr;
  o.trap_own_instructions = a.own_instructions == "trap";
  using crash::exec::MetadataDurability;
  o.metadata = a.metadata == "at-sync"       ? MetadataDurability::at_sync
               : a.metadata == "at-own-sync" ? MetadataDurability::at_own_sync
                                             : MetadataDurability::at_call;
  return o;
}

// A progress line on a terminal, redrawn at most five times a second; elsewhere a line per phase.
std::function<void(const crash::exec::ExecProgress&)> progress_printer() {
  struct State {
    bool tty = isatty(STDERR_FILENO) != 0;
    uint64_t started = platform::Clock::monotonic_ns(), last = 0;
    std::string phase;
  };
  return [state = std::make_shared<State>()](const crash::exec::ExecProgress& p) {
    const uint64_t now = platform::Clock::monotonic_ns();
    if (p.phase != state->phase) {
      state->phase = p.phase;
      state->started = now;
      if (!state->tty) std::fprintf(stderr, "pmlab crash exec: %s\n", state->phase.c_str());
    }
    if (!state->tty || (now - state->last < 200'000'000 && p.done != p.total)) return;
    state->last = now;
    const double elapsed = static_cast<double>(now - state->started) * 1e-9;
    const double eta =
        p.done ? elapsed * static_cast<double>(p.total - std::min(p.done, p.total)) / static_cast<double>(p.done) : 0;
    std::fprintf(stderr, "\r\033[Kpmlab crash exec: %s: %llu/%llu states, %llu failures, ETA %.0f s", p.phase.c_str(),
                 static_cast<unsigned long long>(p.done), static_cast<unsigned long long>(p.total),
                 static_cast<unsigned long long>(p.failures), eta);
  };
}

json exec_settings(const ExecArgs& a, const crash::exec::ExecOptions& o, const std::string& domains) {
  return {{"mode", "exec"},
          {"program", a.program},
          {"setup", a.setup},
          {"check", checker_of(a)},
          {"check_by", crash::exec::check_option(o.check_by)},
          {"pools", a.pools},
          {"domains", domains},
          {"granularities", a.granularity},
          {"budget", o.budget},
          {"schedules", o.schedules},
          {"seed", o.seed},
          {"timeout_s", o.timeout_s},
          {"program_timeout_s", o.program_timeout_s},
          {"recheck", o.recheck},
          {"metadata", a.metadata},
          {"shard", {{"index", o.shard + 1}, {"of", o.shards}}},
          {"model",
           "ADR: a line is durable once written back and fenced; eADR: every store before a fence. A line "
           "changed since may persist with any content it held at a write-back or a fence since; line and "
           "word granularity split it into pieces that persist independently (docs/crash-simulator.md)."}};
}

void print_traces(const crash::exec::ExecReport& report) {
  for (const auto& t : report.traces) {
    const std::string schedule = t.schedule > 1 ? " (schedule " + std::to_string(t.schedule) + ")" : "";
    const std::string threads = t.threads > 1 ? ", " + std::to_string(t.threads) + " threads switching " +
                                                    std::to_string(t.thread_switches) + " times between calls"
                                              : "";
    // "40 fences (40 msync)": a program that syncs a file issues no fence instruction.
    std::string by_call;
    if (!(t.fences_by_call.size() == 1 && t.fences_by_call[0].first == "fence"))
      for (const auto& [call, n] : t.fences_by_call)
        by_call += (by_call.empty() ? " (" : ", ") + std::to_string(n) + " " + call;
    if (!by_call.empty()) by_call += ")";
    std::fprintf(stderr,
                 "pmlab crash exec: %s under %s%s: %s in %.2f s, %llu fences%s, %llu write-backs%s; stores found by "
                 "%s\n",
                 report.program.c_str(), persist::to_string(t.domain), schedule.c_str(), t.outcome.c_str(), t.seconds,
                 static_cast<unsigned long long>(t.fences), by_call.c_str(),
                 static_cast<unsigned long long>(t.writebacks), threads.c_str(), t.write_tracking.c_str());
    for (const auto& n : t.notes) std::fprintf(stderr, "  note: %s\n", n.c_str());
    for (const auto& f : t.findings)
      std::fprintf(stderr, "  finding (%s): %s x%llu at %s%s\n", persist::to_string(t.domain), f.kind.c_str(),
                   static_cast<unsigned long long>(f.count), f.site.c_str(),
                   f.in_library ? ", in a library's code, not the program's" : "");
  }
}

// A --check command that runs a Python script starts an interpreter per image, which is most of what judging
// one costs; --check-python runs the same script in forks of one interpreter. Returns what --check-python takes
// to run it (the command less its interpreter), the placeholder "SCRIPT ARGS" where the interpreter takes
// options before the script, and "" for a command that is not Python.
std::string python_script_of(std::string_view command) {
  command = trim(command);
  const size_t end = command.find_first_of(" \t");
  const std::string program = std::filesystem::path(command.substr(0, end)).filename().string();
  if (program.size() > 3 && program.ends_with(".py")) return std::string(command);
  if (!program.starts_with("python") || program.find_first_not_of("0123456789.", 6) != std::string::npos) return "";
  const std::string_view rest = end == std::string_view::npos ? "" : trim(command.substr(end));
  if (rest.empty() || rest.starts_with('-')) return "SCRIPT ARGS";
  return std::string(rest);
}

// Not on a --replay, which judges one state.
void suggest_check_python(const ExecArgs& a, const crash::exec::ExecReport& report) {
  if (check_by_of(a) != crash::exec::ExecOptions::CheckBy::command || !a.replay.empty()) return;
  const std::string script = python_script_of(a.check);
  uint64_t judged = 0;
  for (const auto& r : report.runs) judged += r.states_checked;
  if (script.empty() || judged == 0) return;
  std::fprintf(stderr,
               "pmlab crash exec: note: the check started Python for each of the %llu images judged; "
               "--check-python %s runs the same script in forks of one interpreter that read it once\n",
               static_cast<unsigned long long>(judged), shell_word(script).c_str());
}

// A run that failed before it wrote anything leaves no directory of its own making behind.
void remove_if_empty(const std::filesystem::path& out, const std::filesystem::path& made) {
  std::error_code ec;
  if (made.empty() || !std::filesystem::is_empty(out, ec) || ec) return;
  for (std::filesystem::path p = std::filesystem::absolute(out, ec); !ec && std::filesystem::is_empty(p, ec);
       p = p.parent_path()) {
    std::filesystem::remove(p, ec);
    if (p == made) break;
  }
}

int run_exec_command(const ExecArgs& a) {
  std::filesystem::path out, made;
  auto options = exec_options(a, out, made);
  if (!options) {
    remove_if_empty(out, made);
    return report_error(options.status());
  }
  const crash::exec::ExecOptions& o = *options;
  sweep_scratch_directories(scratch_base_directory(),
                            [](const std::string& line) { std::fprintf(stderr, "%s\n", printable(line).c_str()); });
  const bool tty = isatty(STDERR_FILENO) != 0;
  // ^C reaches pmlab only: the program and the checks run in process groups of their own. pmlab kills them,
  // removes its scratch files and keeps the run's trace (reusable with --trace); it judged too little to say.
  StopSignals stop_signals;
  auto report = crash::exec::run_exec(o, progress_printer());
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (stop_requested()) {
    remove_if_empty(out, made);
    std::error_code ec;
    const bool kept = !out.empty() && std::filesystem::exists(out, ec);
    std::fprintf(stderr,
                 "pmlab crash exec: stopped on %s: the program and its checks were killed, nothing judged was "
                 "written%s%s\n",
                 signal_name(stop_signal()).c_str(), kept ? "; what the run traced is kept in " : "",
                 kept ? printable(out.string()).c_str() : "");
    return 128 + stop_signal();
  }
  if (!report) {
    remove_if_empty(out, made);
    return report_error(report.status());
  }
  if (!a.name.empty()) report->program = a.name;
  std::string domains;
  for (auto d : o.domains) domains += (domains.empty() ? "" : ",") + std::string(persist::to_string(d));
  uint64_t hash = 0;
  bench::ResultsDocument results(crash_context(exec_settings(a, o, domains), domains, /*quick=*/false, &hash));
  print_traces(*report);
  for (const auto& r : report->runs) {
    const auto& traced = *std::find_if(report->traces.begin(), report->traces.end(),
                                       [&](const auto& t) { return t.domain == r.domain && t.schedule == r.schedule; });
    // A model of the file system other than the default is named, so that runs of several can be told apart.
    const std::string label = r.label() + (a.metadata == "at-call" ? "" : ", metadata " + a.metadata);
    std::fprintf(stderr,
                 "pmlab crash exec: %s: %llu crash points, %llu states enumerated, %llu judged, %llu duplicates saved, "
                 "%llu failures%s (%.1f s)\n",
                 label.c_str(), static_cast<unsigned long long>(r.crash_points),
                 static_cast<unsigned long long>(r.states_enumerated),
                 static_cast<unsigned long long>(r.states_checked), static_cast<unsigned long long>(r.duplicate_states),
                 static_cast<unsigned long long>(r.failures), failures_of_kinds(r.failure_kinds).c_str(), r.seconds);
    for (const auto& f : r.details) print_failure(f, replay_hint(a, r, traced.trace_path));
    results.add(exec_record(*report, r, traced, hash));
  }
  suggest_check_python(a, *report);
  if (o.trace_only) {
    for (const auto& t : report->traces) std::printf("trace: %s\n", t.trace_path.c_str());
    return 0;
  }
  if (o.replay) std::printf("image: %s\n", o.replay_image.c_str());
  auto written = results.write(out);
  if (!written) return report_error(written.status());
  std::printf("%zu runs, %llu failures\nresults: %s\n", results.size(),
              static_cast<unsigned long long>(report->failures()), written->c_str());
  return report->failures() ? 1 : 0;
}

// What the program is, which states are judged and by what.
void add_judging_options(CLI::App* cmd, ExecArgs& a) {
  cmd->add_option("--setup", a.setup, "shell command run untraced before the program (e.g. creates its pool)")
      ->check(non_empty_value());
  auto* check = cmd->add_option("--check", a.check,
                                "shell command judging a crash image: {} is its path; exit 0 means consistent")
                    ->check(non_empty_value());
  cmd->add_option("--check-server", a.check_server,
                  "a command that stays and judges image after image: each a JSON line on its stdin, answered by a "
                  "line on its stdout, ok or what is wrong")
      ->check(non_empty_value())
      ->excludes(check);
  cmd->add_option("--check-python", a.check_python,
                  "a Python check script and its arguments ({} the image's path), run per image as python3 would "
                  "run it, in a fork of one interpreter that loaded it once")
      ->check(non_empty_value())
      ->excludes(check)
      ->excludes("--check-server");
  // One value per occurrence: a vector option would otherwise take the `--` before PROGRAM as its own end.
  cmd->add_option("--pool", a.pools, "a file, or directory of files, the program maps or writes; repeatable")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(non_empty_value());
  cmd->add_option("--domain", a.domains, "adr and/or eadr, comma-separated or repeated (default adr)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(non_empty_value());
  cmd->add_option("--granularity", a.granularity,
                  "line and/or word, comma-separated (default line,word); byte tears every plain store")
      ->check(non_empty_value());
  cmd->add_option("--budget", a.budget, "crash states per domain, granularity and schedule (default 2000)")
      ->check(count_value(1, 1ULL << 40));
  cmd->add_option("--schedules", a.schedules,
                  "traced runs per domain: the program's own schedule, then runs whose threads pause at persistence "
                  "calls so that they interleave otherwise (default 1)")
      ->check(count_value(1, 1000));
  cmd->add_option("--seed", a.seed, "seed of random crash states and of the schedules' pauses (default 1)")
      ->check(count_value(0));
  cmd->add_option("--jobs", a.jobs, "checkers at once (default: one per CPU)")->check(count_value(0, 256));
  cmd->add_option("--timeout", a.timeout, "seconds a check may take before it counts as hung (default 10)")
      ->check(real_value(0.001, 86400));
  cmd->add_option("--program-timeout", a.program_timeout,
                  "seconds the traced program (and --setup) may run before it is killed (default 600; 0: none)")
      ->check(real_value(0, 1e7));
  cmd->add_option("--shard", a.shard, "judge only shard K of N (K/N); `pmlab crash merge` adds them up")
      ->check(non_empty_value());
}

// Where the results and the trace go, what is replayed, and how the program is traced.
void add_tracing_options(CLI::App* cmd, ExecArgs& a) {
  cmd->add_option("--out", a.out, "run directory for results.json (default results/crash-exec-<run-id>)")
      ->check(non_empty_value());
  cmd->add_option("--replay", a.replay, "rebuild and judge one POINT:STATE, as a failure prints it (with --image)")
      ->check(non_empty_value());
  cmd->add_option("--image", a.image, "with --replay: write the crash image here (for a debugger)")
      ->check(non_empty_value());
  cmd->add_flag("--recheck", a.recheck, "judge again the image the first check left (recovery must be idempotent)");
  cmd->add_option("--trace", a.trace, "reuse this trace if it exists, else keep the program's trace here")
      ->check(non_empty_value());
  cmd->add_flag("--trace-only", a.trace_only, "trace the program (into --trace) and stop: shards then judge it");
  cmd->add_option("--work-dir", a.work_dir, "scratch directory for crash images (default a fresh one under /dev/shm)")
      ->check(non_empty_value());
  cmd->add_option("--name", a.name, "the program's name in run names (default its file name)")
      ->check(non_empty_value());
  cmd->add_option("--stack-depth", a.stack_depth, "frames recorded per fence (default 24; 0: none)")
      ->check(count_value(0, 32));
  auto* stores = cmd->add_option("--stores", a.stores,
                                 "how the runtime finds plain stores: signals (a SIGBUS on the storing thread; "
                                 "other kernel stores than read and recv fail), faults (the runtime's thread; also "
                                 "stores by system calls), scan or compare (default: the first that works)")
                     ->check(CLI::IsMember({"signals", "faults", "scan", "compare"}));
  cmd->add_flag("--compare-pages", a.compare_pages, "the same as --stores compare")->excludes(stores);
  cmd->add_option("--metadata", a.metadata,
                  "when a file made, removed, renamed, cut or extended (or a directory below a --pool directory made, "
                  "removed or moved) is durable: at-call (when its call returns; default), at-sync (at the next "
                  "sync of any file or directory, in order: a crash may lose the "
                  "changes since the last sync from any one of them on) or at-own-sync (at a sync of what it "
                  "changed: its directory's fsync for a file made, removed or renamed, the file's own sync for its "
                  "length; a crash may lose the changes not yet durable from any one of them on)")
      ->check(CLI::IsMember({"at-call", "at-sync", "at-own-sync"}));
  cmd->add_flag("--keep-aslr", a.keep_aslr,
                "run the program, --setup and the checks with address-space randomization (default: without, as "
                "a debugger runs a program, so that pointers it stores repeat from run to run)");
  cmd->add_option("--own-instructions", a.own_instructions,
                  "the program's own flush, fence and non-temporal store instructions (clwb, sfence, movnti, ...): "
                  "trap (a breakpoint each, which reports it as it runs; default) or reported (the program reports "
                  "them through pmlab/trace.h; a note names those it does not)")
      ->check(CLI::IsMember({"trap", "reported"}));
}

}  // namespace

void add_crash_exec(CLI::App& crash, int& exit_code) {
  auto* cmd = crash.add_subcommand(
      "exec", "Crash-test a program of your own: PMDK, libpmem, libpmem2, libpmlab or pmlab/trace.h, unmodified");
  auto a = std::make_shared<ExecArgs>();
  add_judging_options(cmd, *a);
  add_tracing_options(cmd, *a);
  cmd->add_option("program", a->program, "-- PROGRAM [ARGS...]")->required();
  cmd->callback([&exit_code, a] { exit_code = run_exec_command(*a); });
}

}  // namespace pmlab::cli
