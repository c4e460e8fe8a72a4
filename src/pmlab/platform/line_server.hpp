// A child that answers request after request: a line written to its stdin, one line read back from its
// stdout within a time limit. For work whose every item would otherwise start a process (an interpreter's
// start costs tens of milliseconds, the item a fraction of one). It has its own process group, killed when
// the server is stopped, times out or is destroyed, and on a stop signal (common/stop_signal.hpp): the first
// ends an ask within a second, the second kills the group as pmlab exits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::platform {

class LineServer {
 public:
  struct Answer {
    bool answered = false;
    std::string line;  // without its newline
    // Why there is no answer: the child's end ("exited with 1", "killed by signal 11 (SIGSEGV)") or "still
    // running after 10 s".
    std::string why;
    bool timed_out = false;
    int exit_code = -1;  // where it exited
  };

  // `spec.output_file` receives its stderr (appended); its timeout is not used (each ask has its own).
  static Result<std::unique_ptr<LineServer>> start(const ProcessSpec& spec);
  ~LineServer();
  LineServer(const LineServer&) = delete;
  LineServer& operator=(const LineServer&) = delete;

  // Sends `request` and a newline, and reads one line. Anything the child wrote before the request is
  // dropped. Without an answer the child is gone (or killed, past `timeout_s` or on a stop signal): ask no
  // more.
  Answer ask(std::string_view request, double timeout_s);
  bool running() const noexcept { return pid_ > 0; }
  // Closes its stdin, gives it a moment to end of itself, then kills its process group.
  void stop();

 private:
  explicit LineServer(TalkingChild child) : pid_(child.pid), socket_(child.socket) {}
  enum class Ending { exited, timed_out, stopped };
  Answer ended(Ending how);
  // Waits for the child's end (killing its process group first where `kill_first`), kills what it left in its
  // group, reaps it and closes the socket; its wait status.
  int reap(bool kill_first);

  int pid_ = -1;
  int socket_ = -1;
  std::string pending_;  // read past the last answer
};

}  // namespace pmlab::platform
