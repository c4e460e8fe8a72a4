// Targets judged from intervals, and ratios of repeated metrics.
#include "pmlab/record/record.hpp"

#include <gtest/gtest.h>

namespace pmlab::record {
namespace {

Metric repeated(const std::string& name, std::vector<double> samples) {
  Metric m{name, 0, "ratio", MetricKind::measured, {}};
  m.stats = summarize(std::move(samples), "repetitions");
  m.value = (m.stats->min + m.stats->max) / 2;
  return m;
}

Verdict verdict_of(const Metric& m, double threshold, TargetDirection d = TargetDirection::at_least) {
  RunRecord r;
  r.set(m);
  r.add_target({m.name, "a target", threshold, d});
  return r.targets[0].verdict;
}

TEST(Target, IsMetOnlyWhenTheWholeIntervalMeetsIt) {
  const Metric m = repeated("ratio", {2.1, 2.2, 2.3, 2.25, 2.15});
  EXPECT_EQ(verdict_of(m, 2.0), Verdict::met);
  EXPECT_EQ(verdict_of(m, 2.2), Verdict::unclear);
  EXPECT_EQ(verdict_of(m, 2.5), Verdict::missed);
  EXPECT_EQ(verdict_of(m, 2.0, TargetDirection::at_most), Verdict::missed);
  EXPECT_EQ(verdict_of(m, 2.5, TargetDirection::at_most), Verdict::met);
}

TEST(Target, WithOneSampleIsJudgedOnTheValue) {
  const Metric m{"ratio", 1.9, "ratio", MetricKind::measured, {}};
  EXPECT_EQ(verdict_of(m, 2.0), Verdict::missed);
  EXPECT_EQ(verdict_of(m, 1.5), Verdict::met);
  RunRecord none;
  none.add_target({"absent", "a target", 1.0, TargetDirection::at_least});
  EXPECT_EQ(none.targets[0].verdict, Verdict::unclear);
}

// A target is stated once, in `targets`: no metric stands for its verdict.
TEST(Target, IsRecordedOnlyAsATarget) {
  RunRecord r;
  r.set(Metric{"ratio", 3.0, "ratio", MetricKind::modelled, "dcpmm"});
  r.add_target({"ratio", "modelled", 2.0, TargetDirection::at_least});
  EXPECT_EQ(r.metrics.size(), 1u);
  const auto j = to_json(r);
  EXPECT_EQ(j["targets"][0]["verdict"], "met");
  EXPECT_TRUE(j["targets"][0]["ci_low"].is_null());
}

TEST(Target, ARangeIsOneBoundOfEachDirection) {
  RunRecord r;
  r.set(Metric{"ewr", 0.25, "ratio", MetricKind::modelled, "dcpmm"});
  r.add_target({"ewr", "lower bound", 0.2, TargetDirection::at_least});
  r.add_target({"ewr", "upper bound", 0.3, TargetDirection::at_most});
  ASSERT_EQ(r.targets.size(), 2u);
  EXPECT_EQ(r.targets[0].verdict, Verdict::met);
  EXPECT_EQ(r.targets[1].verdict, Verdict::met);
  r.add_target({"ewr", "upper bound, tighter", 0.24, TargetDirection::at_most});  // replaces the upper bound
  ASSERT_EQ(r.targets.size(), 2u);
  EXPECT_EQ(r.targets[1].verdict, Verdict::missed);
}

TEST(RatioOf, PairsRepetitionsAndKeepsTheirInterval) {
  const Metric a = repeated("a", {10, 20, 30});
  const Metric b = repeated("b", {5, 10, 15});
  const auto r = ratio_of("r", &a, &b);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->value, 2.0);  // every pair is 2: a ratio of medians of unpaired samples would agree here
  ASSERT_TRUE(r->stats);
  EXPECT_EQ(r->stats->samples.size(), 3u);
  EXPECT_DOUBLE_EQ(r->stats->ci_low, 2.0);
  EXPECT_DOUBLE_EQ(r->stats->ci_high, 2.0);
  const Metric zero{"z", 0, "ops/s", MetricKind::measured, {}};
  EXPECT_FALSE(ratio_of("r", &a, &zero));
  EXPECT_FALSE(ratio_of("r", &a, nullptr));
  const Metric single{"s", 4, "ops/s", MetricKind::measured, {}};
  const auto unpaired = ratio_of("r", &single, &b);
  ASSERT_TRUE(unpaired);
  EXPECT_FALSE(unpaired->stats);
}

TEST(Metric, WritesStatsAndTheTimerFloorOnlyWhenPresent) {
  RunRecord r;
  Metric plain{"t", 1, "ns", MetricKind::measured, {}};
  r.set(plain);
  Metric floor = plain;
  floor.name = "f";
  floor.at_timer_floor = true;
  r.set(floor);
  r.set(repeated("s", {1, 2, 3}));
  const auto j = to_json(r);
  EXPECT_FALSE(j["metrics"]["t"].contains("stats"));
  EXPECT_FALSE(j["metrics"]["t"].contains("at_timer_floor"));
  EXPECT_TRUE(j["metrics"]["f"]["at_timer_floor"].get<bool>());
  EXPECT_EQ(j["metrics"]["s"]["stats"]["n"], 3);
  EXPECT_EQ(j["metrics"]["s"]["stats"]["over"], "repetitions");
  EXPECT_FALSE(j.contains("targets"));
}

// A record's name spells its parameters as the runner spells a run's: strings as they are, anything else
// as JSON writes it, in the order the parameters were set.
TEST(Name, SpellsTheSuiteTheCaseAndEachParameterInOrder) {
  RunRecord r;
  r.case_name = "scaling";
  r.params = {{"structure", "bptree"}, {"records", 102400}, {"quick", true}, {"ratio", 1.5}};
  EXPECT_EQ(params_suffix(r.params), "/structure:bptree/records:102400/quick:true/ratio:1.5");
  EXPECT_EQ(name_in("ds", r), "ds.scaling/structure:bptree/records:102400/quick:true/ratio:1.5");
  EXPECT_EQ(value_text(nlohmann::ordered_json("a b")), "a b");
  RunRecord bare;
  bare.case_name = "designs";
  EXPECT_EQ(name_in("crash", bare), "crash.designs");
}

}  // namespace
}  // namespace pmlab::record
