// The traced run: the program started under pmlab's runtime (src/pmlab-trace), after --setup, in the
// environment a program under test gets.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "pmlab/common/files.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/crash/exec/traced_run.hpp"
#include "pmlab/crash/exec/trace_file.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {

namespace fs = std::filesystem;

Result<std::string> find_runtime() {
  if (const char* forced = std::getenv("PMLAB_TRACE_RUNTIME")) {
    if (access(forced, R_OK) != 0)
      return error(Errc::not_found, std::string("PMLAB_TRACE_RUNTIME=") + forced + ": no such file");
    return fs::absolute(forced).string();
  }
  const fs::path self = executable_path();
  // Beside the executable in a build tree; lib/pmlab (lib) under an installation's prefix.
  const fs::path prefix = self.parent_path().parent_path();
  std::error_code ec;
  for (const fs::path& dir : {self.parent_path(), prefix / "lib" / "pmlab", prefix / "lib"}) {
    const fs::path candidate = dir / PMLAB_TRACE_RUNTIME_NAME;
    if (!self.empty() && fs::exists(candidate, ec)) return candidate.string();
  }
  return error(Errc::not_found, std::string("pmlab's runtime ") + PMLAB_TRACE_RUNTIME_NAME + " is not beside " +
                                    self.string() + " (build it, or set PMLAB_TRACE_RUNTIME)");
}

namespace {

// The traces of the processes the program started that mapped persistent memory (`trace_path`.<pid>, each
// written by the runtime from the process's first such mapping), by process id; with `unfinished`, also
// those still being created (`.part`).
std::vector<std::pair<long, fs::path>> process_traces(const std::string& trace_path, bool unfinished = false) {
  const fs::path main = fs::absolute(trace_path);
  const std::string prefix = main.filename().string() + ".";
  std::vector<std::pair<long, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(main.parent_path(), ec)) {
    std::string rest = entry.path().filename().string();
    if (rest.size() <= prefix.size() || rest.compare(0, prefix.size(), prefix) != 0) continue;
    rest.erase(0, prefix.size());
    if (unfinished && rest.ends_with(".part")) rest.erase(rest.size() - 5);
    if (rest.empty() || rest.size() > 9 || rest.find_first_not_of("0123456789") != std::string::npos) continue;
    found.emplace_back(std::stol(rest), entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

void remove_traces(const std::string& trace_path) {
  std::error_code ec;
  fs::remove(trace_path, ec);
  for (const auto& [pid, path] : process_traces(trace_path, true)) fs::remove(path, ec);
}

// Waits, `seconds` at most, until the process writing the trace at `path` has closed it (exited): the
// runtime holds the file's lock until then.
bool wait_for_writer(const fs::path& path, double seconds) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  if (!std::isfinite(seconds)) {  // no limit: wait as long as it runs
    while (flock(fd, LOCK_SH) != 0 && errno == EINTR) {}
    ::close(fd);
    return true;
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  bool closed = false;
  while (!(closed = flock(fd, LOCK_SH | LOCK_NB) == 0) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::close(fd);
  return closed;
}

// "process 123 (/usr/bin/prog)", and the persistent files its trace names.
std::string process_and_files(long pid, const fs::path& path, std::string* files) {
  auto trace = TraceFile::open(path.string());
  std::set<std::string> paths;
  if (trace)
    for (const auto& [id, region] : trace->regions()) paths.insert(region.path);
  for (const std::string& p : paths) *files += (files->empty() ? "" : ", ") + p;
  const std::string exe = trace && !trace->modules().empty() ? trace->modules().front().path : "?";
  return "process " + std::to_string(pid) + " (" + exe + ")";
}

// One process is traced: the one pmlab started, or where that one mapped no persistent memory (a shell, a
// test driver), the first process it started that did. Any other that did is named in a note: its stores
// are not in the trace. Waits for those processes to exit, `seconds` at most.
Status settle_process_traces(TracedRun& run, double seconds) {
  const auto others = process_traces(run.trace_path);
  if (others.empty()) return Status::success();
  for (const auto& [pid, path] : others)
    if (!wait_for_writer(path, seconds))
      return error(Errc::failed, "process " + std::to_string(pid) +
                                     ", which the program started and which maps persistent memory, still runs after "
                                     "the program ended: a run is judged once it has exited");
  auto main = TraceFile::open(run.trace_path);
  const size_t traced = main && !main->regions().empty() ? others.size() : 0;
  constexpr size_t kNamed = 3;  // untraced processes named one by one; the rest are counted
  size_t untraced = 0;
  for (size_t i = 0; i < others.size(); ++i) {
    if (i != traced && ++untraced > kNamed) continue;
    std::string files;
    const std::string who = process_and_files(others[i].first, others[i].second, &files);
    if (i == traced)
      run.notes.push_back("traced: " + who +
                          ", which the program started; the program itself mapped or wrote no persistent memory");
    else
      run.notes.push_back(who + ", which the program started, also mapped persistent memory (" + files +
                          ") and is not traced: its stores are not in the crash states");
  }
  if (untraced > kNamed)
    run.notes.push_back(std::to_string(untraced - kNamed) +
                        (untraced - kNamed == 1 ? " more process" : " more processes") +
                        " the program started mapped persistent memory, not traced");
  std::error_code ec;
  if (traced < others.size()) fs::rename(others[traced].second, run.trace_path, ec);
  if (ec) return error(Errc::io_error, "cannot move the trace " + others[traced].second.string() + ": " + ec.message());
  for (size_t i = 0; i < others.size(); ++i)
    if (i != traced) fs::remove(others[i].second, ec);
  return Status::success();
}

// How a process ended, a limit it ran into named: "ran past --program-timeout (600 s) and was killed".
std::string ran(const platform::ProcessResult& r, double limit_s) {
  if (!r.timed_out) return r.outcome();
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", limit_s);
  return std::string("ran past --program-timeout (") + limit + " s) and was killed";
}

}  // namespace

Result<TracedRun> trace_program(const ExecOptions& o, persist::Domain domain, const std::string& trace_path,
                                const std::string& log_path, uint32_t schedule, const std::string& trap_sites) {
  auto runtime = find_runtime();
  if (!runtime) return runtime.status();
  TracedRun run;
  run.domain = domain;
  run.schedule = schedule;
  run.trace_path = trace_path;
  if (!o.setup.empty()) {
    platform::ProcessSpec setup;
    setup.argv = {"/bin/sh", "-c", o.setup};
    setup.timeout_s = o.program_timeout_s;
    auto r = platform::run_process(setup);
    if (!r) return r.status();
    if (!r->ok()) {
      const std::string said = platform::tail_lines(r->err.empty() ? r->out : r->err, 3);
      return error(Errc::failed, "--setup " + ran(*r, o.program_timeout_s) + (said.empty() ? "" : ":\n" + said));
    }
  }
  platform::ProcessSpec spec;
  spec.argv = o.program;
  const char* preload = std::getenv("LD_PRELOAD");
  spec.set_env = {"LD_PRELOAD=" + *runtime + (preload && *preload ? std::string(":") + preload : ""),
                  "PMLAB_TRACE_FILE=" + trace_path, "PMLAB_TRACE_DOMAIN=" + std::string(persist::to_string(domain)),
                  "PMLAB_TRACE_STACK_DEPTH=" + std::to_string(o.stack_depth)};
  std::string pools;
  for (const auto& p : o.pools) pools += (pools.empty() ? "" : ":") + fs::absolute(p).string();
  if (!pools.empty()) spec.set_env.push_back("PMLAB_TRACE_POOLS=" + pools);
  if (!o.find_stores.empty()) spec.set_env.push_back("PMLAB_TRACE_WRITES=" + o.find_stores);
  if (!trap_sites.empty()) spec.set_env.push_back("PMLAB_TRACE_TRAPS=" + trap_sites);
  if (schedule > 1)
    spec.set_env.push_back("PMLAB_TRACE_SCHEDULE=" +
                           std::to_string(mix64(o.seed * 0x9e3779b97f4a7c15ULL + schedule) | 1));
  for (auto& e : program_environment(domain)) spec.set_env.push_back(std::move(e));
  spec.set_env_with_pid = "PMLAB_TRACE_PID={pid}";
  spec.output = platform::ProcessSpec::Output::file;
  spec.output_file = log_path;
  spec.timeout_s = o.program_timeout_s;
  remove_traces(trace_path);
  auto r = platform::run_process(spec);
  if (!r) return r.status();
  run.seconds = r->seconds;
  run.outcome = r->outcome();
  if (r->ok()) {
    const double left = spec.timeout_s > 0 ? std::max(1.0, spec.timeout_s - r->seconds) : HUGE_VAL;
    PMLAB_TRY(settle_process_traces(run, left));
  }
  if (!r->ok()) {
    remove_traces(trace_path);
    auto text = read_regular_file(log_path, "program output");
    const std::string out = platform::tail_lines(text ? *text : std::string(), 5);
    return error(Errc::failed, "the traced program " + ran(*r, o.program_timeout_s) + (out.empty() ? "" : ":\n" + out));
  }
  if (!fs::exists(trace_path))
    return error(Errc::failed, "the program left no trace: the runtime " + *runtime +
                                   " was not loaded (a statically linked or set-user-ID program ignores LD_PRELOAD)");
  return run;
}

std::vector<std::string> program_environment(persist::Domain domain) {
  std::vector<std::string> env;
  // PMDK on a file that is not DAX would msync instead of flushing: it runs as on real persistent memory,
  // at the domain under test, unless the user chose otherwise.
  if (!std::getenv("PMEM_IS_PMEM_FORCE")) env.push_back("PMEM_IS_PMEM_FORCE=1");
  if (!std::getenv("PMEM2_FORCE_GRANULARITY"))
    env.push_back(std::string("PMEM2_FORCE_GRANULARITY=") + (domain == persist::Domain::eadr ? "BYTE" : "CACHE_LINE"));
  return env;
}

Result<TracedRun> run_or_reuse(const ExecOptions& o, persist::Domain domain, uint32_t schedule,
                               const std::string& scratch, FirstRun& first, const std::string& trap_sites) {
  const std::string domain_name = persist::to_string(domain);
  const std::string later = schedule > 1 ? ".schedule" + std::to_string(schedule) : "";
  const std::string name = domain_name + later;
  const std::string suffix = (o.domains.size() > 1 ? "." + domain_name : "") + later;
  const std::string trace_path = o.trace.empty() ? (fs::path(scratch) / ("trace-" + name)).string() : o.trace + suffix;
  if (!o.trace.empty() && fs::exists(trace_path)) {
    TracedRun reused;
    reused.domain = domain;
    reused.schedule = schedule;
    reused.trace_path = trace_path;
    reused.outcome = "reused " + trace_path;
    return reused;
  }
  std::vector<std::string> put_back;
  if (first.files) {
    auto trace = TraceFile::open(first.trace);
    if (!trace) return trace.status();
    auto notes = first.files->restore(*trace);
    if (!notes) return notes.status();
    put_back = std::move(*notes);
  }
  if (o.setup.empty() && !first.files) first.cutoff = StartingFiles::birth_cutoff();
  auto traced = trace_program(o, domain, trace_path, (fs::path(scratch) / ("program-" + name + ".log")).string(),
                              schedule, trap_sites);
  if (!traced) return traced.status();
  traced->notes.insert(traced->notes.begin(), put_back.begin(), put_back.end());
  return traced;
}

}  // namespace pmlab::crash::exec
