#include "pmlab/platform/process.hpp"

#include <signal.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "../support/temp_dir.hpp"
#include "pmlab/common/stop_signal.hpp"

namespace pmlab::platform {
namespace {

// The personality a child started now runs with, as it reads it itself.
unsigned long child_personality() {
  ProcessSpec spec;
  spec.argv = {"cat", "/proc/self/personality"};
  auto r = run_process(spec);
  EXPECT_TRUE(r.ok() && r->ok()) << (r.ok() ? r->err : r.status().message());
  return r.ok() ? std::stoul(r->out, nullptr, 16) : 0;
}

TEST(Process, ChildrenRunWithoutAslrWhileTheGuardLivesAndWithItAfter) {
  if ((child_personality() & ADDR_NO_RANDOMIZE) != 0)
    GTEST_SKIP() << "this process starts its children without ASLR already (setarch -R?)";
  {
    const ProcessesWithoutAslr guard;
    if (!guard.ok()) GTEST_SKIP() << "the kernel refuses: " << guard.why();
    EXPECT_NE(child_personality() & ADDR_NO_RANDOMIZE, 0u);
    {
      const ProcessesWithoutAslr nested;  // already off: it changes nothing, and restores nothing
      EXPECT_TRUE(nested.ok());
    }
    EXPECT_NE(child_personality() & ADDR_NO_RANDOMIZE, 0u) << "an inner guard turned it back on";
  }
  EXPECT_EQ(child_personality() & ADDR_NO_RANDOMIZE, 0u) << "the setting from before did not come back";
}

// A program that cannot run is refused with what is wrong: missing, a directory, or a file without execute
// permission, whether named by its path or found in PATH.
TEST(Process, AProgramThatCannotRunIsRefusedWithWhy) {
  testing::TempDir dir;
  const std::string plain = dir.file("plain");
  std::ofstream(plain) << "#!/bin/sh\nexit 0\n";
  EXPECT_EQ(why_no_program(dir.file("missing")), dir.file("missing") + ": no such program");
  EXPECT_EQ(why_no_program(dir.path()), dir.path() + ": a directory, not a program");
  EXPECT_EQ(why_no_program(plain), plain + ": not executable (no execute permission)");
  EXPECT_EQ(why_no_program("pmlab-no-such-program"), "pmlab-no-such-program: no such program (not found in PATH)");
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", (dir.path() + ":" + path).c_str(), 1);
  const std::string found = why_no_program("plain");
  setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(found, "plain: " + plain + " is not executable (no execute permission)");
  ProcessSpec spec;
  spec.argv = {plain};
  auto r = run_process(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), plain + ": not executable (no execute permission)");
}

// A child waited for runs in a process group of its own, out of reach of a terminal's ^C. A first stop signal
// kills it from the wait; a second one exits at once, and kills it first: SIGINT then SIGTERM, sent together
// to a process that waits for a sleeping child, leave no child behind.
TEST(Process, ASecondStopSignalKillsTheChildBeingWaitedFor) {
  testing::TempDir dir;
  const std::string noted = dir.file("pid");
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo $$ > " + noted + ".part && mv " + noted + ".part " + noted + "; exec sleep 30"};
  const pid_t waiting = fork();
  if (waiting == 0) {
    const StopSignals stop;
    (void)run_process(spec);
    _exit(0);
  }
  long child = 0;
  for (int i = 0; i < 600 && !(std::ifstream(noted) >> child); ++i) usleep(50'000);
  ASSERT_GT(child, 0) << "the child did not start";
  kill(waiting, SIGINT);
  kill(waiting, SIGTERM);
  int status = 0;
  waitpid(waiting, &status, 0);
  // 128 + the signal handled first, which need not be the one sent first: the kernel may run the second
  // signal's handler before the first one's has begun.
  EXPECT_TRUE(WIFEXITED(status) && (WEXITSTATUS(status) == 128 + SIGINT || WEXITSTATUS(status) == 128 + SIGTERM))
      << status;
  // Killed, the child is gone or a zombie its new parent has yet to reap.
  auto gone = [&] {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid, name, state;
    return !(stat >> pid >> name >> state) || state == "Z";
  };
  for (int i = 0; i < 100 && !gone(); ++i) usleep(20'000);
  EXPECT_TRUE(gone()) << "the child " << child << " still runs";
  if (!gone()) kill(static_cast<pid_t>(child), SIGKILL);
}

}  // namespace
}  // namespace pmlab::platform
