#include "pmlab/platform/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/personality.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <utility>

#include "pmlab/common/stop_signal.hpp"
#include "pmlab/platform/clock.hpp"

extern char** environ;

namespace pmlab::platform {

namespace {
// Where a program `name` may be: the name itself where it has a slash, else each PATH directory's entry.
std::vector<std::string> places_of(const std::string& name) {
  if (name.find('/') != std::string::npos) return {name};
  std::vector<std::string> places;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty()) places.push_back(dir + "/" + name);
  return places;
}

// What stands at `path` that cannot be run, or nothing where no file is there.
std::optional<std::string> not_runnable(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return S_ISDIR(st.st_mode) ? "a directory, not a program" : "not executable (no execute permission)";
}
}  // namespace

std::optional<std::string> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  for (const std::string& place : places_of(name))
    if (access(place.c_str(), X_OK) == 0) return place;
  return std::nullopt;
}

std::string why_no_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name + ": " + not_runnable(name).value_or("no such program");
  for (const std::string& place : places_of(name))
    if (auto why = not_runnable(place)) return name + ": " + place + " is " + *why;
  return name + ": no such program (not found in PATH)";
}

std::string ProcessResult::outcome() const {
  if (timed_out) return "still running after the timeout (killed)";
  if (stopped_by != 0) return "killed as pmlab stopped on " + signal_name(stopped_by);
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with " + std::to_string(exit_code);
}

ProcessesWithoutAslr::ProcessesWithoutAslr() {
  const int now = personality(0xffffffff);
  if (now == -1) {
    why_ = std::string("personality: ") + std::strerror(errno);
  } else if ((now & ADDR_NO_RANDOMIZE) == 0) {
    if (personality(static_cast<unsigned long>(now) | ADDR_NO_RANDOMIZE) == -1)
      why_ = std::string("personality: ") + std::strerror(errno);
    else before_ = now;
  }
}

ProcessesWithoutAslr::~ProcessesWithoutAslr() {
  if (before_) personality(static_cast<unsigned long>(*before_));
}

std::string tail_lines(const std::string& text, size_t lines) {
  size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  size_t begin = end;
  for (size_t n = 0; n < lines && begin > 0; ++n) {
    const size_t nl = text.rfind('\n', begin - 1);
    begin = nl == std::string::npos ? 0 : nl + (n + 1 < lines ? 0 : 1);
    if (nl == std::string::npos) break;
  }
  while (begin < end && text[begin] == '\n') ++begin;
  return text.substr(begin, end - begin);
}

namespace {

// The pipes or the file the child's output goes to.
struct ChildOutput {
  bool capture = false;
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int file = -1;

  void close_all() {  // once each, however often called
    for (int* fd : {&out[0], &out[1], &err[0], &err[1], &file})
      if (*fd >= 0) close(std::exchange(*fd, -1));
  }
};

Result<ChildOutput> open_output(const ProcessSpec& spec) {
  ChildOutput o;
  o.capture = spec.output == ProcessSpec::Output::capture;
  if (o.capture && (pipe2(o.out, O_CLOEXEC) != 0 || pipe2(o.err, O_CLOEXEC) != 0)) {
    const int e = errno;
    o.close_all();
    return error(Errc::io_error, std::string("pipe: ") + std::strerror(e));
  }
  if (spec.output == ProcessSpec::Output::file) {
    o.file = open(spec.output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o.file < 0) return error(Errc::io_error, "cannot write " + spec.output_file + ": " + std::strerror(errno));
  }
  return o;
}

// The child's arguments and environment, built before fork: after it, only async-signal-safe calls.
struct ChildImage {
  std::vector<std::string> env;
  std::vector<char> pid_env;  // the pid-dependent variable, filled in the child
  size_t pid_at = std::string::npos;
  std::vector<char*> argv, envp;
};

ChildImage child_image(const ProcessSpec& spec) {
  ChildImage image;
  for (char** e = environ; *e != nullptr; ++e) image.env.emplace_back(*e);
  auto drop = [&](const std::string& key) {
    std::erase_if(image.env, [&](const std::string& s) {
      return s.size() > key.size() && s[key.size()] == '=' && s.rfind(key, 0) == 0;
    });
  };
  for (const auto& name : spec.unset_env) drop(name);
  for (const auto& add : spec.set_env) {
    drop(add.substr(0, add.find('=')));
    image.env.push_back(add);
  }
  image.pid_at = spec.set_env_with_pid.find("{pid}");
  if (image.pid_at != std::string::npos) {
    drop(spec.set_env_with_pid.substr(0, spec.set_env_with_pid.find('=')));
    image.pid_env.assign(spec.set_env_with_pid.size() + 32, '\0');
  }
  for (const auto& a : spec.argv) image.argv.push_back(const_cast<char*>(a.c_str()));
  image.argv.push_back(nullptr);
  for (const auto& e : image.env) image.envp.push_back(const_cast<char*>(e.c_str()));
  if (!image.pid_env.empty()) image.envp.push_back(image.pid_env.data());
  image.envp.push_back(nullptr);
  return image;
}

// In the forked child: the variable with the child's own pid, formatted async-signal-safely.
void fill_pid_env(ChildImage& image, const std::string& pattern) {
  char digits[24];
  int n = 0;
  for (long v = static_cast<long>(getpid()); v > 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
  size_t o = 0;
  for (size_t i = 0; i < image.pid_at; ++i) image.pid_env[o++] = pattern[i];
  while (n > 0) image.pid_env[o++] = digits[--n];
  for (size_t i = image.pid_at + 5; i < pattern.size(); ++i) image.pid_env[o++] = pattern[i];
  image.pid_env[o] = '\0';
}

// posix_spawn shares the parent's memory until the exec (vfork): no page table is copied, which is most of
// a fork's cost for a parent holding crash images. The child's stdin, stdout and stderr are the descriptors
// given (-1: /dev/null for stdin, this process's own for the others); it leads a process group of its own.
Result<pid_t> spawn_child(const std::string& program, ChildImage& image, int in_fd, int out_fd, int err_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (in_fd >= 0) posix_spawn_file_actions_adddup2(&actions, in_fd, STDIN_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0) posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  if (err_fd >= 0) posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, &attributes, image.argv.data(), image.envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) return error(Errc::not_found, "cannot execute " + program + ": " + std::strerror(rc));
  return pid;
}

// A child whose environment names its own pid is forked, since posix_spawn cannot run code in the child.
Result<pid_t> fork_child(const std::string& program, const ProcessSpec& spec, ChildImage& image, ChildOutput& output) {
  const pid_t pid = fork();
  if (pid < 0) return error(Errc::io_error, std::string("fork: ") + std::strerror(errno));
  if (pid > 0) return pid;
  setpgid(0, 0);
  fill_pid_env(image, spec.set_env_with_pid);
  if (output.capture) {
    dup2(output.out[1], STDOUT_FILENO);
    dup2(output.err[1], STDERR_FILENO);
  } else if (output.file >= 0) {
    dup2(output.file, STDOUT_FILENO);
    dup2(output.file, STDERR_FILENO);
  }
  const int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  execve(program.c_str(), image.argv.data(), image.envp.data());
  _exit(127);
}

// Reads the child's output until it exits and its pipes close, or until the deadline.
class Waiter {
 public:
  Waiter(pid_t pid, const ChildOutput& output, uint64_t deadline, ProcessResult& result)
      : pid_(pid), pidfd_(static_cast<int>(syscall(SYS_pidfd_open, pid, 0))), deadline_(deadline), result_(result) {
    fds_[0] = {output.capture ? output.out[0] : -1, POLLIN, 0};
    fds_[1] = {output.capture ? output.err[0] : -1, POLLIN, 0};
    fds_[2] = {pidfd_, POLLIN, 0};
  }

  // The child's wait status; kills the process group after a timeout.
  int wait() {
    while (step()) {}
    for (int i = 0; i < 2; ++i) close_pipe(i);
    if (result_.timed_out || result_.stopped_by != 0) kill(-pid_, SIGKILL);
    if (!exited_)
      while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {}
    if (pidfd_ >= 0) close(pidfd_);
    return status_;
  }

 private:
  bool pipes_open() const { return fds_[0].fd >= 0 || fds_[1].fd >= 0; }

  void close_pipe(int i) {
    if (fds_[i].fd >= 0) close(fds_[i].fd);
    fds_[i].fd = -1;
  }

  void append(int i, ssize_t n) { (i == 0 ? result_.out : result_.err).append(buffer_, static_cast<size_t>(n)); }

  // One poll; false when waiting is over.
  bool step() {
    if (!pipes_open() && exited_) return false;
    if (!pipes_open() && pidfd_ < 0 && waitpid(pid_, &status_, WNOHANG) == pid_) {
      exited_ = true;  // no pidfd (Linux < 5.3): waited for in short steps
      return false;
    }
    const uint64_t now = Clock::monotonic_ns();
    if (now >= deadline_) {
      result_.timed_out = true;
      return false;
    }
    if (!exited_ && stop_requested()) {
      result_.stopped_by = stop_signal();
      return false;
    }
    const int wait_ms = static_cast<int>(std::min<uint64_t>(
        deadline_ == UINT64_MAX ? 1000 : (deadline_ - now) / 1000000 + 1, pidfd_ < 0 && !pipes_open() ? 1 : 1000));
    if (poll(fds_, 3, wait_ms) < 0 && errno != EINTR) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds_[i].fd < 0 || !(fds_[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds_[i].fd, buffer_, sizeof buffer_);
      if (n > 0) append(i, n);
      else if (n == 0 || errno != EINTR) close_pipe(i);
    }
    if (fds_[2].fd >= 0 && (fds_[2].revents & POLLIN)) on_exit();
    return true;
  }

  // The child exited; its pipes may still be held open by a grandchild, so what is already written is
  // drained without waiting for descendants that keep the pipes.
  void on_exit() {
    if (waitpid(pid_, &status_, 0) == pid_) exited_ = true;
    fds_[2].fd = -1;
    for (int i = 0; i < 2; ++i) {
      if (fds_[i].fd < 0) continue;
      fcntl(fds_[i].fd, F_SETFL, O_NONBLOCK);
      ssize_t n;
      while ((n = read(fds_[i].fd, buffer_, sizeof buffer_)) > 0) append(i, n);
      close_pipe(i);
    }
  }

  pid_t pid_;
  int pidfd_;
  uint64_t deadline_;
  ProcessResult& result_;
  pollfd fds_[3];
  bool exited_ = false;
  int status_ = 0;
  char buffer_[65536];
};

}  // namespace

std::string python_interpreter() {
  const char* own = std::getenv("PMLAB_PYTHON");
  return own != nullptr && *own != '\0' ? own : "python3";
}

Result<TalkingChild> start_talking_child(const ProcessSpec& spec) {
  if (spec.argv.empty()) return error(Errc::invalid_argument, "no program to run");
  const auto program = find_program(spec.argv[0]);
  if (!program) return error(Errc::not_found, why_no_program(spec.argv[0]));
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return error(Errc::io_error, std::string("socketpair: ") + std::strerror(errno));
  const int err = spec.output_file.empty()
                      ? open("/dev/null", O_WRONLY | O_CLOEXEC)
                      : open(spec.output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (err < 0) {
    const int e = errno;
    close(pair[0]);
    close(pair[1]);
    return error(Errc::io_error, "cannot write " + spec.output_file + ": " + std::strerror(e));
  }
  ChildImage image = child_image(spec);
  auto pid = spawn_child(*program, image, pair[1], pair[1], err);
  close(pair[1]);
  close(err);
  if (!pid) {
    close(pair[0]);
    return pid.status();
  }
  setpgid(*pid, *pid);
  return TalkingChild{*pid, pair[0]};
}

Result<ProcessResult> run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) return error(Errc::invalid_argument, "no program to run");
  const auto program = find_program(spec.argv[0]);
  if (!program) return error(Errc::not_found, why_no_program(spec.argv[0]));
  auto output = open_output(spec);
  if (!output) return output.status();
  ChildImage image = child_image(spec);

  const uint64_t start = Clock::monotonic_ns();
  auto pid = image.pid_env.empty() ? spawn_child(*program, image, -1, output->capture ? output->out[1] : output->file,
                                                 output->capture ? output->err[1] : output->file)
                                   : fork_child(*program, spec, image, *output);
  if (!pid) {
    output->close_all();
    return pid.status();
  }
  setpgid(*pid, *pid);  // also from here, so the group exists whichever side runs first
  for (int fd : {output->out[1], output->err[1], output->file})
    if (fd >= 0) close(fd);
  ProcessResult result;
  const uint64_t deadline = spec.timeout_s > 0 ? start + static_cast<uint64_t>(spec.timeout_s * 1e9) : UINT64_MAX;
  StopSignals::note_child_group(*pid);
  const int status = Waiter(*pid, *output, deadline, result).wait();
  StopSignals::forget_child_group(*pid);
  result.seconds = static_cast<double>(Clock::monotonic_ns() - start) * 1e-9;
  if (!result.timed_out) {
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    else result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return result;
}

}  // namespace pmlab::platform
