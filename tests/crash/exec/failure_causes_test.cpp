// A program's failing states alike in what it did and what its checker said are one cause: the key ignores
// what changes from one showing of a bug to the next (numbers in the message, which record, the order
// lines are listed in) and nothing else.
#include "pmlab/crash/exec/failure_causes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pmlab::crash::exec {
namespace {

struct Facts {
  std::vector<uint64_t> crash_stack{0x1000, 0x2000};
  std::vector<uint64_t> stored_a{0x3000}, stored_b{0x4000};
  std::string output = "checking\nhead 21 past tail 20\n";
  FailureFacts facts() const {
    return {.at_exit = false,
            .call = 0,
            .crash_stack = &crash_stack,
            .persisted = {{&stored_a, 0x5000}, {&stored_b, 0}},
            .lost = "",
            .outcome = "exited with 1",
            .output = output};
  }
};

TEST(FailureCauses, StatesAlikeButForTheirNumbersShareACause) {
  const Facts base;
  const uint64_t cause = failure_cause(base.facts());
  Facts other_record = base;
  other_record.output = "checking\nhead 90 past tail 89\n\n";
  EXPECT_EQ(failure_cause(other_record.facts()), cause);
  FailureFacts reordered = base.facts();
  std::swap(reordered.persisted[0], reordered.persisted[1]);
  reordered.persisted.push_back(reordered.persisted[0]);  // a second line of the same sites
  EXPECT_EQ(failure_cause(reordered), cause);
}

TEST(FailureCauses, AnyOtherPlaceOrVerdictIsAnotherCause) {
  const Facts base;
  const uint64_t cause = failure_cause(base.facts());
  Facts deeper = base;
  deeper.crash_stack.push_back(0x6000);
  EXPECT_NE(failure_cause(deeper.facts()), cause) << "the crash point's stack";
  Facts stored_elsewhere = base;
  stored_elsewhere.stored_b = {0x4008};
  EXPECT_NE(failure_cause(stored_elsewhere.facts()), cause) << "where a line was stored";
  FailureFacts written_back = base.facts();
  written_back.persisted[1].second = 0x5000;
  EXPECT_NE(failure_cause(written_back), cause) << "where a line was written back";
  FailureFacts fewer = base.facts();
  fewer.persisted.pop_back();
  EXPECT_NE(failure_cause(fewer), cause) << "what persisted";
  FailureFacts at_exit = base.facts();
  at_exit.at_exit = true;
  EXPECT_NE(failure_cause(at_exit), cause);
  FailureFacts at_sync = base.facts();
  at_sync.call = 2;
  EXPECT_NE(failure_cause(at_sync), cause);
  FailureFacts signal = base.facts();
  signal.outcome = "killed by signal 11 (SIGSEGV)";
  EXPECT_NE(failure_cause(signal), cause) << "the checker's exit";
  Facts other_message = base;
  other_message.output = "checking\nslot 3 bad\n";
  EXPECT_NE(failure_cause(other_message.facts()), cause) << "the checker's last line";
  FailureFacts lost = base.facts();
  lost.lost = "log/7 is not there";
  EXPECT_NE(failure_cause(lost), cause) << "what the file system lost";
}

}  // namespace
}  // namespace pmlab::crash::exec
