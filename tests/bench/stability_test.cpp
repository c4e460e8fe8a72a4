// The verdicts of `pmlab run --stability` from observations shaped by hand.
#include "pmlab/bench/stability.hpp"

#include <gtest/gtest.h>

namespace pmlab::bench {
namespace {

const StabilityRegistration sample{{"^selftest\\.stable/", {"throughput"}}};

StabilityObservation seen(const std::string& after, double throughput) {
  record::RunRecord r;
  r.name = "selftest.stable/x:1";
  r.set(record::Metric{"throughput", throughput, "ops/s", record::MetricKind::measured, {}});
  return {after, r};
}

const record::RunRecord* summary_of(const std::vector<record::RunRecord>& rows) {
  for (const auto& r : rows)
    if (r.case_name == "summary" && r.name.find("selftest.stable") != std::string::npos) return &r;
  return nullptr;
}

std::string verdict(const record::RunRecord& r) {
  for (const auto& [k, v] : r.notes)
    if (k == "verdict") return v;
  return {};
}

TEST(Stability, AValueThatMovesAfterASuiteBeyondNoiseIsOrderDependent) {
  const auto rows =
      stability_rows({seen("alone", 100), seen("alone", 101), seen("alone", 99), seen("core", 102), seen("idio", 60)});
  const record::RunRecord* s = summary_of(rows);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(verdict(*s), "order-dependent");
  EXPECT_NEAR(s->find("largest_deviation")->value, -0.4, 1e-9);
  EXPECT_DOUBLE_EQ(s->find("tolerance")->value, kStabilityMinTolerance);
  int points = 0;
  for (const auto& r : rows) points += r.case_name == "point" ? 1 : 0;
  EXPECT_EQ(points, 2);
  for (const auto& r : rows) EXPECT_EQ(r.suite, "stability");
  // Named as runs are: the suite, the case, then each parameter in order.
  EXPECT_EQ(s->name, "stability.summary/run:selftest.stable/x:1/metric:throughput");
  bool named_point = false;
  for (const auto& r : rows)
    named_point = named_point || r.name == "stability.point/run:selftest.stable/x:1/metric:throughput/after:idio";
  EXPECT_TRUE(named_point);
}

TEST(Stability, NoiseAloneWidensTheTolerance) {
  // Alone the point already spreads 20% (3x: 60%), so a 30% move after a suite is within noise.
  const auto rows = stability_rows({seen("alone", 100), seen("alone", 120), seen("alone", 110), seen("core", 140)});
  const record::RunRecord* s = summary_of(rows);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(verdict(*s), "stable");
  EXPECT_NEAR(s->find("tolerance")->value, 3 * 20.0 / 110.0, 1e-9);
}

TEST(Stability, WithoutAloneRunsThereIsNothingToJudge) {
  EXPECT_EQ(summary_of(stability_rows({seen("core", 100)})), nullptr);
}

}  // namespace
}  // namespace pmlab::bench
