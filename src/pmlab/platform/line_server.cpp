#include "pmlab/platform/line_server.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "pmlab/common/stop_signal.hpp"
#include "pmlab/platform/clock.hpp"

namespace pmlab::platform {

Result<std::unique_ptr<LineServer>> LineServer::start(const ProcessSpec& spec) {
  auto child = start_talking_child(spec);
  if (!child) return child.status();
  StopSignals::note_child_group(child->pid);
  return std::unique_ptr<LineServer>(new LineServer(*child));
}

LineServer::~LineServer() { stop(); }

LineServer::Answer LineServer::ask(std::string_view request, double timeout_s) {
  if (pid_ <= 0) return {.answered = false, .line = {}, .why = "not running", .timed_out = false, .exit_code = -1};
  if (stop_requested()) return ended(Ending::stopped);
  pending_.clear();
  std::string text(request);
  text += '\n';
  for (size_t sent = 0; sent < text.size();) {
    const ssize_t n = ::send(socket_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ended(Ending::exited);  // it is gone: its end says why
    sent += static_cast<size_t>(n);
  }
  const uint64_t deadline = Clock::monotonic_ns() + static_cast<uint64_t>(timeout_s * 1e9);
  char buffer[4096];
  for (;;) {
    if (const size_t newline = pending_.find('\n'); newline != std::string::npos) {
      Answer a{.answered = true, .line = pending_.substr(0, newline), .why = {}, .timed_out = false, .exit_code = -1};
      if (!a.line.empty() && a.line.back() == '\r') a.line.pop_back();
      pending_.erase(0, newline + 1);
      return a;
    }
    const uint64_t now = Clock::monotonic_ns();
    if (now >= deadline) return ended(Ending::timed_out);
    // A stop signal interrupts the poll; the slice bounds the wait where it came just before it.
    if (stop_requested()) return ended(Ending::stopped);
    pollfd fd{socket_, POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(std::min<uint64_t>((deadline - now) / 1000000 + 1, 1000)));
    if (ready < 0 && errno != EINTR) return ended(Ending::exited);
    if (ready <= 0) continue;
    const ssize_t n = ::read(socket_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ended(Ending::exited);
    pending_.append(buffer, static_cast<size_t>(n));
  }
}

LineServer::Answer LineServer::ended(Ending how) {
  const int status = reap(how != Ending::exited);
  ProcessResult r;
  r.timed_out = how == Ending::timed_out;
  if (how == Ending::stopped) r.stopped_by = stop_signal();
  else if (how == Ending::exited && WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  else if (how == Ending::exited) r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return {.answered = false, .line = {}, .why = r.outcome(), .timed_out = r.timed_out, .exit_code = r.exit_code};
}

void LineServer::stop() {
  if (pid_ <= 0) return;
  ::shutdown(socket_, SHUT_WR);  // its stdin ends: a server reading requests in a loop ends of itself
  bool exited = false;
  for (int waited_ms = 0; waited_ms < 200 && !exited; waited_ms += 5) {
    siginfo_t info{};
    exited = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
    if (!exited) ::usleep(5000);
  }
  reap(!exited);
}

int LineServer::reap(bool kill_first) {
  if (kill_first) ::kill(-pid_, SIGKILL);
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
  ::kill(-pid_, SIGKILL);  // what it started and left behind: while it is not reaped, no other group takes its id
  StopSignals::forget_child_group(pid_);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  ::close(socket_);
  pid_ = socket_ = -1;
  return status;
}

}  // namespace pmlab::platform
