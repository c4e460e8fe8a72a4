// Side-by-side comparisons: the orders they run their contenders in (every contender first equally often,
// and every contender directly after every other one equally often: a balanced Latin square), and what
// interleave sums per contender.
#include "pmlab/bench/side_by_side.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "pmlab/record/record.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::bench {
namespace {

TEST(PhaseOrders, EveryContenderFollowsEveryOtherEquallyOften) {
  for (size_t n = 1; n <= 7; ++n) {
    const auto rows = phase_orders(n);
    ASSERT_EQ(rows.size(), n % 2 ? 2 * n : n) << n;
    std::map<size_t, int> first;
    std::map<std::pair<size_t, size_t>, int> follows;
    for (const auto& row : rows) {
      ASSERT_EQ(std::set<size_t>(row.begin(), row.end()).size(), n) << "a row is a permutation";
      ++first[row[0]];
      for (size_t k = 1; k < n; ++k) ++follows[{row[k - 1], row[k]}];
    }
    for (size_t c = 0; c < n; ++c) EXPECT_EQ(first[c], static_cast<int>(rows.size() / n)) << n;
    if (n == 1) continue;
    const int each = follows.begin()->second;
    EXPECT_EQ(follows.size(), n * (n - 1)) << "every ordered pair of neighbours occurs, n = " << n;
    for (const auto& [pair, count] : follows) EXPECT_EQ(count, each) << pair.first << "->" << pair.second;
  }
  EXPECT_TRUE(phase_orders(0).empty());
}

// What interleave sums per contender are the timed operations and their persistence instructions only:
// the warm-up's and the maintenance's instructions stay out, so counters[c] / ops[c] is one operation's.
TEST(SideBySide, InterleaveSumsEachContendersOpsAndCountersOverRoundsAndThreads) {
  const CaseDef def{.suite = "test", .name = "interleave", .summary = {}, .params = {}, .body = {}};
  const Params params;
  RunRecord record;
  const persist::Persister persister = persist::Persister::volatile_memory();
  constexpr int kThreads = 2, kRounds = 3;
  RunContext ctx(def, params, record, media::Region{}, persister, RunControl{}, kThreads, {0, 1}, false);
  // The counters are bumped by hand: exact counts, whatever the machine's flush instructions.
  std::vector<uint64_t> calls(kThreads, 0);
  const std::vector<Contender> contenders{
      {"two_fences_three_flushes",
       [](int, uint64_t) {
         persist::tls_counters.fences += 2;
         persist::tls_counters.flushes += 3;
         return true;
       }},
      {"full_every_thousandth_call",
       [&](int t, uint64_t) {
         if (++calls[static_cast<size_t>(t)] % 1000 == 0) return false;
         persist::tls_counters.fences += 1;
         return true;
       },
       [] { persist::tls_counters.fences += 100; }},
  };
  const InterleaveResult r = interleave(ctx, kRounds, 0.002, contenders);
  ASSERT_EQ(r.throughput.size(), static_cast<size_t>(kRounds));
  for (const auto& round : r.throughput) {
    ASSERT_EQ(round.size(), contenders.size());
    for (double ops_per_s : round) EXPECT_GT(ops_per_s, 0);
  }
  ASSERT_EQ(r.ops.size(), contenders.size());
  ASSERT_EQ(r.counters.size(), contenders.size());
  EXPECT_GT(r.ops[0], 0u);
  EXPECT_EQ(r.counters[0].fences, 2 * r.ops[0]);
  EXPECT_EQ(r.counters[0].flushes, 3 * r.ops[0]);
  // A timed phase of 1000 operations or more met a full log at least once: it paused for maintenance.
  ASSERT_GT(r.ops[1], uint64_t{1000} * kRounds * kThreads) << "no timed phase paused for maintenance";
  EXPECT_EQ(r.counters[1].fences, r.ops[1]) << "the maintenance's fences are not the operations'";
  EXPECT_EQ(r.counters[1].flushes, 0u);
}

// A contender on fewer threads than the run's: only threads 0 … n-1 run its phases, and its step before
// each phase runs while no operation of any contender is under way.
TEST(SideBySide, AContenderOnFewerThreadsRunsAloneAfterItsStep) {
  const CaseDef def{.suite = "test", .name = "interleave", .summary = {}, .params = {}, .body = {}};
  const Params params;
  RunRecord record;
  const persist::Persister persister = persist::Persister::volatile_memory();
  constexpr int kThreads = 2, kRounds = 4;
  RunContext ctx(def, params, record, media::Region{}, persister, RunControl{}, kThreads, {0, 1}, false);
  std::atomic<int> running{0};
  std::atomic<uint64_t> steps{0}, steps_beside_an_operation{0}, one_thread_ops_elsewhere{0};
  auto op = [&](int thread, bool alone) {
    running.fetch_add(1);
    if (alone && thread != 0) one_thread_ops_elsewhere.fetch_add(1);
    running.fetch_sub(1);
    return true;
  };
  std::vector<Contender> contenders{{"every_thread", [&](int t, uint64_t) { return op(t, false); }},
                                    {"thread_0", [&](int t, uint64_t) { return op(t, true); }}};
  contenders[1].threads = 1;
  contenders[1].before_phase = [&] {
    steps.fetch_add(1);
    if (running.load() != 0) steps_beside_an_operation.fetch_add(1);
  };
  const InterleaveResult r = interleave(ctx, kRounds, 0.002, contenders);
  EXPECT_EQ(steps.load(), static_cast<uint64_t>(kRounds));
  EXPECT_EQ(steps_beside_an_operation.load(), 0u);
  EXPECT_EQ(one_thread_ops_elsewhere.load(), 0u);
  for (const auto& round : r.throughput)
    for (double ops_per_s : round) EXPECT_GT(ops_per_s, 0);
  EXPECT_GT(r.ops[1], 0u);
}

}  // namespace
}  // namespace pmlab::bench
