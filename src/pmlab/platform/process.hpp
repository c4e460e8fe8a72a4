// Other programs, run as children: peer tools measured beside ours (fio, likwid-bench), a user's program
// under the crash tracer and the user's checker on each crash image. One runner, so every caller gets the
// same environment handling, output capture, timeout and clean-up.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::platform {

// The program's full path from PATH (a name with a slash is taken as it is), or nothing.
std::optional<std::string> find_program(const std::string& name);

// Why find_program finds no program `name`: "no such program", "not executable" or "a directory", with
// where it looked, for an error that lets the user fix the right thing.
std::string why_no_program(const std::string& name);

struct ProcessSpec {
  std::vector<std::string> argv;       // argv[0] is looked up in PATH
  std::vector<std::string> set_env;    // NAME=value, replacing the inherited value
  std::vector<std::string> unset_env;  // NAMEs removed from the inherited environment
  enum class Output { inherit, capture, file } output = Output::capture;
  std::string output_file;  // Output::file: stdout and stderr both go here (created or truncated)
  double timeout_s = 0;     // 0: none; past it the child's whole process group is killed
  // Runs in the child after fork, before exec (e.g. to note its own pid in the environment it passes on):
  // appended to set_env with the child's pid formatted in place of "{pid}".
  std::string set_env_with_pid;
};

struct ProcessResult {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false;
  int stopped_by = 0;    // the stop signal pmlab got (stop_signal.hpp) while it waited: the child was killed
  std::string out, err;  // Output::capture
  double seconds = 0;
  bool ok() const noexcept { return !timed_out && stopped_by == 0 && signal == 0 && exit_code == 0; }
  // "exited with 1", "killed by signal 11 (SIGSEGV)", "still running after 10 s"
  std::string outcome() const;
};

// Runs it to the end (or the timeout). An error only when it cannot be started; its own failure is in
// the result. The child has its own process group and reads /dev/null. A stop signal that pmlab gets
// meanwhile (under a StopSignals scope) kills the child's process group, which is out of the reach of a
// terminal's ^C, within a second: a long program or checker does not go on once pmlab is asked to stop.
Result<ProcessResult> run_process(const ProcessSpec& spec);

// A child that stays and talks (line_server.hpp): started as run_process starts one (its own process group,
// the same environment), its stdin and stdout both one end of a socket pair whose other end `socket` is, and
// its stderr appended to `spec.output_file` ("": /dev/null). A socket, not pipes: a write to a child that
// is gone fails with EPIPE (send's MSG_NOSIGNAL) instead of raising SIGPIPE in this process.
struct TalkingChild {
  int pid = -1;
  int socket = -1;
};
Result<TalkingChild> start_talking_child(const ProcessSpec& spec);

// While it lives, the processes this thread starts, and those started by threads it creates meanwhile, run
// without address-space randomization, as a debugger runs the program it debugs (personality
// ADDR_NO_RANDOMIZE, which Linux keeps per thread; this process keeps the layout it has): a program that
// stores pointers lays them out alike from one run to the next. Threads that exist already keep their
// setting. The kernel may refuse (a container's seccomp filter may): ok() is then false and why() says so.
// This thread's setting from before comes back at its end.
class ProcessesWithoutAslr {
 public:
  ProcessesWithoutAslr();
  ~ProcessesWithoutAslr();
  ProcessesWithoutAslr(const ProcessesWithoutAslr&) = delete;
  ProcessesWithoutAslr& operator=(const ProcessesWithoutAslr&) = delete;

  bool ok() const noexcept { return why_.empty(); }
  const std::string& why() const noexcept { return why_; }

 private:
  std::optional<int> before_;  // the personality it restores at its end; none: it changed nothing
  std::string why_;
};

// The Python interpreter pmlab runs (the report's renderer, --check-python's server): $PMLAB_PYTHON, else
// python3.
std::string python_interpreter();

// The last `lines` lines of `text` (for a failure report).
std::string tail_lines(const std::string& text, size_t lines);

}  // namespace pmlab::platform
