// The classification logic on fixtures: verdicts, PMEM-specificity, published numbers from the sheets,
// Table 4 impact classes, and the derived rows' shape.
#include "pmlab/suites/idio/classification.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace pmlab::suites::idio {
namespace {

using record::Metric;
using record::MetricKind;
using record::RunRecord;
using record::RunStatus;

RunRecord run(const std::string& case_name, nlohmann::ordered_json params,
              std::vector<std::pair<std::string, double>> metrics, RunStatus status = RunStatus::ok,
              std::string reason = {}) {
  RunRecord r;
  r.case_name = case_name;
  r.suite = "idio";
  r.name = "idio." + case_name + "/" + params.dump();
  r.params = std::move(params);
  r.status = status;
  r.reason = std::move(reason);
  for (auto& [name, value] : metrics) r.set(Metric{name, value, "x", MetricKind::measured, {}});
  return r;
}

// A tiny stand-in for the published dump: only the cells the tests read.
const char* kSheets =
    "######## sheet 0 I1\n"
    "A13=1 | B13=100 | C13=2500 | D13=100 | E13=700\n"
    "######## sheet 2 I3\n"
    "B4=4000 | B5=2000\n"
    "B11=0.25\n"
    "######## sheet 6 I7\n"
    "B13=0.9 | B14=0.8\n";

std::vector<RunRecord> fixture() {
  std::vector<RunRecord> rs;
  // I1: DRAM and pool alike (p-store 5x a load), so present but not PMEM-specific.
  for (const char* m : {"dram", "pool"}) {
    rs.push_back(run("i1_latency",
                     {{"medium", m}, {"op", "load"}, {"flush", "clwb"}, {"hit_ratio", 1.0}, {"threads", 1}},
                     {{"latency_p50", 20}}));
    rs.push_back(run("i1_latency",
                     {{"medium", m}, {"op", "pstore"}, {"flush", "clwb"}, {"hit_ratio", 1.0}, {"threads", 1}},
                     {{"latency_p50", 100}}));
    rs.push_back(run("i1_latency",
                     {{"medium", m}, {"op", "pstore"}, {"flush", "clflush"}, {"hit_ratio", 1.0}, {"threads", 1}},
                     {{"latency_p50", 160}}));
    rs.push_back(run("i1_latency",
                     {{"medium", m}, {"op", "load"}, {"flush", "clwb"}, {"hit_ratio", 0.0}, {"threads", 1}},
                     {{"latency_p50", 140}}));
  }
  // I3: the pool's random small writes are 3x slower, DRAM's 1.1x: present and PMEM-specific.
  rs.push_back(run("i3_small_writes", {{"medium", "pool"}, {"pattern", "seq"}, {"size", 64}, {"threads", 2}},
                   {{"bandwidth", 3000}}));
  rs.push_back(run("i3_small_writes", {{"medium", "pool"}, {"pattern", "rand"}, {"size", 64}, {"threads", 2}},
                   {{"bandwidth", 1000}}));
  rs.push_back(run("i3_small_writes", {{"medium", "pool"}, {"pattern", "rand"}, {"size", 512}, {"threads", 2}},
                   {{"bandwidth", 4000}}));
  rs.push_back(run("i3_small_writes", {{"medium", "dram"}, {"pattern", "seq"}, {"size", 64}, {"threads", 2}},
                   {{"bandwidth", 3300}}));
  rs.push_back(run("i3_small_writes", {{"medium", "dram"}, {"pattern", "rand"}, {"size", 64}, {"threads", 2}},
                   {{"bandwidth", 3000}}));
  // I4: skipped everywhere.
  rs.push_back(run("i4_numa", {{"medium", "pool"}, {"locality", "local"}}, {}, RunStatus::skipped,
                   "one NUMA node (node 0): remote p-store bandwidth needs at least two"));
  // I5: no difference: absent.
  for (const char* m : {"dram", "pool"})
    for (const char* op : {"store", "pstore"})
      rs.push_back(run("i5_store_vs_pstore",
                       {{"medium", m}, {"pattern", "seq"}, {"op", op}, {"size", 4096}, {"threads", 2}},
                       {{"bandwidth", 5000}}));
  // I7 without model metrics; I8 with a dirty-cache penalty on both.
  rs.push_back(
      run("i7_rewrite", {{"medium", "pool"}, {"flush", "ntstore"}, {"target", "same"}}, {{"latency_p50", 50}}));
  rs.push_back(
      run("i7_rewrite", {{"medium", "pool"}, {"flush", "ntstore"}, {"target", "spread"}}, {{"latency_p50", 40}}));
  for (const char* m : {"dram", "pool"}) {
    rs.push_back(run("i8_dirty_load", {{"medium", m}, {"domain", "adr"}}, {{"latency_p50", 100}}));
    rs.push_back(run("i8_dirty_load", {{"medium", m}, {"domain", "eadr"}}, {{"latency_p50", 150}}));
  }
  return rs;
}

const Classification& get(const std::vector<Classification>& cs, const std::string& id) {
  for (const auto& c : cs)
    if (c.id == id) return c;
  throw std::runtime_error("no " + id);
}

TEST(Decide, PresentAbsentNotApplicableAndSpecificity) {
  EXPECT_EQ(decide(std::nullopt, 2.0).verdict, Verdict::not_applicable);
  EXPECT_EQ(decide(1.1, 1.0).verdict, Verdict::absent);
  EXPECT_FALSE(decide(1.1, 1.0).pmem_specific.has_value());
  const Decision same = decide(3.0, 2.9);
  EXPECT_EQ(same.verdict, Verdict::present);
  EXPECT_EQ(same.pmem_specific, std::optional<bool>(false));
  const Decision specific = decide(3.0, 1.5);
  EXPECT_EQ(specific.pmem_specific, std::optional<bool>(true));
  EXPECT_FALSE(decide(3.0, std::nullopt).pmem_specific.has_value());
  EXPECT_EQ(decide(kPresentAt, 1.0).verdict, Verdict::present);
}

TEST(Classify, VerdictsFollowTheEffectsOnPoolAndDram) {
  const auto cs = classify(fixture(), PublishedSheets::parse(kSheets));
  ASSERT_EQ(cs.size(), 8u);
  const auto& i1 = get(cs, "I1");
  EXPECT_DOUBLE_EQ(*i1.pool, 5.0);  // the cheapest flush (clwb 100 ns) over the load (20 ns)
  EXPECT_EQ(i1.decision.verdict, Verdict::present);
  EXPECT_EQ(i1.decision.pmem_specific, std::optional<bool>(false));
  EXPECT_EQ(i1.root_cause, "the CPU cache");
  EXPECT_FALSE(i1.not_applicable.has_value());

  const auto& i3 = get(cs, "I3");
  EXPECT_DOUBLE_EQ(*i3.pool, 3.0);
  EXPECT_EQ(i3.decision.pmem_specific, std::optional<bool>(true));
  EXPECT_DOUBLE_EQ(*i3.published_pmem, 2.0);
  // EBR: the pool's random 64 B writes (1000 MiB/s) over the pool's best write bandwidth (I5: 5000).
  bool ebr = false;
  for (const auto& m : i3.extra)
    if (m.name == "ebr_random_smallest_pool") {
      ebr = true;
      EXPECT_DOUBLE_EQ(m.value, 0.2);
      EXPECT_EQ(m.kind, MetricKind::measured);
    }
  EXPECT_TRUE(ebr);

  const auto& i4 = get(cs, "I4");
  EXPECT_EQ(i4.decision.verdict, Verdict::not_applicable);
  EXPECT_EQ(i4.not_applicable, NotApplicable::runs_skipped);
  EXPECT_NE(i4.skip_reason.find("one NUMA node"), std::string::npos);

  EXPECT_EQ(get(cs, "I5").decision.verdict, Verdict::absent);
  EXPECT_EQ(get(cs, "I7").decision.verdict, Verdict::not_applicable);  // no media counters, no model
  EXPECT_EQ(get(cs, "I7").not_applicable, NotApplicable::no_media_counters);
  EXPECT_DOUBLE_EQ(*get(cs, "I8").pool, 1.5);
  EXPECT_EQ(get(cs, "I2").decision.verdict, Verdict::not_applicable);  // no I2 runs in the fixture
  EXPECT_EQ(get(cs, "I2").not_applicable, NotApplicable::no_pool_runs);
}

TEST(Classify, AnEmulatedPoolIsNeverPmemSpecific) {
  const auto cs = classify(fixture(), PublishedSheets{}, /*pool_emulated=*/true);
  const auto& i3 = get(cs, "I3");
  EXPECT_EQ(i3.decision.verdict, Verdict::present);
  EXPECT_EQ(i3.decision.pmem_specific, std::optional<bool>(false));
  EXPECT_TRUE(i3.pool_emulated);
  EXPECT_EQ(get(cs, "I4").decision.verdict, Verdict::not_applicable);
}

TEST(Classify, PublishedNumbersComeFromTheSheets) {
  const auto cs = classify(fixture(), PublishedSheets::parse(kSheets));
  EXPECT_DOUBLE_EQ(*get(cs, "I1").published_pmem, 25.0);
  EXPECT_DOUBLE_EQ(*get(cs, "I1").published_dram, 7.0);
  EXPECT_DOUBLE_EQ(*get(cs, "I7").published_pmem, 1.8);
  const auto none = classify(fixture(), PublishedSheets{});
  EXPECT_FALSE(get(none, "I1").published_pmem.has_value());
}

TEST(Classify, ModelledCountersMakeI7ModelledNotMeasured) {
  auto rs = fixture();
  for (auto& r : rs)
    if (r.case_name == "i7_rewrite" && r.params["target"] == "same") {
      r.set(Metric{"rwr", 0.8, "ratio", MetricKind::modelled, "dcpmm"});
      r.set(Metric{"ewr", 0.9, "ratio", MetricKind::modelled, "dcpmm"});
    }
  const auto cs = classify(rs, PublishedSheets{});
  const auto& i7 = get(cs, "I7");
  EXPECT_EQ(i7.decision.verdict, Verdict::present);
  EXPECT_DOUBLE_EQ(*i7.pool, 1.8);
  const auto rows = classification_records(cs);
  for (const auto& r : rows)
    if (r.params["idiosyncrasy"] == "I7") {
      ASSERT_NE(r.find("effect_pool"), nullptr);
      EXPECT_EQ(r.find("effect_pool")->kind, MetricKind::modelled);
      EXPECT_EQ(r.find("effect_pool")->origin, "dcpmm");
    }
}

TEST(Classify, EffectsOnEmulatedRunsAreModelled) {
  auto rs = fixture();
  for (auto& r : rs)
    if (r.case_name == "i3_small_writes" && r.params["medium"] == "pool")
      for (auto& m : r.metrics) m = Metric{m.name, m.value, m.unit, MetricKind::modelled, "emulated:dcpmm"};
  const auto cs = classify(rs, PublishedSheets{});
  const auto rows = classification_records(cs);
  const auto& i3 = rows[2];
  ASSERT_EQ(i3.params["idiosyncrasy"], "I3");
  EXPECT_EQ(i3.find("effect_pool")->kind, MetricKind::modelled);
  EXPECT_EQ(i3.find("effect_pool")->origin, "emulated:dcpmm");
  EXPECT_EQ(i3.find("effect_dram")->kind, MetricKind::measured);
  const auto recs = recommendation_records(recommend(rs, cs));
  EXPECT_EQ(recs[2].find("impact_pool")->kind, MetricKind::modelled);  // R3 rests on I3's runs
  EXPECT_EQ(recs[5].find("impact_pool")->kind, MetricKind::modelled);  // R6 on I3's effect
  EXPECT_EQ(recs[0].find("impact_pool")->kind, MetricKind::measured);  // R1 on I1's
}

std::string note(const RunRecord& r, const std::string& key) {
  for (const auto& [k, v] : r.notes)
    if (k == key) return v;
  return "(none)";
}

TEST(Classify, RowsAreNamedAndCarryVerdictNotesAndKinds) {
  const auto cs = classify(fixture(), PublishedSheets::parse(kSheets));
  const auto rows = classification_records(cs);
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[0].name, "idio.classification/idiosyncrasy:I1");
  EXPECT_EQ(rows[0].case_name, "classification");
  EXPECT_EQ(note(rows[0], "verdict"), "present");
  EXPECT_EQ(note(rows[0], "pmem_specific"), "no");
  EXPECT_EQ(note(rows[0], "pool_emulated"), "no");
  EXPECT_EQ(note(rows[0], "present_at"), "1.2");
  EXPECT_EQ(note(rows[0], "specific_at"), "1.25");
  EXPECT_EQ(note(rows[0], "not_applicable_because"), "(none)");
  EXPECT_EQ(note(rows[3], "verdict"), "not_applicable");
  EXPECT_EQ(note(rows[3], "not_applicable_because"), "runs_skipped");
  EXPECT_EQ(note(rows[3], "skip_reason"), "one NUMA node (node 0): remote p-store bandwidth needs at least two");
  EXPECT_EQ(note(rows[6], "not_applicable_because"), "no_media_counters");
  EXPECT_EQ(note(rows[6], "skip_reason"), "(none)");
  for (const auto& r : rows)
    EXPECT_EQ(note(r, "reasoning"), "(none)") << "the report words the verdicts, not the records";
  const Metric* pub = rows[0].find("effect_published_pmem");
  ASSERT_NE(pub, nullptr);
  EXPECT_EQ(pub->kind, MetricKind::published);
  EXPECT_NE(pub->origin.find("[PMIdioBench]"), std::string::npos);
  EXPECT_EQ(rows[0].find("effect_pool")->kind, MetricKind::measured);
  EXPECT_TRUE(std::isnan(rows[3].find("effect_pool")->value));  // I4: not measured
}

// A NUMA node measured beside the pool (a CXL expander, say): its loads 2.5x slower than local DRAM's at
// the same p-store cost, so its I1 effect (p-store / load) is 2x where DRAM's is 5x.
std::vector<RunRecord> with_numa_tier() {
  std::vector<RunRecord> rs = fixture();
  for (const auto& [op, ns] : {std::pair{"load", 50.0}, std::pair{"pstore", 100.0}})
    rs.push_back(run("i1_latency",
                     {{"medium", "numa:2"}, {"op", op}, {"flush", "clwb"}, {"hit_ratio", 1.0}, {"threads", 1}},
                     {{"latency_p50", ns}}));
  // Random small writes 4x slower than sequential ones there: I3 present, and specific to the tier (DRAM 1.1x).
  rs.push_back(run("i3_small_writes", {{"medium", "numa:2"}, {"pattern", "seq"}, {"size", 64}, {"threads", 2}},
                   {{"bandwidth", 2000}}));
  rs.push_back(run("i3_small_writes", {{"medium", "numa:2"}, {"pattern", "rand"}, {"size", 64}, {"threads", 2}},
                   {{"bandwidth", 500}}));
  rs.push_back(run("i1_latency", {{"medium", "numa:10"}, {"op", "load"}, {"hit_ratio", 1.0}, {"threads", 1}}, {},
                   RunStatus::error, "node 10 has no memory"));
  return rs;
}

TEST(Classify, EachNumaNodeMeasuredIsATierJudgedAgainstDram) {
  const auto runs = with_numa_tier();
  EXPECT_EQ(numa_tiers(runs), std::vector<std::string>{"numa:2"});  // node 10's run failed: no tier
  const auto cs = classify(runs, PublishedSheets::parse(kSheets), /*pool_emulated=*/true, "numa:2");
  const auto& i1 = get(cs, "I1");
  EXPECT_EQ(i1.tier, "numa:2");
  EXPECT_DOUBLE_EQ(*i1.pool, 2.0);
  EXPECT_DOUBLE_EQ(*i1.dram, 5.0);
  EXPECT_EQ(i1.decision.verdict, Verdict::present);
  EXPECT_EQ(i1.decision.pmem_specific, std::optional<bool>(false));
  const auto& i3 = get(cs, "I3");
  EXPECT_DOUBLE_EQ(*i3.pool, 4.0);
  EXPECT_EQ(i3.decision.pmem_specific, std::optional<bool>(true));  // the pool's emulation is not the node's
  EXPECT_FALSE(i3.pool_emulated);
  EXPECT_EQ(get(cs, "I5").decision.verdict, Verdict::not_applicable);  // no I5 runs on the node
  // The pool's own verdicts do not move when a tier is measured beside it.
  EXPECT_DOUBLE_EQ(*get(classify(runs, PublishedSheets::parse(kSheets)), "I1").pool, 5.0);

  const auto rows = classification_records(cs);
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[0].name, "idio.classification/idiosyncrasy:I1/tier:numa:2");
  EXPECT_EQ(rows[0].params.value("tier", ""), "numa:2");
  EXPECT_EQ(note(rows[0], "tier_specific"), "no");
  EXPECT_EQ(note(rows[0], "pmem_specific"), "(none)");
  EXPECT_DOUBLE_EQ(rows[0].find("effect_tier")->value, 2.0);
  EXPECT_EQ(rows[0].find("effect_pool"), nullptr);
  bool ebr = false;
  for (const auto& r : rows)
    for (const auto& m : r.metrics)
      if (m.name == "ebr_random_smallest_numa_2") ebr = true;
  EXPECT_TRUE(ebr) << "a tier's supporting metrics are named after it";
}

TEST(Recommend, ImpactClassesFollowTable4) {
  EXPECT_EQ(impact_class(std::nullopt), ImpactClass::not_measured);
  EXPECT_EQ(impact_class(1.05), ImpactClass::none);
  EXPECT_EQ(impact_class(1.3), ImpactClass::low);
  EXPECT_EQ(impact_class(2.0), ImpactClass::moderate);
  EXPECT_EQ(impact_class(3.0), ImpactClass::moderate);
  EXPECT_EQ(impact_class(3.5), ImpactClass::high);
  EXPECT_STREQ(to_string(ImpactClass::not_measured), "not_measured");
}

TEST(Recommend, SevenRulesWithImpactsFromTheirIdiosyncrasies) {
  const auto rs = fixture();
  const auto cs = classify(rs, PublishedSheets{});
  const auto recs = recommend(rs, cs);
  ASSERT_EQ(recs.size(), 7u);
  EXPECT_EQ(recs[0].id, "R1");
  EXPECT_DOUBLE_EQ(*recs[0].impact_pool, 5.0);  // I1
  EXPECT_EQ(recs[0].impact_class, ImpactClass::high);
  EXPECT_DOUBLE_EQ(*recs[2].impact_pool, 4.0);    // R3: random 512 B over 64 B
  EXPECT_FALSE(recs[3].impact_pool.has_value());  // R4: I4 not measured
  EXPECT_DOUBLE_EQ(*recs[4].impact_pool, 1.5);    // R5: max(I5 1.0, I8 1.5)
  EXPECT_DOUBLE_EQ(*recs[5].impact_pool, 3.0);    // R6: max(I6 -, I3 3.0)
  EXPECT_EQ(recs[6].impact_class, ImpactClass::not_measured);
  const auto rows = recommendation_records(recs);
  EXPECT_EQ(rows[6].name, "idio.recommendation/rule:R7");
  EXPECT_EQ(note(rows[6], "impact_class"), "not_measured");
  EXPECT_EQ(note(rows[0], "rule"), "Avoid p-stores");
  EXPECT_EQ(note(rows[0], "follows_from"), "I1, I2");
  EXPECT_EQ(note(rows[0], "reasoning"), "(none)");
}

TEST(PublishedSheets, ParsesTheDumpFormat) {
  const auto s = PublishedSheets::parse(kSheets);
  EXPECT_DOUBLE_EQ(*s.number("I1", "C13"), 2500);
  EXPECT_FALSE(s.number("I1", "Z99").has_value());
  EXPECT_FALSE(s.number("I9", "A1").has_value());
  EXPECT_EQ(PublishedSheets::load("/nonexistent/file.txt").status().code(), Errc::not_found);
}

TEST(PublishedSheets, TheSharedReferenceGivesPMIdioBenchHeadlineRatios) {
  const std::string path = PublishedSheets::default_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not here";
  auto s = PublishedSheets::load(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const auto cs = classify({}, *s);
  // §4.1: "DRAM has a 6.7x difference between load and p-store latency, while PMEM has a 23.3x difference".
  EXPECT_NEAR(*get(cs, "I1").published_pmem, 23.3, 0.05);
  EXPECT_NEAR(*get(cs, "I1").published_dram, 6.7, 0.05);
  // §4.6: "The maximum degradation is 3.5x with PMEM but only 1.7x with DRAM."
  EXPECT_NEAR(*get(cs, "I6").published_pmem, 3.5, 0.1);
  EXPECT_NEAR(*get(cs, "I6").published_dram, 1.7, 0.1);
}

}  // namespace
}  // namespace pmlab::suites::idio
