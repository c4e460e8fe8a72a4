// The durable-linearizability search on hand-made histories of a set of one key and of a register.
#include "pmlab/crashtest/linearizability.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace pmlab::crash {
namespace {

OpEvent began(uint32_t thread, uint32_t op) { return {.thread = thread, .op = op, .result = 0, .returned = false}; }
OpEvent returned(uint32_t thread, uint32_t op, uint64_t result) {
  return {.thread = thread, .op = op, .result = result, .returned = true};
}

// Thread 0 inserts key 1 (op 0); thread 1 looks it up (op 0). State: present or not.
std::optional<uint64_t> set_step(uint64_t present, unsigned thread, uint32_t, std::optional<uint64_t> result) {
  if (thread == 0) {
    if (result && *result != (present ? 0u : 1u)) return std::nullopt;
    return 1;
  }
  if (result && *result != present) return std::nullopt;
  return present;
}

TEST(Linearizability, AnInFlightInsertMayOrMayNotHaveHappened) {
  const std::vector<OpEvent> h{began(0, 0)};
  EXPECT_TRUE(durably_linearizable(h, uint64_t{0}, uint64_t{0}, set_step));
  EXPECT_TRUE(durably_linearizable(h, uint64_t{0}, uint64_t{1}, set_step));
}

TEST(Linearizability, AnInFlightInsertSeenByAReturnedLookupMustSurvive) {
  const std::vector<OpEvent> h{began(0, 0), began(1, 0), returned(1, 0, 1)};
  EXPECT_TRUE(durably_linearizable(h, uint64_t{0}, uint64_t{1}, set_step));
  EXPECT_FALSE(durably_linearizable(h, uint64_t{0}, uint64_t{0}, set_step));
}

TEST(Linearizability, ALookupThatReturnedBeforeTheInsertBeganCannotHaveSeenIt) {
  // The lookup returned 1 although it finished before the insert began: no order explains it.
  const std::vector<OpEvent> h{began(1, 0), returned(1, 0, 1), began(0, 0), returned(0, 0, 1)};
  EXPECT_FALSE(durably_linearizable(h, uint64_t{0}, uint64_t{1}, set_step));
  // Returning 0 it is explained, and the returned insert must be there.
  const std::vector<OpEvent> ok{began(1, 0), returned(1, 0, 0), began(0, 0), returned(0, 0, 1)};
  EXPECT_TRUE(durably_linearizable(ok, uint64_t{0}, uint64_t{1}, set_step));
  EXPECT_FALSE(durably_linearizable(ok, uint64_t{0}, uint64_t{0}, set_step));
}

TEST(Linearizability, OverlappingOperationsMayTakeEitherOrder) {
  // Insert (returned 1) and lookup (returned 0) overlap: the lookup goes first.
  const std::vector<OpEvent> h{began(0, 0), began(1, 0), returned(0, 0, 1), returned(1, 0, 0)};
  EXPECT_TRUE(durably_linearizable(h, uint64_t{0}, uint64_t{1}, set_step));
}

TEST(Linearizability, AnEmptyHistoryLeavesTheInitialState) {
  EXPECT_TRUE(durably_linearizable({}, uint64_t{0}, uint64_t{0}, set_step));
  EXPECT_FALSE(durably_linearizable({}, uint64_t{0}, uint64_t{1}, set_step));
}

TEST(Linearizability, ManyOperationsAreCheckedAtOnce) {
  // Two threads of 40 alternating writes and reads of a register, all returned, in lockstep.
  std::vector<OpEvent> h;
  for (uint32_t i = 0; i < 40; ++i) {
    h.push_back(began(0, i));
    h.push_back(returned(0, i, 0));
    h.push_back(began(1, i));
    h.push_back(returned(1, i, i + 1));
  }
  auto step = [](uint64_t v, unsigned t, uint32_t op, std::optional<uint64_t> r) -> std::optional<uint64_t> {
    if (t == 0) return op + 1;
    if (r && *r != v) return std::nullopt;
    return v;
  };
  EXPECT_TRUE(durably_linearizable(h, uint64_t{0}, uint64_t{40}, step));
  EXPECT_FALSE(durably_linearizable(h, uint64_t{0}, uint64_t{39}, step));
}

}  // namespace
}  // namespace pmlab::crash
