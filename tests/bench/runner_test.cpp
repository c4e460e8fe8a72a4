// The runner end to end, and the results.json schema pinned by golden key lists.
#include "pmlab/bench/runner.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

#include "../support/temp_dir.hpp"
#include "pmlab/bench/context.hpp"

namespace pmlab::bench {
namespace {

using pmlab::testing::TempDir;

// Cases that exist only in the test binary, to drive the runner's paths.
const CaseRegistration ok_case{CaseDef{
    .suite = "selftest",
    .name = "touch",
    .summary = "writes one line per op",
    .params = {std_params::medium({"dram", "pool"}), std_params::threads({"1"})},
    .region_bytes = [](const Params&) { return uint64_t{1} << 20; },
    .body =
        [](RunContext& ctx) {
          ctx.set_bytes_per_op(64);
          ctx.run_threads([&](ThreadState& t) {
            std::byte* base = ctx.region().base + static_cast<size_t>(t.index()) * 4096;
            t.measure([&](uint64_t i) {
              base[(i % 64) * 64] = std::byte{1};
              ctx.persister().persist(base + (i % 64) * 64, 64);
            });
          });
          ctx.metric("published_thing", 3.0, "ratio", MetricKind::published, "a paper");
        },
}};

const CaseRegistration failing_case{CaseDef{
    .suite = "selftest",
    .name = "broken",
    .summary = "always throws",
    .params = {},
    .body = [](RunContext&) { throw std::runtime_error("deliberate failure"); },
}};

nlohmann::json load(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::vector<std::string> keys(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.push_back(it.key());
  std::sort(out.begin(), out.end());
  return out;
}

RunOptions quick_options(const TempDir& dir, std::vector<std::string> selectors) {
  RunOptions o;
  o.selectors = std::move(selectors);
  o.quick = true;
  o.ops = 200;
  o.out_dir = dir.file("out");
  o.pool_path = dir.file("bench.pool");
  o.progress = false;
  o.command_line = "test";
  return o;
}

// Leaves an environment variable libpmem reads set: every later run would run under it.
const CaseRegistration leaky_case{CaseDef{
    .suite = "selftest_state",
    .name = "leaky",
    .summary = "sets PMEM_NO_FLUSH and leaves it",
    .params = {},
    .body = [](RunContext&) { setenv("PMEM_NO_FLUSH", "1", 1); },
}};

TEST(Runner, ARunThatLeavesProcessStateChangedFailsByName) {
  TempDir dir;
  unsetenv("PMEM_NO_FLUSH");
  auto summary = run(quick_options(dir, {"selftest_state.leaky", "selftest.touch"}));
  unsetenv("PMEM_NO_FLUSH");
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->errors, 1);
  EXPECT_EQ(summary->ok, 2);  // the runs after it are judged from the new state
  nlohmann::json doc = load(summary->results_path);
  const auto& leaky = doc["runs"][0];
  EXPECT_EQ(leaky["status"], "error");
  EXPECT_NE(leaky["reason"].get<std::string>().find("PMEM_NO_FLUSH=(unset) PMEM_NO_MOVNT"), std::string::npos)
      << leaky["reason"];
  EXPECT_NE(leaky["reason"].get<std::string>().find("PMEM_NO_FLUSH=1"), std::string::npos);
}

TEST(Runner, WritesTheSchemaVersionOneDocument) {
  TempDir dir;
  auto summary = run(quick_options(dir, {"selftest.touch"}));
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->ok, 2);
  nlohmann::json doc = load(summary->results_path);

  // Golden: renaming or removing any of these bumps schema_version (docs/results-schema.md).
  EXPECT_EQ(doc["schema_version"], kSchemaVersion);
  EXPECT_EQ(keys(doc), (std::vector<std::string>{"checks", "context", "pmlab_version", "runs", "schema_version"}));
  const std::vector<std::string> context_keys = {"command_line",
                                                 "config_hash",
                                                 "counters",
                                                 "cpu",
                                                 "date",
                                                 "durability_domain",
                                                 "flush_instruction",
                                                 "git_revision",
                                                 "hardware_counters",
                                                 "host",
                                                 "interrupted",
                                                 "kernel",
                                                 "media_pages",
                                                 "memory_tiers",
                                                 "numa_nodes",
                                                 "pool",
                                                 "quick",
                                                 "reference_data",
                                                 "repetitions",
                                                 "run_control",
                                                 "run_id",
                                                 "skipped",
                                                 "timer",
                                                 "transparent_hugepages"};
  EXPECT_EQ(keys(doc["context"]), context_keys);
  EXPECT_EQ(keys(doc["context"]["cpu"]),
            (std::vector<std::string>{"caches", "cores_used", "isa", "logical_cpus", "model", "physical_cores_used",
                                      "tsc_ghz", "vendor"}));
  EXPECT_EQ(keys(doc["context"]["pool"]),
            (std::vector<std::string>{"backing", "filesystem", "medium", "path", "placement_step_bytes", "size_bytes",
                                      "store_granularity"}));
  EXPECT_EQ(doc["context"]["pool"]["medium"], "emulated");
  EXPECT_EQ(doc["context"]["pool"]["filesystem"], "tmpfs");
  EXPECT_EQ(doc["context"]["pool"]["backing"]["label"], "dram");  // tmpfs: DRAM pages, no persistence domain
  EXPECT_TRUE(doc["context"]["pool"]["backing"]["persistence_domain"].is_null());

  ASSERT_EQ(doc["runs"].size(), 2u);
  const auto& r = doc["runs"][0];
  EXPECT_EQ(keys(r), (std::vector<std::string>{"case", "config_hash", "histogram", "metrics", "name", "params",
                                               "reason", "status", "suite"}));
  EXPECT_EQ(r["name"], "selftest.touch/medium:dram/threads:1");
  EXPECT_EQ(doc["runs"][1]["params"]["medium"], "pool");
  EXPECT_NE(r["config_hash"], doc["runs"][1]["config_hash"]);
  for (const char* m : {"throughput", "bandwidth", "latency_avg", "latency_p50", "latency_p99", "latency_p999",
                        "latency_max", "flushes_per_op", "fences_per_op", "nt_bytes_per_op", "ops"}) {
    ASSERT_TRUE(r["metrics"].contains(m)) << m;
    EXPECT_EQ(keys(r["metrics"][m]), (std::vector<std::string>{"kind", "unit", "value"})) << m;
    EXPECT_EQ(r["metrics"][m]["kind"], "measured");
  }
  EXPECT_EQ(r["metrics"]["ops"]["value"], 200);
  EXPECT_EQ(r["metrics"]["fences_per_op"]["value"], 1.0);
  EXPECT_EQ(r["metrics"]["published_thing"]["source"], "a paper");
  EXPECT_EQ(r["metrics"]["published_thing"]["kind"], "published");
  // A pool pmlab made at a path the caller named is the caller's, and is kept.
  EXPECT_TRUE(std::filesystem::exists(dir.file("bench.pool")));
}

TEST(Runner, AFailingCaseIsRecordedAndTheRestRuns) {
  TempDir dir;
  auto summary = run(quick_options(dir, {"selftest"}));
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->errors, 1);
  EXPECT_EQ(summary->ok, 2);
  nlohmann::json doc = load(summary->results_path);
  bool found = false;
  for (const auto& r : doc["runs"])
    if (r["name"] == "selftest.broken") {
      found = true;
      EXPECT_EQ(r["status"], "error");
      EXPECT_EQ(r["reason"], "deliberate failure");
    }
  EXPECT_TRUE(found);
}

TEST(Runner, MoreThreadsThanCpusIsSkippedWithTheReason) {
  TempDir dir;
  RunOptions o = quick_options(dir, {"selftest.touch"});
  ASSERT_TRUE(parse_override("threads=1024", o.overrides).ok());
  ASSERT_TRUE(parse_override("medium=dram", o.overrides).ok());
  auto summary = run(o);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->skipped, 1);
  nlohmann::json doc = load(summary->results_path);
  EXPECT_NE(doc["runs"][0]["reason"].get<std::string>().find("exceeds"), std::string::npos);
}

TEST(Runner, RejectsUnknownSelectorsParametersAndFilters) {
  TempDir dir;
  EXPECT_EQ(run(quick_options(dir, {"nosuchsuite"})).status().code(), Errc::invalid_argument);
  RunOptions o = quick_options(dir, {"selftest.touch"});
  ASSERT_TRUE(parse_override("sizee=64", o.overrides).ok());
  auto r = run(o);
  EXPECT_EQ(r.status().code(), Errc::invalid_argument);
  EXPECT_NE(r.status().message().find("sizee"), std::string::npos);
  RunOptions f = quick_options(dir, {"selftest.touch"});
  f.filter = "([";
  auto bad = run(f);
  EXPECT_EQ(bad.status().code(), Errc::invalid_argument);
  EXPECT_EQ(bad.status().message(), "--filter '([' is not a valid regular expression");
  f.filter = "matches-nothing";
  EXPECT_EQ(run(f).status().code(), Errc::invalid_argument);
}

// A pool-only case beside one that takes every medium: a --set medium=V for the suite reaches both.
const CaseRegistration pool_only_case{CaseDef{
    .suite = "selftest_media",
    .name = "pool_only",
    .summary = "a peer that maps a pool file of its own",
    .params = {std_params::choice("medium", "pool: the peer needs a pool file", {"pool"}, {"pool"})},
    .region_bytes = [](const Params&) { return uint64_t{4096}; },
    .body = [](RunContext& ctx) { ctx.metric("ran", 1.0, "count"); },
}};
const CaseRegistration any_medium_case{CaseDef{
    .suite = "selftest_media",
    .name = "any",
    .summary = "runs on every medium",
    .params = {std_params::medium({"dram", "pool"})},
    .region_bytes = [](const Params&) { return uint64_t{4096}; },
    .body = [](RunContext& ctx) { ctx.metric("ran", 1.0, "count"); },
}};

TEST(Runner, ASetValueACaseCannotTakeLeavesItOutWhenAnotherTakesIt) {
  TempDir dir;
  RunOptions o = quick_options(dir, {"selftest_media"});
  ASSERT_TRUE(parse_override("medium=dram", o.overrides).ok());
  auto plan = dry_run(o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->names, std::vector<std::string>{"selftest_media.any/medium:dram"});
  ASSERT_EQ(plan->left_out.refused.size(), 1u);
  EXPECT_EQ(plan->left_out.refused[0].first, "selftest_media.pool_only");
  EXPECT_EQ(plan->left_out.refused[0].second,
            "not run: it takes no value of --set medium (parameter medium=dram: must be one of pool; medium: pool: "
            "the peer needs a pool file)");

  // The case keeps the values it takes.
  ASSERT_TRUE(parse_override("medium=dram,pool", o.overrides).ok());
  plan = dry_run(o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->names,
            (std::vector<std::string>{"selftest_media.pool_only/medium:pool", "selftest_media.any/medium:dram",
                                      "selftest_media.any/medium:pool"}));
  ASSERT_EQ(plan->left_out.refused.size(), 1u);
  EXPECT_EQ(plan->left_out.refused[0].second, "run without some values: parameter medium=dram: must be one of pool");

  // The results say what was left out and why.
  auto summary = run(o);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->ok, 3);
  const nlohmann::json doc = load(summary->results_path);
  bool recorded = false;
  for (const auto& s : doc["context"]["skipped"])
    recorded = recorded || (s["name"] == "selftest_media.pool_only" &&
                            s["reason"].get<std::string>().find("medium=dram") != std::string::npos);
  EXPECT_TRUE(recorded) << doc["context"]["skipped"].dump();
}

TEST(Runner, ASetValueNoSelectedCaseTakesIsRefused) {
  TempDir dir;
  RunOptions alone = quick_options(dir, {"selftest_media.pool_only"});
  ASSERT_TRUE(parse_override("medium=dram", alone.overrides).ok());
  auto plan = dry_run(alone);
  EXPECT_EQ(plan.status().code(), Errc::invalid_argument);
  EXPECT_EQ(plan.status().message(), "selftest_media.pool_only: parameter medium=dram: must be one of pool");
  // A typo is told what the most permissive case takes, not the pool-only case's one choice.
  RunOptions typo = quick_options(dir, {"selftest_media"});
  ASSERT_TRUE(parse_override("medium=dram,poo", typo.overrides).ok());
  plan = dry_run(typo);
  EXPECT_EQ(plan.status().code(), Errc::invalid_argument);
  EXPECT_NE(plan.status().message().find("selftest_media.any: parameter medium=poo: must be one of dram|pool|numa"),
            std::string::npos)
      << plan.status().message();
}

TEST(Runner, NeverOverwritesAFileGivenAsThePool) {
  TempDir dir;
  RunOptions o = quick_options(dir, {"selftest.touch"});
  {
    std::ofstream out(o.pool_path);
    out << std::string(1 << 16, 'q');
  }
  const uint64_t before = pmlab::testing::digest(o.pool_path);
  auto r = run(o);
  EXPECT_EQ(r.status().code(), Errc::not_a_pool);
  EXPECT_EQ(pmlab::testing::digest(o.pool_path), before);
}

TEST(Runner, CoreSuiteRunsAndReportsTheVocabularyOverhead) {
  TempDir dir;
  RunOptions o = quick_options(dir, {"core"});
  o.filter = "size:64(/|$)";
  ASSERT_TRUE(parse_override("flush=clflush", o.overrides).ok());
  auto summary = run(o);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->errors, 0);
  nlohmann::json doc = load(summary->results_path);
  int overhead_runs = 0;
  for (const auto& r : doc["runs"]) {
    if (r["case"] == "overhead") {
      ++overhead_runs;
      EXPECT_GT(r["metrics"]["overhead_ratio"]["value"].get<double>(), 0.0);
    }
    if (r["case"] == "persist" && r["params"]["domain"] == "adr") {
      EXPECT_EQ(r["metrics"]["flushes_per_op"]["value"], 1.0) << r["name"];
    }
  }
  EXPECT_EQ(overhead_runs, 2);  // dram and pool
}

// Repetitions of a pool run measure at different places of the pool, in steps, while the region fits.
TEST(Runner, RepetitionsMoveThroughThePoolWhileTheRegionFits) {
  constexpr uint64_t step = kPlacementStep;
  EXPECT_EQ(placement_offset(4 * step, step, 0), 0u);
  EXPECT_EQ(placement_offset(4 * step, step, 1), step);
  EXPECT_EQ(placement_offset(4 * step, step, 3), 3 * step);
  EXPECT_EQ(placement_offset(4 * step, step, 4), 0u) << "four places: the fifth repetition starts over";
  EXPECT_EQ(placement_offset(4 * step, 4 * step, 2), 0u) << "no room to move";
  EXPECT_EQ(placement_offset(step, 2 * step, 1), 0u) << "a region larger than the area (the run fails on it)";
  for (int pass = 0; pass < 12; ++pass) {
    const uint64_t off = placement_offset(3 * step + 4096, step + 8192, pass);
    EXPECT_EQ(off % (2 << 20), 0u);
    EXPECT_LE(off + step + 8192, 3 * step + 4096) << "pass " << pass;
  }
}

}  // namespace
}  // namespace pmlab::bench
