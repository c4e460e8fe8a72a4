// The number of a process that has ended and been reaped: what a killed pmlab process leaves its scratch
// files under, for the sweeps' tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

namespace pmlab::testing {

inline pid_t ended_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

}  // namespace pmlab::testing
