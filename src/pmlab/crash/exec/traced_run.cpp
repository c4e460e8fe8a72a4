// The traced run: the program started under pmlab's runtime (src/pmlab-trace), after --setup, in the
// environment a program under test gets.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "pmlab/common/files.hpp"
#include "pmlab/crash/exec/campaign.hpp"
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

Result<TracedRun> trace_program(const ExecOptions& o, persist::Domain domain, const std::string& trace_path,
                                const std::string& log_path) {
  auto runtime = find_runtime();
  if (!runtime) return runtime.status();
  TracedRun run;
  run.domain = domain;
  run.trace_path = trace_path;
  if (!o.setup.empty()) {
    platform::ProcessSpec setup;
    setup.argv = {"/bin/sh", "-c", o.setup};
    setup.timeout_s = o.timeout_s * 60;
    auto r = platform::run_process(setup);
    if (!r) return r.status();
    if (!r->ok())
      return error(Errc::failed,
                   "--setup " + r->outcome() + ": " + platform::tail_lines(r->err.empty() ? r->out : r->err, 3));
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
  for (auto& e : program_environment(domain)) spec.set_env.push_back(std::move(e));
  spec.set_env_with_pid = "PMLAB_TRACE_PID={pid}";
  spec.output = platform::ProcessSpec::Output::file;
  spec.output_file = log_path;
  spec.timeout_s = o.timeout_s * 60;
  std::error_code ec;
  fs::remove(trace_path, ec);
  auto r = platform::run_process(spec);
  if (!r) return r.status();
  run.seconds = r->seconds;
  run.outcome = r->outcome();
  if (!r->ok()) {
    auto text = read_regular_file(log_path, "program output");
    const std::string out = platform::tail_lines(text ? *text : std::string(), 5);
    return error(Errc::failed, "the traced program " + r->outcome() + (out.empty() ? "" : ":\n" + out));
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

}  // namespace pmlab::crash::exec
