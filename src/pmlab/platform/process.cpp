#include "pmlab/platform/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "pmlab/platform/clock.hpp"

extern char** environ;

namespace pmlab::platform {

std::optional<std::string> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? std::optional(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::string ProcessResult::outcome() const {
  if (timed_out) return "still running after the timeout (killed)";
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with " + std::to_string(exit_code);
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

Result<ProcessResult> run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) return error(Errc::invalid_argument, "no program to run");
  const auto program = find_program(spec.argv[0]);
  if (!program)
    return error(Errc::not_found, spec.argv[0] + ": no such program (not found in PATH, or not executable)");
  const bool capture = spec.output == ProcessSpec::Output::capture;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (capture && (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0))
    return error(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
  int file_fd = -1;
  if (spec.output == ProcessSpec::Output::file) {
    file_fd = open(spec.output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (file_fd < 0) return error(Errc::io_error, "cannot write " + spec.output_file + ": " + std::strerror(errno));
  }
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  auto drop = [&](const std::string& key) {
    std::erase_if(env_strings, [&](const std::string& s) {
      return s.size() > key.size() && s[key.size()] == '=' && s.rfind(key, 0) == 0;
    });
  };
  for (const auto& name : spec.unset_env) drop(name);
  for (const auto& add : spec.set_env) {
    drop(add.substr(0, add.find('=')));
    env_strings.push_back(add);
  }
  // A slot for the pid-dependent variable, filled in the child.
  const size_t pid_at = spec.set_env_with_pid.find("{pid}");
  std::vector<char> pid_env;
  if (pid_at != std::string::npos) {
    drop(spec.set_env_with_pid.substr(0, spec.set_env_with_pid.find('=')));
    pid_env.assign(spec.set_env_with_pid.size() + 32, '\0');
  }
  std::vector<char*> cargv, cenv;
  for (const auto& a : spec.argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env_strings) cenv.push_back(const_cast<char*>(e.c_str()));
  if (!pid_env.empty()) cenv.push_back(pid_env.data());
  cenv.push_back(nullptr);

  const uint64_t start = Clock::monotonic_ns();
  pid_t pid = -1;
  if (pid_env.empty()) {
    // posix_spawn shares the parent's memory until the exec (vfork): no page table is copied, which is
    // most of a fork's cost for a parent holding crash images.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const int out_fd = capture ? out_pipe[1] : file_fd, err_fd = capture ? err_pipe[1] : file_fd;
    if (out_fd >= 0) posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
    if (err_fd >= 0) posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    const int rc = posix_spawn(&pid, program->c_str(), &actions, &attributes, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) {
      for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], file_fd})
        if (fd >= 0) close(fd);
      return error(Errc::not_found, "cannot execute " + *program + ": " + std::strerror(rc));
    }
  } else {
    pid = fork();
    if (pid < 0) return error(Errc::io_error, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    if (!pid_env.empty()) {
      // Async-signal-safe formatting of the child's own pid.
      char digits[24];
      int n = 0;
      for (long v = static_cast<long>(getpid()); v > 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
      size_t o = 0;
      for (size_t i = 0; i < pid_at; ++i) pid_env[o++] = spec.set_env_with_pid[i];
      while (n > 0) pid_env[o++] = digits[--n];
      for (size_t i = pid_at + 5; i < spec.set_env_with_pid.size(); ++i) pid_env[o++] = spec.set_env_with_pid[i];
      pid_env[o] = '\0';
    }
    if (capture) {
      dup2(out_pipe[1], STDOUT_FILENO);
      dup2(err_pipe[1], STDERR_FILENO);
    } else if (file_fd >= 0) {
      dup2(file_fd, STDOUT_FILENO);
      dup2(file_fd, STDERR_FILENO);
    }
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execve(program->c_str(), cargv.data(), cenv.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also from here, so the group exists whichever side runs first
  if (capture) {
    close(out_pipe[1]);
    close(err_pipe[1]);
  }
  if (file_fd >= 0) close(file_fd);
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  ProcessResult result;
  const uint64_t deadline = spec.timeout_s > 0 ? start + static_cast<uint64_t>(spec.timeout_s * 1e9) : UINT64_MAX;
  pollfd fds[3] = {
      {capture ? out_pipe[0] : -1, POLLIN, 0}, {capture ? err_pipe[0] : -1, POLLIN, 0}, {pidfd, POLLIN, 0}};
  char buffer[65536];
  bool exited = false;
  int status = 0;
  for (;;) {
    const bool pipes_open = fds[0].fd >= 0 || fds[1].fd >= 0;
    if (!pipes_open && exited) break;
    if (!pipes_open && !exited && pidfd < 0) {  // no pidfd (Linux < 5.3): wait in short steps
      if (waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
    }
    const uint64_t now = Clock::monotonic_ns();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    const int wait_ms = static_cast<int>(std::min<uint64_t>(
        deadline == UINT64_MAX ? 1000 : (deadline - now) / 1000000 + 1, pidfd < 0 && !pipes_open ? 1 : 1000));
    const int ready = poll(fds, 3, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      pollfd& fd = fds[i];
      if (fd.fd < 0 || !(fd.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fd.fd, buffer, sizeof buffer);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fd.fd);
        fd.fd = -1;
      }
    }
    if (fds[2].fd >= 0 && (fds[2].revents & POLLIN)) {
      // The child exited; its pipes may still be held open by a grandchild, so stop waiting on them soon.
      if (waitpid(pid, &status, 0) == pid) exited = true;
      fds[2].fd = -1;
      if (capture) {
        // Drain what is already written, without waiting for descendants that keep the pipes.
        for (int i = 0; i < 2; ++i) {
          if (fds[i].fd < 0) continue;
          fcntl(fds[i].fd, F_SETFL, O_NONBLOCK);
          ssize_t n;
          while ((n = read(fds[i].fd, buffer, sizeof buffer)) > 0)
            (i == 0 ? result.out : result.err).append(buffer, static_cast<size_t>(n));
          close(fds[i].fd);
          fds[i].fd = -1;
        }
      }
    }
  }
  for (int i = 0; i < 2; ++i)
    if (fds[i].fd >= 0) close(fds[i].fd);
  if (result.timed_out) kill(-pid, SIGKILL);
  if (!exited)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (pidfd >= 0) close(pidfd);
  result.seconds = static_cast<double>(Clock::monotonic_ns() - start) * 1e-9;
  if (!result.timed_out) {
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    else result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return result;
}

}  // namespace pmlab::platform
