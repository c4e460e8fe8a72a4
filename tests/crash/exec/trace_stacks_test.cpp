// The call stacks a trace records at its fences (src/pmlab-trace/stacks.cpp): a fence's stack is reused
// from an earlier fence only where the stack words it was unwound from are the same, so the trace holds
// the stacks a fresh unwind at every fence would give. The program (subjects/own/stack_shapes.c) reaches
// one fence site through shapes a cache keyed too loosely confuses: other callers at the same depth, a
// frame with a varying alloca, recursion; built without frame pointers and on them.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../../support/temp_dir.hpp"
#include "pmlab/crash/exec/trace_file.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

// A frame as its module and offset there: the same in two runs whatever the load addresses.
using Frame = std::pair<std::string, uint64_t>;

// The stack of every fence, in order, of `program` traced with the stack cache on or off.
std::vector<std::vector<Frame>> fence_stacks(const testing::TempDir& dir, const std::string& program, bool cache) {
  const std::string pool = dir.file("shapes.pool"), trace = dir.file(cache ? "cached.pmtrace" : "unwound.pmtrace");
  platform::ProcessSpec spec;
  spec.argv = {
      PMLAB_CLI_PATH, "crash", "exec",          "--pool", pool,    "--setup", "rm -f " + pool, "--trace", trace,
      "--trace-only", "--out", dir.file("out"), "--",     program, pool,      "3000"};
  spec.set_env = {std::string("PMLAB_TRACE_STACK_CACHE=") + (cache ? "1" : "0")};
  spec.timeout_s = 120;
  auto run = platform::run_process(spec);
  EXPECT_TRUE(run.ok() && run->ok()) << (run.ok() ? run->err : run.status().message());
  auto t = TraceFile::open(trace);
  EXPECT_TRUE(t.ok()) << t.status().message();
  std::vector<std::vector<Frame>> stacks;
  if (!t.ok()) return stacks;
  auto frame = [&](uint64_t address) {
    for (const TraceModule& m : t->modules())
      for (const auto& [begin, end] : m.segments)
        if (address >= begin && address < end) return Frame{m.path, address - m.bias};
    return Frame{"?", address};
  };
  Status s = t->replay([&](const TraceRecord& r) {
    if (r.kind != trace::Kind::fence) return Status{};
    std::vector<Frame> frames;
    for (uint64_t a : t->stack(r.as<trace::FenceRecord>().stack)) frames.push_back(frame(a));
    stacks.push_back(std::move(frames));
    return Status{};
  });
  EXPECT_TRUE(s.ok()) << s.message();
  return stacks;
}

TEST(TraceStacks, AReusedStackIsTheStackAnUnwindAtThatFenceGives) {
  for (const char* name : {"stack-shapes", "stack-shapes-fp"}) {
    SCOPED_TRACE(name);
    testing::TempDir dir;
    const std::string program = std::string(PMLAB_SUBJECTS_DIR) + "/" + name;
    const auto cached = fence_stacks(dir, program, true), unwound = fence_stacks(dir, program, false);
    ASSERT_EQ(cached.size(), 3000u);
    ASSERT_EQ(unwound.size(), cached.size());
    // The shapes give many stacks (two callers, alloca, seven recursion depths), or the test tests nothing.
    EXPECT_GE(std::set<std::vector<Frame>>(unwound.begin(), unwound.end()).size(), 10u);
    size_t differ = 0, first = cached.size();
    for (size_t i = 0; i < cached.size(); ++i)
      if (cached[i] != unwound[i] && differ++ == 0) first = i;
    EXPECT_EQ(differ, 0u) << "first at fence " << first;
  }
}

}  // namespace
}  // namespace pmlab::crash::exec
