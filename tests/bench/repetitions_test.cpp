// Repetitions combined into medians with intervals, and the measured loop's choice of how to time.
#include "pmlab/bench/repetitions.hpp"

#include <gtest/gtest.h>

#include <barrier>

#include "../support/temp_dir.hpp"
#include "pmlab/bench/runner.hpp"
#include "pmlab/common/files.hpp"

namespace pmlab::bench {
namespace {

RunRecord rep(double throughput, double share, double threshold) {
  RunRecord r;
  r.name = "s.c/x:1";
  r.set(Metric{"throughput", throughput, "ops/s", MetricKind::measured, {}});
  r.set(Metric{"share", share, "ratio", MetricKind::measured, {}});
  r.set(Metric{"target", threshold, "ratio", MetricKind::measured, {}});
  r.set(Metric{"published", 7, "ratio", MetricKind::published, "a paper"});
  r.set(Metric{"forced", 1, "flag", MetricKind::measured, {}});
  r.histogram_ns = {{10.0, 2}, {20.0, 1}};
  r.add_target({"throughput", "fast enough", 100, TargetDirection::at_least});
  return r;
}

TEST(Repetitions, DefaultsFollowTheCaseKind) {
  auto named = [](const char* name) {
    CaseDef d;
    d.suite = "s";
    d.name = name;
    return d;
  };
  const CaseDef target = named("log_target"), peer = named("vs_fio"), plain = named("persist");
  CaseDef asks = named("breakdown");
  asks.quick_repetitions = [](const Params& p) { return p.has("x") ? 4 : 0; };
  Params none, x;
  x.set("x", "1");
  EXPECT_EQ(repetitions_for(target, none, true, std::nullopt), 3);
  EXPECT_EQ(repetitions_for(peer, none, true, std::nullopt), 3);
  EXPECT_EQ(repetitions_for(plain, none, true, std::nullopt), 1);
  EXPECT_EQ(repetitions_for(asks, x, true, std::nullopt), 4);
  EXPECT_EQ(repetitions_for(asks, none, true, std::nullopt), 1);
  EXPECT_EQ(repetitions_for(plain, none, false, std::nullopt), 5);
  EXPECT_EQ(repetitions_for(target, none, true, 2), 2);
}

TEST(Repetitions, CombineIntoMediansWithIntervalsAndJudgeTargetsAgain) {
  // The first repetition alone misses the target; the median of three meets it (90, 120, 130).
  const RunRecord out = combine_repetitions({rep(90, 0.1, 2), rep(130, 0.3, 2), rep(120, 0.2, 2)});
  const Metric* t = out.find("throughput");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->value, 120);
  ASSERT_TRUE(t->stats);
  EXPECT_EQ(t->stats->samples, (std::vector<double>{90, 130, 120}));
  EXPECT_EQ(t->stats->min, 90);
  EXPECT_EQ(t->stats->max, 130);
  EXPECT_EQ(t->stats->over, "repetitions");
  EXPECT_FALSE(out.find("target")->stats);     // the same in every repetition
  EXPECT_FALSE(out.find("published")->stats);  // quoted, not measured
  EXPECT_FALSE(out.find("forced")->stats);
  // The interval of three straddles 100 (90 is a sample): unclear.
  EXPECT_EQ(out.targets[0].verdict, record::Verdict::unclear);
  EXPECT_EQ(out.histogram_ns, (std::vector<std::pair<double, uint64_t>>{{10.0, 6}, {20.0, 3}}));
  const RunRecord clear = combine_repetitions({rep(110, 0, 2), rep(130, 0, 2), rep(120, 0, 2)});
  EXPECT_EQ(clear.targets[0].verdict, record::Verdict::met);
}

TEST(Repetitions, OneFailingRepetitionIsThePointsStatus) {
  RunRecord bad = rep(1, 0, 0);
  bad.status = RunStatus::error;
  bad.reason = "boom";
  const RunRecord out = combine_repetitions({rep(90, 0.1, 2), bad});
  EXPECT_EQ(out.status, RunStatus::error);
  EXPECT_NE(out.reason.find("boom"), std::string::npos);
  EXPECT_NE(out.reason.find("repetition"), std::string::npos);
}

TEST(Repetitions, TheRunnerRepeatsEveryPointAndRecordsTheCount) {
  pmlab::testing::TempDir dir;
  RunOptions o;
  o.selectors = {"selftest.touch"};
  o.quick = true;
  o.ops = 200;
  o.repetitions = 3;
  o.out_dir = dir.file("out");
  o.pool_path = dir.file("bench.pool");
  o.progress = false;
  auto summary = run(o);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->ok, 2);
  auto text = read_regular_file(summary->results_path, "results");
  ASSERT_TRUE(text.ok());
  const auto doc = nlohmann::json::parse(*text);
  EXPECT_EQ(doc["context"]["repetitions"]["every_case"], 3);
  const auto& m = doc["runs"][0]["metrics"]["throughput"];
  ASSERT_TRUE(m.contains("stats"));
  EXPECT_EQ(m["stats"]["n"], 3);
  EXPECT_LE(m["stats"]["ci_low"].get<double>(), m["value"].get<double>());
  EXPECT_GE(m["stats"]["ci_high"].get<double>(), m["value"].get<double>());
  EXPECT_EQ(doc["runs"][0]["metrics"]["ops"]["value"], 200);  // fixed work: the same in every repetition
}

// An operation far below the timer's resolution is timed in batches; one far above it one by one.
TEST(MeasuredLoop, BatchesOperationsTooShortToTime) {
  std::barrier<> sync(1);
  RunControl control;
  control.duration_s = 0.01;
  control.warmup_s = 0.005;
  ThreadState fast(0, 1, control, sync);
  volatile uint64_t sink = 0;
  auto add = [&](uint64_t i) { sink = sink + i; };
  fast.measure(add);
  // "Far below" is 10x the timer's measured resolution: on a TSC of 0.4 ns an unoptimized (sanitizer)
  // build's addition is not below 4 ns, and then one-by-one timing is the right answer.
  const platform::Clock& clock = platform::Clock::get();
  const uint64_t t0 = platform::Clock::start();
  for (uint64_t i = 0; i < 100000; ++i) add(i);
  const double add_ns = clock.to_ns(platform::Clock::stop() - t0) / 100000.0;
  if (add_ns < 5.0 * clock.resolution_ns()) { EXPECT_GT(fast.ops_per_sample(), 1u) << add_ns << " ns an operation"; }
  ThreadState slow(0, 1, control, sync);
  slow.measure([&](uint64_t) {
    const uint64_t until = platform::Clock::now() + platform::Clock::get().from_ns(2000);
    while (platform::Clock::now() < until) {}
  });
  EXPECT_EQ(slow.ops_per_sample(), 1u);
  EXPECT_GT(slow.histogram().count(), 0u);
  EXPECT_GE(slow.histogram().quantile(0.5) / platform::Clock::get().ticks_per_ns(), 1500.0);
}

}  // namespace
}  // namespace pmlab::bench
