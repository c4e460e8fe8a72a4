#include "pmlab/common/stop_signal.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace pmlab {
namespace {

constexpr int kStopSignals[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Read by the handler: a fixed buffer, so nothing allocates or locks in signal context. The flag says
// whether the buffer holds a complete path.
char g_file_to_remove[4096];
std::atomic<bool> g_have_file_to_remove{false};

// The process groups of the children being waited for: a second signal kills them (kill is
// async-signal-safe). 0: a free slot.
constexpr size_t kChildGroups = 64;
std::atomic<pid_t> g_child_groups[kChildGroups];

// The process that sent the first stop signal (0: the kernel, as for a terminal's ^C) and when it came.
std::atomic<pid_t> g_first_sender{0};
std::atomic<int64_t> g_first_ns{0};
// timeout(1) sends its signal to the command and then to the command's whole process group, so the command
// gets it twice at once: the same signal from the same process within this window is that one request.
constexpr int64_t kRepeatWindowNs = 250'000'000;

int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void on_stop_signal(int signo, siginfo_t* info, void*) {
  const pid_t sender = info != nullptr && info->si_code == SI_USER ? info->si_pid : 0;
  int expected = 0;
  if (detail::g_stop_signal.compare_exchange_strong(expected, signo)) {
    g_first_sender.store(sender);
    g_first_ns.store(monotonic_ns());
    return;
  }
  if (sender != 0 && expected == signo && sender == g_first_sender.load() &&
      monotonic_ns() - g_first_ns.load() < kRepeatWindowNs)
    return;
  if (g_have_file_to_remove.load()) ::unlink(g_file_to_remove);
  for (auto& group : g_child_groups)
    if (const pid_t g = group.load(); g > 0) ::kill(-g, SIGKILL);
  _exit(128 + expected);
}

// Scopes nest (the CLI holds one around the runner, which holds its own): only the outermost installs
// and restores the handlers, so a signal between the two never meets the default action.
int g_depth = 0;

}  // namespace

StopSignals::StopSignals() {
  if (g_depth++ > 0) return;
  detail::g_stop_signal.store(0);
  struct sigaction action {};
  action.sa_sigaction = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: code that does not expect EINTR keeps working; the flag is polled where it matters.
  action.sa_flags = SA_RESTART | SA_SIGINFO;
  for (int i = 0; i < 4; ++i) sigaction(kStopSignals[i], &action, &previous_[i]);
}

StopSignals::~StopSignals() {
  if (--g_depth > 0) return;
  for (int i = 0; i < 4; ++i) sigaction(kStopSignals[i], &previous_[i], nullptr);
  set_file_to_remove("");
}

void StopSignals::set_file_to_remove(const std::string& path) {
  g_have_file_to_remove.store(false);
  if (path.empty() || path.size() >= sizeof g_file_to_remove) return;
  std::memcpy(g_file_to_remove, path.c_str(), path.size() + 1);
  g_have_file_to_remove.store(true);
}

void StopSignals::note_child_group(pid_t group) noexcept {
  for (auto& slot : g_child_groups) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, group)) return;
  }
}

void StopSignals::forget_child_group(pid_t group) noexcept {
  for (auto& slot : g_child_groups) {
    pid_t noted = group;
    if (slot.compare_exchange_strong(noted, 0)) return;
  }
}

std::string signal_name(int signo) {
  switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    default: return "signal " + std::to_string(signo);
  }
}

}  // namespace pmlab
