#include "pmlab/platform/process.hpp"

#include <sys/personality.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "../support/temp_dir.hpp"

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

}  // namespace
}  // namespace pmlab::platform
