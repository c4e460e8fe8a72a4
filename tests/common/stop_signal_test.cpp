#include "pmlab/common/stop_signal.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace pmlab {
namespace {

// A child of this process that sleeps for 30 s, the leader of a process group of its own.
pid_t sleeping_group() {
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    setpgid(0, 0);
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(sleeper, sleeper);  // also from here, so the group exists whichever side runs first
  return sleeper;
}

// The exit status of a process that notes `group` (and forgets it again where `forget`) and then gets SIGINT
// twice.
int stopped_twice(pid_t group, bool forget) {
  const pid_t stopped = fork();
  if (stopped == 0) {
    const StopSignals stop;
    StopSignals::note_child_group(group);
    if (forget) StopSignals::forget_child_group(group);
    raise(SIGINT);  // the first: a flag
    raise(SIGINT);  // the second: now
    _exit(0);
  }
  int status = 0;
  waitpid(stopped, &status, 0);
  return status;
}

// A child pmlab waits for runs in a process group of its own, out of reach of a terminal's ^C; run_process
// notes the group while it waits. A second stop signal exits at once, and kills every noted group first.
TEST(StopSignals, ASecondSignalKillsTheNotedChildGroupsBeforeItExits) {
  const pid_t sleeper = sleeping_group();
  int status = stopped_twice(sleeper, false);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) << status;
  waitpid(sleeper, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the sleeping child ended so: " << status;
}

// A group no longer waited for is not killed: its process may be gone and its number reused.
TEST(StopSignals, AForgottenGroupIsNotKilled) {
  const pid_t sleeper = sleeping_group();
  int status = stopped_twice(sleeper, true);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) << status;
  usleep(100'000);
  EXPECT_EQ(waitpid(sleeper, &status, WNOHANG), 0) << "the forgotten group was killed";
  kill(-sleeper, SIGKILL);
  waitpid(sleeper, &status, 0);
}

}  // namespace
}  // namespace pmlab
