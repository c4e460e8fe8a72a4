// The hybrid's online learner against synthetic flush costs: it overrides a wrong model, keeps a right
// one, spends little on exploring, follows a change of the cheaper policy, survives disturbed samples,
// keeps cells apart, and times only flushes that follow their own policy.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "pmlab/primitives/page/flusher.hpp"
#include "pmlab/primitives/page/policy_learner.hpp"

namespace pmlab::primitives::page {
namespace {

struct Tally {
  uint64_t cow = 0, ulog = 0;
  double share_ulog() const { return static_cast<double>(ulog) / static_cast<double>(cow + ulog); }
};

// Runs n flushes of `dirty` lines with `threads` flushers on a simulated clock; cost(policy, i) is the
// time from flush i's start to the next one's.
Tally drive(PolicyLearner& learner, uint64_t n, uint32_t dirty, uint32_t threads,
            const std::function<double(Policy, uint64_t)>& cost) {
  Tally t;
  static double now = 0;  // one clock for every learner: time only goes forward
  for (uint64_t i = 0; i < n; ++i) {
    const Policy policy = learner.plan(dirty, threads);
    EXPECT_NE(policy, Policy::hybrid);
    (policy == Policy::ulog ? t.ulog : t.cow) += 1;
    if (learner.wants_stamp()) learner.stamp(now);
    now += cost(policy, i);
  }
  return t;
}

auto fixed_costs(double cow, double ulog) {
  return [=](Policy p, uint64_t) { return p == Policy::ulog ? ulog : cow; };
}

TEST(PolicyLearner, BucketsFollowTheCalibrationGrid) {
  const uint32_t expected[][2] = {{1, 0}, {2, 2},  {3, 3},  {4, 4},  {5, 4},  {6, 5},   {7, 5},
                                  {8, 6}, {11, 6}, {12, 7}, {16, 8}, {24, 9}, {64, 12}, {1024, 20}};
  for (const auto& [dirty, bucket] : expected) EXPECT_EQ(PolicyLearner::bucket(dirty), bucket) << dirty;
}

TEST(PolicyLearner, OverridesAWrongModel) {
  const FlushCostModel model = FlushCostModel::fixed(2);  // says cow from 2 dirty lines
  PolicyLearner learner(model);
  EXPECT_EQ(learner.current(4, 1), Policy::cow);
  const Tally t = drive(learner, 20000, 4, 1, fixed_costs(1000, 700));
  EXPECT_EQ(learner.current(4, 1), Policy::ulog);
  EXPECT_NEAR(learner.ulog_vs_cow(4, 1), 0.7, 1e-9);
  EXPECT_GT(t.share_ulog(), 0.97);
  EXPECT_EQ(model.choose(4, 1), Policy::cow);  // the model itself is left as calibrated
}

TEST(PolicyLearner, KeepsARightModelAndExploresWithinItsBudget) {
  const FlushCostModel model = FlushCostModel::fixed(8);
  for (const double slower : {1.02, 1.1, 1.5, 3.0, 12.0}) {
    PolicyLearner learner(model);
    const uint64_t n = 1000000;
    const Tally t = drive(learner, n, 4, 1, fixed_costs(1000 * slower, 1000));
    EXPECT_EQ(learner.current(4, 1), Policy::ulog) << slower;
    // The time spent on cow beyond what ulog would have taken, as a share of the whole.
    const double total = static_cast<double>(t.ulog) * 1000 + static_cast<double>(t.cow) * 1000 * slower;
    const double waste = static_cast<double>(t.cow) * 1000 * (slower - 1) / total;
    EXPECT_LT(waste, 2 * PolicyLearner::kExploreBudget) << slower;
    EXPECT_GT(learner.comparisons(), 4u) << slower;  // it does keep checking
  }
}

TEST(PolicyLearner, FollowsAChangeOfTheCheaperPolicy) {
  PolicyLearner learner(FlushCostModel::fixed(8));
  drive(learner, 50000, 4, 1, fixed_costs(1300, 1000));
  ASSERT_EQ(learner.current(4, 1), Policy::ulog);
  // The machine changes: cow becomes the cheaper by as much; within some ten thousand flushes (four
  // comparisons, one every ~2400 flushes at this gap) it follows.
  const Tally after = drive(learner, 100000, 4, 1, fixed_costs(1000, 1300));
  EXPECT_EQ(learner.current(4, 1), Policy::cow);
  EXPECT_GT(1 - after.share_ulog(), 0.8);
}

TEST(PolicyLearner, DisturbedSamplesDoNotDecide) {
  // One flush in ten takes 20x as long (an interrupt, another process): the medians see through it.
  std::mt19937_64 rng(42);
  PolicyLearner learner(FlushCostModel::fixed(2));
  drive(learner, 50000, 4, 1, [&](Policy p, uint64_t) {
    const double base = p == Policy::ulog ? 800 : 1000;
    return rng() % 10 == 0 ? 20 * base : base;
  });
  EXPECT_EQ(learner.current(4, 1), Policy::ulog);
  EXPECT_NEAR(learner.ulog_vs_cow(4, 1), 0.8, 0.05);
}

TEST(PolicyLearner, CellsOfDirtyLinesAndThreadsLearnApart) {
  PolicyLearner learner(FlushCostModel::fixed(8));
  // 1 thread, 4 lines: cow cheaper (model wrong); 2 threads, 4 lines: ulog cheaper (model right);
  // 1 thread, 32 lines: ulog cheaper (model wrong).
  drive(learner, 20000, 4, 1, fixed_costs(900, 1000));
  drive(learner, 20000, 4, 2, fixed_costs(1000, 900));
  drive(learner, 20000, 32, 1, fixed_costs(1000, 900));
  EXPECT_EQ(learner.current(4, 1), Policy::cow);
  EXPECT_EQ(learner.current(5, 1), Policy::cow);  // same cell as 4
  EXPECT_EQ(learner.current(4, 2), Policy::ulog);
  EXPECT_EQ(learner.current(32, 1), Policy::ulog);
  EXPECT_EQ(learner.current(16, 1), Policy::cow);  // never flushed: the model's choice
  EXPECT_EQ(learner.ulog_vs_cow(16, 1), 0);
}

TEST(PolicyLearner, TimesEachSampleFromItsStartToTheNextFlush) {
  // Flush costs that grow with every flush of a policy: a learner timing anything but start to next start
  // (or mixing up which flush a time belongs to) sees other numbers than the ones fed.
  PolicyLearner learner(FlushCostModel::fixed(8));
  double now = 0;
  uint64_t sampled = 0;
  for (uint64_t i = 0; i < 3000; ++i) {
    const Policy policy = learner.plan(4, 1);
    sampled += learner.sampling();
    if (learner.wants_stamp()) learner.stamp(now);
    now += policy == Policy::ulog ? 500 : 2000;
  }
  EXPECT_GT(sampled, 10u);
  EXPECT_NEAR(learner.ulog_vs_cow(4, 1), 0.25, 1e-9);
}

TEST(PolicyLearner, TimesOnlyFlushesThatFollowTheirOwnPolicy) {
  // A micro-log flush leaves its record's re-zeroing for the next flush to wait on: a cow flush right
  // after one pays ulog's work, a ulog flush right after a cow pays none of its own. Only flushes that
  // follow their own policy show a policy's steady cost, so only those are timed.
  PolicyLearner learner(FlushCostModel::fixed(8));
  Policy previous = Policy::hybrid;
  uint64_t timed = 0;
  for (uint64_t i = 0; i < 50000; ++i) {
    const Policy policy = learner.plan(4, 1);
    if (learner.sampling()) {
      ++timed;
      EXPECT_EQ(policy, previous) << "flush " << i;
    }
    if (learner.wants_stamp()) learner.stamp(static_cast<double>(i) * 1000);
    previous = policy;
  }
  EXPECT_GT(timed, 20u);
}

TEST(PolicyLearner, InterleavedPointsKeepTheirOwnCountdowns) {
  // Flushes of two points taken in turn break each other's runs: each cell must still explore as often
  // as when its flushes come in one block.
  const FlushCostModel model = FlushCostModel::fixed(64);
  PolicyLearner blocks(model), turns(model);
  drive(blocks, 40000, 4, 1, fixed_costs(1000, 500));
  drive(blocks, 40000, 32, 1, fixed_costs(1000, 500));
  for (int k = 0; k < 40000; ++k) {
    drive(turns, 1, 4, 1, fixed_costs(1000, 500));
    drive(turns, 1, 32, 1, fixed_costs(1000, 500));
  }
  EXPECT_EQ(turns.current(4, 1), Policy::ulog);
  EXPECT_EQ(turns.current(32, 1), Policy::ulog);
  const double explored = static_cast<double>(turns.explored()), expected = static_cast<double>(blocks.explored());
  EXPECT_GT(explored, 0.7 * expected);
  EXPECT_LT(explored, 1.3 * expected);
}

TEST(PolicyLearner, CountsEachPolicysFlushesWhereverTheyStop) {
  // A run's flushes are counted when it begins; read in the middle of a run, after another point broke
  // it, or after explorations, the counts are still the flushes planned so far.
  PolicyLearner learner(FlushCostModel::fixed(16));
  std::mt19937_64 rng(7);
  Tally total;
  for (int chunk = 0; chunk < 400; ++chunk) {
    const uint32_t dirty = (rng() % 2 == 0) ? 4 : 32;
    const Tally t = drive(learner, 1 + rng() % 500, dirty, 1 + static_cast<uint32_t>(rng() % 2),
                          fixed_costs(1000, dirty == 4 ? 1100 : 900));
    total.cow += t.cow;
    total.ulog += t.ulog;
    ASSERT_EQ(learner.flushes(Policy::cow), total.cow) << "chunk " << chunk;
    ASSERT_EQ(learner.flushes(Policy::ulog), total.ulog) << "chunk " << chunk;
  }
  EXPECT_GT(learner.explored(), 0u);
}

TEST(PolicyLearner, WithoutSamplesTheModelDecides) {
  PolicyLearner learner(FlushCostModel::fixed(8));
  drive(learner, 10000, 4, 1, [](Policy, uint64_t) { return 0.0; });  // no time passes (a broken clock)
  EXPECT_EQ(learner.comparisons(), 0u);
  EXPECT_EQ(learner.current(4, 1), Policy::ulog);
}

}  // namespace
}  // namespace pmlab::primitives::page
