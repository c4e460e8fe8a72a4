// A graceful stop on SIGINT, SIGTERM, SIGHUP and SIGQUIT for long commands (pmlab run, pmlab crash exec).
//
// The first signal only raises a flag: the command polls it between runs and inside its timed loops,
// finishes what it can cheaply finish, writes what it has (marked interrupted), cleans up and exits
// with 128 + the signal's number. A second signal means "now": the handler unlinks the registered
// temporary file itself (unlink is async-signal-safe), kills the process groups of the children being
// waited for (a terminal's ^C does not reach them: each runs in a group of its own) and exits at once.
// The same signal sent again by the same process within a quarter of a second is not a second one:
// timeout(1) signals the command and then its process group, and a command it bounds should still stop
// cleanly.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <csignal>
#include <string>

namespace pmlab {

namespace detail {
inline std::atomic<int> g_stop_signal{0};
}

// The number of the first stop signal received while a StopSignals scope was active, or 0.
inline int stop_signal() noexcept { return detail::g_stop_signal.load(std::memory_order_relaxed); }
inline bool stop_requested() noexcept { return stop_signal() != 0; }

// Installs the handlers for its lifetime and restores the previous ones afterwards. Scopes nest: the
// outermost one installs and restores. Not for concurrent use from several threads.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The file a second signal removes before exiting (a temporary pool); empty to forget it.
  static void set_file_to_remove(const std::string& path);

  // A child's process group that a second signal kills, while it is waited for (platform/process.cpp);
  // the first 64 at once are kept. Safe from any thread.
  static void note_child_group(pid_t group) noexcept;
  static void forget_child_group(pid_t group) noexcept;

 private:
  struct sigaction previous_[4];
};

// "SIGINT" for SIGINT, "signal N" for others.
std::string signal_name(int signo);

}  // namespace pmlab
