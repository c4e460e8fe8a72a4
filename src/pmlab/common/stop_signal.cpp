#include "pmlab/common/stop_signal.hpp"

#include <unistd.h>

#include <cstring>

namespace pmlab {
namespace {

constexpr int kStopSignals[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Read by the handler: a fixed buffer, so nothing allocates or locks in signal context. The flag says
// whether the buffer holds a complete path.
char g_file_to_remove[4096];
std::atomic<bool> g_have_file_to_remove{false};

void on_stop_signal(int signo) {
  int expected = 0;
  if (detail::g_stop_signal.compare_exchange_strong(expected, signo)) return;
  if (g_have_file_to_remove.load()) ::unlink(g_file_to_remove);
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
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: code that does not expect EINTR keeps working; the flag is polled where it matters.
  action.sa_flags = SA_RESTART;
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
