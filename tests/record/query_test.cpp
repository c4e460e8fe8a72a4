#include "pmlab/record/query.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace pmlab::record {
namespace {

RunRecord sample() {
  RunRecord r;
  r.suite = "ds";
  r.case_name = "ycsb";
  r.params = {{"structure", "bptree"}, {"threads", 2}, {"value", 128}, {"quick", true}};
  r.set(Metric{"throughput", 1.5e6, "ops/s", MetricKind::measured, {}});
  r.set(Metric{"latency_p99", std::numeric_limits<double>::quiet_NaN(), "ns", MetricKind::measured, {}});
  return r;
}

TEST(RecordQuery, ParametersAsTextAndAsNumbers) {
  const RunRecord r = sample();
  EXPECT_EQ(param_text(r, "structure"), "bptree");
  EXPECT_EQ(param_text(r, "threads"), "2");
  EXPECT_EQ(param_text(r, "quick"), "true");
  EXPECT_EQ(param_text(r, "absent"), "");
  EXPECT_EQ(param_number(r, "value"), 128.0);
  EXPECT_FALSE(param_number(r, "structure").has_value());
  EXPECT_FALSE(param_number(r, "absent").has_value());
}

TEST(RecordQuery, AMetricIsAbsentWhenMissingOrNotFinite) {
  const RunRecord r = sample();
  EXPECT_EQ(metric_value(r, "throughput"), 1.5e6);
  EXPECT_FALSE(metric_value(r, "latency_p99").has_value());
  EXPECT_FALSE(metric_value(r, "bandwidth").has_value());
}

TEST(RecordQuery, MatchesTheCaseAndEveryParameterOfAnOkRun) {
  RunRecord r = sample();
  EXPECT_TRUE(matches(r, "ds.ycsb"));
  EXPECT_TRUE(matches(r, "ds.ycsb", {{"structure", "bptree"}, {"threads", "2"}}));
  EXPECT_FALSE(matches(r, "ds.ycsb", {{"structure", "hashtable"}}));
  EXPECT_FALSE(matches(r, "ds.vs_pmdk"));
  r.status = RunStatus::skipped;
  EXPECT_FALSE(matches(r, "ds.ycsb"));
}

}  // namespace
}  // namespace pmlab::record
