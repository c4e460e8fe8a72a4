#include "pmlab/profile/perf.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

extern char** environ;

namespace pmlab::profile {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string last_line(const std::string& file) {
  std::ifstream in(file);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

Result<int> run_capture(const std::vector<std::string>& argv, std::string& out, const std::string& err_file) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return error(Errc::io_error, "pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.empty() ? "/dev/null" : err_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return error(Errc::io_error, "cannot start " + argv[0]);
  }
  char buf[1 << 16];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

PerfSupport detect_perf() {
  PerfSupport s;
  if (const char* forced = std::getenv("PMLAB_PERF")) {
    s.perf_path = forced;
    if (access(forced, X_OK) != 0) {
      s.reason = std::string("perf not found: PMLAB_PERF=") + forced + " is not an executable";
      return s;
    }
  } else {
    s.perf_path = find_in_path("perf");
    if (s.perf_path.empty()) {
      s.reason = "perf not found in PATH (install linux-perf)";
      return s;
    }
  }
  int paranoid = 2;
  if (std::ifstream in("/proc/sys/kernel/perf_event_paranoid"); in) in >> paranoid;
  if (geteuid() != 0 && paranoid > 0) {
    s.reason = "no permission: kernel.perf_event_paranoid=" + std::to_string(paranoid) +
               " forbids system-wide sampling for a non-root user (set it to 0, or run as root)";
    return s;
  }
  s.available = true;
  return s;
}

Recording::~Recording() {
  if (child_ > 0) {
    kill(child_, SIGKILL);
    int status;
    waitpid(child_, &status, 0);
  }
  if (ctl_fd_ >= 0) close(ctl_fd_);
  if (ack_fd_ >= 0) close(ack_fd_);
}

Status Recording::fail(const std::string& what) {
  std::string detail = last_line(log_);
  return error(Errc::unsupported, "perf record " + what + (detail.empty() ? "" : ": " + detail));
}

namespace {
// Sends a control command and waits for perf's "ack".
bool command(int ctl, int ack, const char* text, Clock::time_point deadline) {
  const size_t len = std::char_traits<char>::length(text);
  if (write(ctl, text, len) != static_cast<ssize_t>(len)) return false;
  std::string got;
  while (Clock::now() < deadline) {
    pollfd p{ack, POLLIN, 0};
    if (poll(&p, 1, 20) > 0 && (p.revents & POLLIN)) {
      char buf[16];
      ssize_t n = read(ack, buf, sizeof buf);
      if (n > 0) got.append(buf, static_cast<size_t>(n));
      if (got.find("ack") != std::string::npos) return true;
    } else if (p.revents & POLLHUP) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // perf has not opened its end yet
    }
  }
  return false;
}
}  // namespace

Result<std::unique_ptr<Recording>> Recording::start(const PerfSupport& perf, const std::string& work_dir,
                                                    int frequency_hz) {
  if (!perf.available) return error(Errc::unsupported, perf.reason);
  auto r = std::make_unique<Recording>();
  r->perf_path_ = perf.perf_path;
  r->dir_ = work_dir;
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  if (ec) return error(Errc::io_error, "cannot create " + work_dir + ": " + ec.message());
  const std::string ctl = work_dir + "/ctl", ack = work_dir + "/ack";
  r->data_ = work_dir + "/perf.data";
  r->log_ = work_dir + "/perf-record.log";
  fs::remove(ctl, ec);
  fs::remove(ack, ec);
  if (mkfifo(ctl.c_str(), 0600) != 0 || mkfifo(ack.c_str(), 0600) != 0)
    return error(Errc::io_error, "cannot create control FIFOs in " + work_dir);
  std::vector<std::string> argv = {
      perf.perf_path, "record",       "-q", "-e", perf.event, "-F",        std::to_string(frequency_hz),
      "-a",           "--call-graph", "fp", "-D", "-1",       "--control", "fifo:" + ctl + "," + ack,
      "-o",           r->data_};
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, r->log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  int rc = posix_spawn(&r->child_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    r->child_ = -1;
    return error(Errc::unsupported, "cannot start " + perf.perf_path);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  // perf opens the control FIFO for reading once it has set up its events.
  while ((r->ctl_fd_ = open(ctl.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
    int status = 0;
    if (waitpid(r->child_, &status, WNOHANG) == r->child_) {
      r->child_ = -1;
      return r->fail("exited before sampling started");
    }
    if (Clock::now() > deadline) return r->fail("did not start within 20 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r->ack_fd_ = open(ack.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (r->ack_fd_ < 0) return error(Errc::io_error, "cannot open " + ack);
  if (!command(r->ctl_fd_, r->ack_fd_, "enable\n", deadline)) return r->fail("did not acknowledge 'enable'");
  return r;
}

Status Recording::stop() {
  if (child_ <= 0) return error(Errc::unsupported, "perf record is not running");
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  bool disabled = command(ctl_fd_, ack_fd_, "disable\n", deadline);
  kill(child_, SIGINT);
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(child_, &status, WNOHANG)) == 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (done != child_) return fail("did not stop within 20 s");
  child_ = -1;
  if (!disabled) return fail("did not acknowledge 'disable'");
  if (!fs::exists(data_)) return fail("wrote no data file");
  return Status::success();
}

Result<std::vector<Sample>> Recording::samples() const {
  std::string text;
  auto rc = run_capture({perf_path_, "script", "-i", data_, "--pid", std::to_string(getpid()), "-F",
                         "tid,period,ip,sym,symoff,dso", "--no-demangle"},
                        text, dir_ + "/perf-script.log");
  if (!rc) return rc.status();
  if (*rc != 0) return error(Errc::unsupported, "perf script failed: " + last_line(dir_ + "/perf-script.log"));
  return parse_perf_script(text);
}

PersistSites persist_sites_of_self() {
  std::string objdump = find_in_path("objdump");
  if (objdump.empty()) return {};
  std::error_code ec;
  std::string exe = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) return {};
  std::string text;
  auto rc = run_capture({objdump, "-d", "--no-show-raw-insn", exe}, text, "");
  if (!rc || *rc != 0) return {};
  return parse_objdump(text);
}

}  // namespace pmlab::profile
