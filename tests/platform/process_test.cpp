#include "pmlab/platform/process.hpp"

#include <sys/personality.h>

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace pmlab::platform
