// The registered plausibility rules and cross-checks on records shaped by hand: each must flag what it
// guards against and pass what it must not flag.
#include "pmlab/bench/checks.hpp"

#include <gtest/gtest.h>

#include <map>

#include "pmlab/record/query.hpp"

namespace pmlab::bench {
namespace {

using record::Metric;
using record::MetricKind;
using record::param_text;
using record::RunRecord;

RunRecord run(const std::string& full_case, nlohmann::ordered_json params, std::vector<Metric> metrics) {
  RunRecord r;
  const auto dot = full_case.find('.');
  r.suite = full_case.substr(0, dot);
  r.case_name = full_case.substr(dot + 1);
  r.params = std::move(params);
  r.name = full_case;
  for (const auto& [k, v] : r.params.items())
    r.name += "/" + k + ":" + (v.is_string() ? v.get<std::string>() : v.dump());
  for (auto& m : metrics) r.set(std::move(m));
  return r;
}

Metric m(const std::string& name, double v, const std::string& unit = "ratio") {
  return Metric{name, v, unit, MetricKind::measured, {}};
}

Metric sampled(const std::string& name, const std::vector<double>& samples, const std::string& unit) {
  Metric x = m(name, samples[samples.size() / 2], unit);
  x.stats = record::summarize(samples, "repetitions");
  return x;
}

// The entries of one rule in the checks of `runs`.
std::vector<nlohmann::ordered_json> of_rule(const std::vector<RunRecord>& runs, const std::string& rule) {
  std::vector<nlohmann::ordered_json> out;
  for (const auto& e : run_checks(runs))
    if (e["rule"] == rule) out.push_back(e);
  return out;
}

std::string verdicts(const std::vector<nlohmann::ordered_json>& entries) {
  std::string s;
  for (const auto& e : entries) s += e["verdict"].get<std::string>() + " ";
  return s;
}

TEST(Checks, ANegativeShareIsFlaggedOnlyBeyondItsInterval) {
  Metric clear = m("share", -0.05);
  clear.stats = record::summarize({-0.06, -0.05, -0.04}, "repetitions");
  Metric noisy = m("share", -0.01);
  noisy.stats = record::summarize({-0.03, -0.01, 0.02}, "repetitions");
  const std::vector<RunRecord> runs = {run("ptm.share", {{"cost", "no-fence"}}, {clear}),
                                       run("ptm.share", {{"cost", "no-log"}}, {noisy}),
                                       run("ptm.share", {{"cost", "no-flush"}}, {m("share", -0.02)})};
  const auto e = of_rule(runs, "no-negative-share");
  // Both violations are of one case: one entry listing both runs (no interval: any negative value counts).
  EXPECT_EQ(verdicts(e), "violated ok ");
  EXPECT_EQ(e[0]["runs"], (nlohmann::ordered_json{"ptm.share/cost:no-fence", "ptm.share/cost:no-flush"}));
  EXPECT_EQ(e[0]["detail"].get<std::string>().rfind("2 findings: ", 0), 0u) << e[0]["detail"];
  EXPECT_EQ(e[1]["runs"], (nlohmann::ordered_json{"ptm.share/cost:no-log"}));
}

TEST(Checks, APstoreFasterThanACacheHitIsFlagged) {
  const std::vector<RunRecord> runs = {
      run("idio.i1_latency", {{"medium", "pool"}, {"op", "load"}, {"hit_ratio", 1.0}}, {m("latency_p50", 20, "ns")}),
      run("idio.i1_latency", {{"medium", "pool"}, {"op", "pstore"}, {"hit_ratio", 1.0}}, {m("latency_p50", 10, "ns")}),
      run("idio.i1_latency", {{"medium", "pool"}, {"op", "pstore"}, {"hit_ratio", 0.0}},
          {m("latency_p50", 300, "ns")})};
  EXPECT_EQ(verdicts(of_rule(runs, "pstore-not-below-cache-hit")), "violated ok ");
}

TEST(Checks, LittlesLawFlagsBothDirectionsAndExplainsOnlyOverlap) {
  const std::vector<RunRecord> runs = {
      run("x.a", {{"threads", 1}}, {m("throughput", 1e6, "ops/s"), m("latency_avg", 1000, "ns")}),  // 1.0
      run("x.b", {{"threads", 2}}, {m("throughput", 1e6, "ops/s"), m("latency_avg", 3600, "ns")}),  // 1.8
      run("x.c", {{"threads", 1}}, {m("throughput", 1e6, "ops/s"), m("latency_avg", 500, "ns")})};  // 0.5
  const auto e = of_rule(runs, "littles-law");
  ASSERT_EQ(verdicts(e), "violated violated ok ");
  EXPECT_EQ(e[0]["runs"][0], "x.b/threads:2");
  EXPECT_FALSE(e[0]["explained"].is_null());
  EXPECT_EQ(e[1]["runs"][0], "x.c/threads:1");
  EXPECT_TRUE(e[1]["explained"].is_null());
  // A timed region (2 ns x a batch of 40) under 5x the stamp cost subtracted from it is not judged.
  const auto short_ops = of_rule({run("x.d", {{"threads", 1}},
                                      {m("throughput", 3e8, "ops/s"), m("latency_avg", 2, "ns"),
                                       m("ops_per_latency_sample", 40, "count"), m("timer_overhead_ns", 30, "ns")})},
                                 "littles-law");
  ASSERT_EQ(verdicts(short_ops), "not_applicable ");
  EXPECT_NE(short_ops[0]["detail"].get<std::string>().find("not judged"), std::string::npos);
}

// Judged from the repetitions' intervals: beyond noise is intervals apart; one sample each is not compared
// (one run of a point moves by more than any margin on a machine sharing its last-level cache).
TEST(Checks, APersistentStructureAboveItsDramTwinIsFlagged) {
  auto ycsb = [](const char* structure, const char* mode, std::vector<double> t) {
    return run("ds.ycsb",
               {{"structure", structure},
                {"mode", mode},
                {"breakdown", "none"},
                {"medium", std::string(mode) == "dram" ? "dram" : "pool"},
                {"workload", "a"},
                {"threads", 1}},
               {t.size() > 1 ? sampled("throughput", t, "ops/s") : m("throughput", t[0], "ops/s")});
  };
  const std::vector<RunRecord> runs = {
      ycsb("bptree", "dram", {100, 101, 99}),    ycsb("bptree", "persist", {150, 149, 152}),
      ycsb("hashtable", "dram", {100, 110, 95}), ycsb("hashtable", "persist", {105, 99, 108}),
      ycsb("skiplist", "dram", {100}),           ycsb("skiplist", "persist", {150})};
  EXPECT_EQ(verdicts(of_rule(runs, "persistent-not-above-dram")), "violated ok not_applicable ");
}

// On a NUMA node's memory a persistent run is held to DRAM mode on the same node: a slow node's DRAM-mode run
// beside it must not make the pool's persist run look faster than DRAM.
TEST(Checks, APersistentStructureIsHeldToDramOnTheSameMemory) {
  auto ycsb = [](const char* mode, const char* medium, std::vector<double> t) {
    return run("ds.ycsb",
               {{"structure", "bptree"},
                {"mode", mode},
                {"breakdown", "none"},
                {"medium", medium},
                {"workload", "a"},
                {"threads", 1}},
               {sampled("throughput", t, "ops/s")});
  };
  const std::vector<RunRecord> runs = {ycsb("dram", "numa:2", {50, 51, 49}), ycsb("dram", "dram", {100, 101, 99}),
                                       ycsb("persist", "pool", {80, 79, 81}), ycsb("persist", "numa:2", {60, 61, 59})};
  std::map<std::string, std::pair<std::string, std::string>> judged;  // persist run -> (DRAM twin, verdict)
  for (const auto& f : of_rule(runs, "persistent-not-above-dram")) judged[f["runs"][0]] = {f["runs"][1], f["verdict"]};
  ASSERT_EQ(judged.size(), 2u);
  // The pool's run against local DRAM: slower, ok; the node's against DRAM mode on the node: faster, flagged.
  EXPECT_EQ(judged[runs[2].name], (std::pair<std::string, std::string>{runs[1].name, "ok"}));
  EXPECT_EQ(judged[runs[3].name], (std::pair<std::string, std::string>{runs[0].name, "violated"}));
}

TEST(Checks, CrossChecksCompareTheSameOperation) {
  auto i1 = [](double f, double ns) {
    return run("idio.i1_latency",
               {{"medium", "pool"}, {"op", "pstore"}, {"flush", "clwb"}, {"hit_ratio", f}, {"threads", 1}},
               {m("latency_p50", ns, "ns")});
  };
  const std::vector<RunRecord> runs = {
      i1(1.0, 190), i1(0.0, 310),
      run("core.persist",
          {{"medium", "pool"}, {"domain", "adr"}, {"flush", "clwb"}, {"size", 64}, {"pattern", "rand"}, {"threads", 1}},
          {m("latency_p50", 300, "ns")})};
  EXPECT_EQ(verdicts(of_rule(runs, "i1-pstore-vs-core-persist")), "violated ");
  EXPECT_EQ(verdicts(of_rule(runs, "i1-uncached-pstore-vs-core-persist")), "ok ");
  EXPECT_EQ(verdicts(of_rule({}, "i1-pstore-vs-core-persist")), "not_applicable ");
}

// A logged YCSB update appends a 116-byte entry: its fences and written-back bytes per operation lie between
// a 64 B and a 256 B append's of the same writer, and it is not faster than the 64 B append beyond the
// margin (slower than the 256 B one it may be: the table update follows).
TEST(Checks, AYcsbUpdateLogsBetweenTheAppendsAroundItsEntrySize) {
  const nlohmann::ordered_json same = {{"medium", "pool"}, {"domain", "adr"},   {"flush", "clwb"},
                                       {"writer", "zero"}, {"padding", "none"}, {"stores", "cached"}};
  auto with = [&](const char* key, nlohmann::ordered_json v) {
    nlohmann::ordered_json p = same;
    p[key] = std::move(v);
    p["threads"] = 1;
    return p;
  };
  auto point = [&](const char* c, nlohmann::ordered_json p, double ns, double fences, double bytes) {
    return run(c, std::move(p),
               {m("throughput", 1e9 / ns, "ops/s"), m("fences_per_op", fences, "count"),
                m("flushed_bytes_per_op", bytes, "B"), m("nt_bytes_per_op", 0, "B")});
  };
  auto with_update = [&](double ns, double fences, double bytes) {
    return std::vector<RunRecord>{point("primitives.log_append", with("size", 64), 100, 1, 128),
                                  point("primitives.log_append", with("size", 256), 120, 1, 320),
                                  point("primitives.ycsb_write", with("records", 100000), ns, fences, bytes)};
  };
  EXPECT_EQ(verdicts(of_rule(with_update(180, 1, 192), "ycsb-write-vs-log-append")), "ok ");
  EXPECT_EQ(verdicts(of_rule(with_update(60, 1, 192), "ycsb-write-vs-log-append")),
            "violated ");  // faster than an append
  EXPECT_EQ(verdicts(of_rule(with_update(180, 2, 192), "ycsb-write-vs-log-append")), "violated ");  // a second fence
  EXPECT_EQ(verdicts(of_rule(with_update(180, 1, 64), "ycsb-write-vs-log-append")), "violated ");   // too few bytes
}

TEST(Checks, TheTwoNullStructuresAgreeOnlyWhereTheStreamHasOneType) {
  auto null_run = [](const char* structure, const char* workload, std::vector<double> ns) {
    std::vector<double> throughput;
    for (double x : ns) throughput.push_back(1e9 / x);
    return run("ds.ycsb", {{"structure", structure}, {"mode", "dram"}, {"workload", workload}, {"threads", 1}},
               {sampled("throughput", throughput, "ops/s")});
  };
  // Workload a mixes reads and updates: the spread stream is faster by design, not compared.
  EXPECT_EQ(
      verdicts(of_rule({null_run("null", "a", {5.9, 6.0, 6.1}), null_run("null-predictable", "a", {1.1, 1.2, 1.3})},
                       "null-structures-agree-on-one-type")),
      "not_applicable ");
  // Workload c is reads only: the same loop on the same operations.
  EXPECT_EQ(
      verdicts(of_rule({null_run("null", "c", {1.0, 1.1, 1.2}), null_run("null-predictable", "c", {1.1, 1.2, 1.4})},
                       "null-structures-agree-on-one-type")),
      "ok ");
  EXPECT_EQ(
      verdicts(of_rule({null_run("null", "c", {1.0, 1.1, 1.2}), null_run("null-predictable", "c", {2.0, 2.1, 2.2})},
                       "null-structures-agree-on-one-type")),
      "violated ");
}

// I2 is held against the likwid comparison's rounds from the repetitions placed as I2's run was (near
// or apart, by the line-transfer probe); with none placed alike the pair is reported as not compared.
TEST(Checks, I2MeetsTheLikwidComparisonOnlyWhereTheirCpusWerePlacedAlike) {
  auto i2 = [](double gbs, double ns) {
    return run("idio.i2_bandwidth", {{"medium", "dram"}, {"op", "load"}, {"size", 65536}, {"threads", 2}},
               {m("bandwidth", gbs * 1000, "MiB/s"), m("core_to_core_ns", ns, "ns")});
  };
  const RunRecord likwid = run("idio.vs_likwid", {{"medium", "dram"}, {"kernel", "load"}, {"threads", 2}},
                               {sampled("bandwidth", {100000, 110000, 50000}, "MiB/s"),
                                sampled("bandwidth_round1", {98000, 108000, 51000}, "MiB/s"),
                                sampled("bandwidth_round2", {101000, 112000, 49000}, "MiB/s"),
                                sampled("core_to_core_ns", {210, 220, 40}, "ns")});
  EXPECT_EQ(verdicts(of_rule({i2(52, 40), likwid}, "i2-vs-likwid-peer")), "ok ");         // the near repetition: ~50
  EXPECT_EQ(verdicts(of_rule({i2(52, 210), likwid}, "i2-vs-likwid-peer")), "violated ");  // apart: ~100
  const RunRecord only_apart =
      run("idio.vs_likwid", {{"medium", "dram"}, {"kernel", "load"}, {"threads", 2}},
          {sampled("bandwidth_round1", {98000, 108000}, "MiB/s"), sampled("core_to_core_ns", {210, 220}, "ns")});
  // Rounds of one near repetition at 50 and at 105 GB/s: the host moved the vCPUs within it.
  const RunRecord moved =
      run("idio.vs_likwid", {{"medium", "dram"}, {"kernel", "load"}, {"threads", 2}},
          {sampled("bandwidth_round1", {105000}, "MiB/s"), sampled("bandwidth_round2", {106000}, "MiB/s"),
           sampled("bandwidth_round3", {50000}, "MiB/s"), m("core_to_core_ns", 40, "ns")});
  const auto explained = of_rule({i2(52, 40), moved}, "i2-vs-likwid-peer");
  ASSERT_EQ(verdicts(explained), "violated ");
  EXPECT_FALSE(explained[0]["explained"].is_null());
  const auto entries = of_rule({i2(52, 40), only_apart}, "i2-vs-likwid-peer");
  ASSERT_EQ(verdicts(entries), "not_applicable ");
  EXPECT_NE(entries[0]["detail"].get<std::string>().find("not compared"), std::string::npos);
}

// A repetition whose probe found one core for two threads is left out of the ratio and flagged; the rest
// split by where the host placed the two CPUs (the line-transfer probe).
TEST(Checks, ScalingLeavesOutRepetitionsWithoutTheirCoresAndSplitsNearFromFar) {
  const RunRecord one =
      run("ptm.tx", {{"workload", "hashmap"}, {"threads", 1}}, {sampled("throughput", {10, 10, 10, 10}, "ops/s")});
  const RunRecord two = run("ptm.tx", {{"workload", "hashmap"}, {"threads", 2}},
                            {sampled("throughput", {18, 9, 19, 11}, "ops/s"), m("cores_probed", 2, "count"),
                             sampled("cores_available", {2.0, 1.1, 1.98, 1.97}, "count"),
                             sampled("core_to_core_ns", {40, 45, 50, 200}, "ns")});
  const Scaling s = scaling_of(two, one);
  EXPECT_EQ(s.pairs, 4u);
  EXPECT_EQ(s.excluded, 1u);
  ASSERT_TRUE(s.ratio);
  EXPECT_NEAR(s.ratio->value, 1.8, 1e-9);  // 1.8, 1.9, 1.1
  ASSERT_TRUE(s.near);
  EXPECT_NEAR(s.near->value, 1.85, 1e-9);
  ASSERT_TRUE(s.far);
  EXPECT_NEAR(s.far->value, 1.1, 1e-9);
  EXPECT_NE(scaling_exclusions(s).find("1 of 4"), std::string::npos);
  EXPECT_EQ(verdicts(of_rule({one, two}, "cores-available")), "violated ");
  const auto pairs = scaling_pairs<std::string>(
      std::vector<RunRecord>{one, two},
      [](const RunRecord& r) -> std::optional<std::string> { return param_text(r, "workload"); });
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].threads, 2);
}

// Two threads on the two SMT siblings of one core read as one core: the machine's shape, not a host that
// withheld a core, where the kernel says the CPUs share one.
TEST(Checks, SmtSiblingsAreExpectedToShareACore) {
  const auto two_on = [](std::optional<double> physical) {
    RunRecord r = run("ptm.tx", {{"workload", "hashmap"}, {"threads", 2}},
                      {sampled("throughput", {18, 19}, "ops/s"), m("cores_probed", 2, "count"),
                       sampled("cores_available", {1.02, 0.97}, "count")});
    if (physical) r.set(record::Metric{"physical_cores", *physical, "count", record::MetricKind::measured, {}});
    return r;
  };
  const auto siblings = of_rule({two_on(1)}, "cores-available");
  EXPECT_EQ(verdicts(siblings), "ok ");
  EXPECT_EQ(had_its_cores(two_on(1)), (std::vector<bool>{true, true}));
  EXPECT_EQ(verdicts(of_rule({two_on(2)}, "cores-available")), "violated ");
  EXPECT_EQ(verdicts(of_rule({two_on(std::nullopt)}, "cores-available")), "violated ");
  EXPECT_EQ(had_its_cores(two_on(std::nullopt)), (std::vector<bool>{false, false}));
  const auto half = of_rule({run("ptm.tx", {{"workload", "hashmap"}, {"threads", 4}},
                                 {sampled("throughput", {30}, "ops/s"), m("cores_probed", 4, "count"),
                                  m("physical_cores", 2, "count"), sampled("cores_available", {1.1}, "count")})},
                            "cores-available");
  ASSERT_EQ(verdicts(half), "violated ");
  EXPECT_NE(half[0]["detail"].get<std::string>().find("1.10 of 2 (4 CPUs, SMT siblings counted once)"),
            std::string::npos)
      << half[0]["detail"];
}

// The scaling row carries what explains it: the N-thread run's line-transfer probe and the hand-offs its
// workload implies (modelled, and kept so).
TEST(Checks, ScalingRowCarriesTheProbeAndTheModelledHandOffs) {
  const RunRecord one = run("ds.ycsb", {{"workload", "b"}, {"threads", 1}}, {sampled("throughput", {10, 10}, "ops/s")});
  RunRecord two = run("ds.ycsb", {{"workload", "b"}, {"threads", 2}},
                      {sampled("throughput", {16, 17}, "ops/s"), sampled("core_to_core_ns", {40, 210}, "ns")});
  two.set(record::Metric{"record_handoffs_per_op", 0.08, "ratio", record::MetricKind::modelled, "hand-off model"});
  const std::vector<RunRecord> runs{one, two};  // the pairs point into it
  const auto pairs = scaling_pairs<std::string>(
      runs, [](const RunRecord& r) -> std::optional<std::string> { return param_text(r, "workload"); });
  ASSERT_EQ(pairs.size(), 1u);
  RunRecord row;
  fill_scaling_row(row, pairs[0], "ds.ycsb", std::nullopt);
  ASSERT_NE(row.find("scaling"), nullptr);
  EXPECT_NEAR(row.find("scaling")->value, 1.65, 1e-9);
  ASSERT_NE(row.find("core_to_core_ns"), nullptr);
  const record::Metric* handoffs = row.find("record_handoffs_per_op");
  ASSERT_NE(handoffs, nullptr);
  EXPECT_EQ(handoffs->kind, record::MetricKind::modelled);
  EXPECT_DOUBLE_EQ(handoffs->value, 0.08);
}

}  // namespace
}  // namespace pmlab::bench
