// A design of your own, crash-tested by pmlab out of tree: the persistent stack of stack.hpp, and a broken
// twin that publishes a record before it is durable. The same push runs on a real pool in stack.cpp.
//
//   cmake -S . -B build -DCMAKE_PREFIX_PATH=<pmlab prefix> && cmake --build build
//   pmlab crash --load build/libcrash_design.so mine.stack mine.broken-stack --include-broken
#include <pmlab/crash.hpp>

#include <string>

#include "stack.hpp"

namespace {

template <bool kBroken>
class Stack final : public pmlab::CrashSubject {
 public:
  explicit Stack(const pmlab::CrashOptions& o) : ops_(o.ops) {}

  size_t image_bytes() const override { return stack::bytes_for(ops_); }

  void format(pmlab::CrashImage image, const pmlab::Persister& p) override { stack::format(image.base, p); }

  void run(pmlab::CrashImage image, const pmlab::Persister& p, pmlab::CrashOps& ops) override {
    for (uint64_t op = 0; op < ops_; ++op) {
      ops.begin(op, "push");
      stack::push(image.base, image.size, p, op, kBroken);
      ops.end(op);
    }
  }

  std::string recover(pmlab::CrashImage, const pmlab::Persister&) override { return {}; }

  std::string check(pmlab::CrashImage image, const pmlab::Persister&, const pmlab::CrashPoint& at) override {
    uint64_t count = 0;
    if (std::string why = stack::walk(image.base, image.size, &count); !why.empty()) return why;
    if (count != at.ops_completed && !(at.op_in_flight && count == at.ops_completed + 1))
      return std::to_string(count) + " pushes survived, " + std::to_string(at.ops_completed) + " had returned";
    return {};
  }

 private:
  uint64_t ops_;
};

}  // namespace

PMLAB_CRASH_SUBJECT(stack, "mine.stack", "a persistent stack of records (example)", false, Stack<false>);
PMLAB_CRASH_SUBJECT(broken_stack, "mine.broken-stack", "BROKEN: the stack, publishing nodes never written back", true,
                    Stack<true>);
