// The verdicts of `pmlab run --stability` from observations shaped by hand.
#include "pmlab/bench/stability.hpp"

#include <gtest/gtest.h>

#include "pmlab/bench/run_pattern.hpp"
#include "pmlab/bench/runner.hpp"
#include "pmlab/persist/config.hpp"
#include "pmlab/platform/cpu.hpp"

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

// Each point the suites register names one run of the quick sweep on this CPU: a point naming a flush
// instruction the CPU lacks would match none and go unwatched without a word.
TEST(Stability, EachRegisteredPointIsOneRunOfTheQuickSweep) {
  RunOptions o;
  o.selectors = {"all"};
  o.quick = true;
  auto plan = dry_run(o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  for (const StabilitySample& s : stability_samples()) {
    if (s.run_pattern.rfind("^selftest", 0) == 0) continue;  // this file's own
    const auto pattern = RunPattern::compile(s.run_pattern);
    ASSERT_TRUE(pattern.ok()) << pattern.status().message();
    size_t matches = 0;
    for (const std::string& name : plan->names) {
      if (!pattern->found_in(name)) continue;
      ++matches;
      // A run of an instruction the CPU lacks is in the plan but skipped when it comes.
      if (const size_t at = name.find("/flush:"); at != std::string::npos) {
        const size_t from = at + std::string_view("/flush:").size();
        const auto instruction = persist::parse_flush(name.substr(from, name.find('/', from) - from));
        ASSERT_TRUE(instruction.ok()) << name;
        EXPECT_TRUE(persist::check_supported(*instruction, platform::CpuFeatures::host()).ok()) << name;
      }
    }
    EXPECT_EQ(matches, 1u) << s.run_pattern;
  }
}

}  // namespace
}  // namespace pmlab::bench
