// `pmlab run --model / --emulate` end to end through the runner: which runs get a model, what the
// context and the records say, and the one-line errors.
#include "pmlab/model/run_devices.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/temp_dir.hpp"
#include "pmlab/bench/runner.hpp"

namespace pmlab::model {
namespace {

using pmlab::testing::TempDir;

// A case that exists only in the test binary: random 64 B persists over 1 MiB, DRAM and the pool.
const bench::CaseRegistration persist_case{bench::CaseDef{
    .suite = "modeltest",
    .name = "persist",
    .summary = "random 64 B persists",
    .params = {bench::std_params::medium({"dram", "pool"}),
               bench::std_params::choice("domain", "adr only", {"adr"}, {"adr"})},
    .region_bytes = [](const bench::Params&) { return uint64_t{1} << 20; },
    .body =
        [](bench::RunContext& ctx) {
          ctx.set_bytes_per_op(64);
          ctx.run_threads([&](bench::ThreadState& t) {
            uint64_t state = 7;
            t.measure([&](uint64_t) {
              state = state * 6364136223846793005ULL + 1442695040888963407ULL;
              std::byte* line = ctx.region().base + (state >> 40) % (ctx.region().size / 64) * 64;
              line[0] = std::byte{1};
              ctx.persister().persist(line, 64);
            });
          });
        },
}};

bench::RunOptions options(const TempDir& dir) {
  bench::RunOptions o;
  o.selectors = {"modeltest.persist"};
  o.quick = true;
  o.ops = 3000;
  o.out_dir = dir.file("out");
  o.pool_path = dir.file("bench.pool");
  o.progress = false;
  o.command_line = "test";
  return o;
}

nlohmann::json load(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

const nlohmann::json& run_named(const nlohmann::json& doc, const std::string& medium) {
  for (const auto& r : doc["runs"])
    if (r["params"]["medium"] == medium) return r;
  throw std::runtime_error("no run on " + medium);
}

TEST(RunDevices, ModelAddsModelledMetricsToEveryRun) {
  TempDir dir;
  bench::RunOptions o = options(dir);
  o.model = "dcpmm";
  auto summary = bench::run(o);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ASSERT_EQ(summary->ok, 2);
  const nlohmann::json doc = load(summary->results_path);
  const auto& ctx = doc["context"]["model"];
  EXPECT_EQ(ctx["name"], "dcpmm");
  EXPECT_EQ(ctx["emulate"], false);
  EXPECT_EQ(ctx["scope"], "all runs");
  EXPECT_EQ(ctx["parameters"]["write_buffer_lines"], 64);
  for (const char* medium : {"dram", "pool"}) {
    const auto& m = run_named(doc, medium)["metrics"];
    ASSERT_TRUE(m.contains("ewr")) << medium;
    EXPECT_EQ(m["ewr"]["kind"], "modelled");
    EXPECT_EQ(m["ewr"]["model"], "dcpmm");
    // Random 64 B persists over 1 MiB: far more XPLines than the 64 the buffer holds per DIMM.
    EXPECT_LT(m["ewr"]["value"].get<double>(), 0.5) << medium;
    EXPECT_EQ(m["latency_avg"]["kind"], "measured") << medium;  // nothing was emulated
  }
}

TEST(RunDevices, EmulateSlowsAndLabelsOnlyThePoolRuns) {
  TempDir dir;
  bench::RunOptions o = options(dir);
  o.emulate = "dcpmm";
  auto summary = bench::run(o);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const nlohmann::json doc = load(summary->results_path);
  EXPECT_EQ(doc["context"]["model"]["emulate"], true);
  EXPECT_EQ(doc["context"]["model"]["scope"], "medium=pool runs");
  const auto& dram = run_named(doc, "dram")["metrics"];
  const auto& pool = run_named(doc, "pool")["metrics"];
  EXPECT_FALSE(dram.contains("ewr"));
  EXPECT_EQ(dram["latency_avg"]["kind"], "measured");
  EXPECT_EQ(pool["latency_avg"]["kind"], "modelled");
  EXPECT_EQ(pool["latency_avg"]["model"], "emulated:dcpmm");
  EXPECT_EQ(pool["ewr"]["model"], "dcpmm");
  EXPECT_GT(pool["emulation_wait_per_fence"]["value"].get<double>(), 0.0);
  // Each random persist waits for a read-modify-write read: a lower bound that cannot flake.
  EXPECT_GT(pool["latency_p50"]["value"].get<double>(), 300.0);
}

TEST(RunDevices, TheConfigHashSaysWhetherARunWasModelled) {
  TempDir dir;
  bench::RunOptions plain = options(dir), modelled = options(dir);
  plain.out_dir = dir.file("plain");
  modelled.model = "c3";
  auto a = bench::run(plain);
  auto b = bench::run(modelled);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(load(a->results_path)["context"]["config_hash"], load(b->results_path)["context"]["config_hash"]);
  EXPECT_FALSE(load(a->results_path)["context"].contains("model"));
}

TEST(RunDevices, BadDevicesAreOneLineErrors) {
  TempDir dir;
  bench::RunOptions o = options(dir);
  o.model = "optane9000";
  auto r = bench::run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Errc::invalid_argument);
  EXPECT_EQ(r.status().message().rfind("--model: ", 0), 0u) << r.status().message();

  o.model = "dcpmm";
  o.emulate = "c1";
  r = bench::run(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("different devices"), std::string::npos);

  o.model.clear();
  o.emulate = dir.file("missing.json");
  r = bench::run(o);
  EXPECT_EQ(r.status().code(), Errc::not_found);
}

TEST(RunDevices, BothFlagsOnOneDeviceModelDramAndEmulateThePool) {
  auto d = resolve_run_devices("dcpmm", "c4");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_FALSE(model_for_run(*d, false)->emulating());
  EXPECT_TRUE(model_for_run(*d, true)->emulating());
  auto only_emulate = resolve_run_devices("", "dcpmm");
  EXPECT_EQ(model_for_run(*only_emulate, false), nullptr);
  auto none = resolve_run_devices("", "");
  EXPECT_FALSE(none->active());
  EXPECT_TRUE(context_json(*none).is_null());
}

}  // namespace
}  // namespace pmlab::model
