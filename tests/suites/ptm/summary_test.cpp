// The ptm suite's derived rows from hand-built run records (inputs, not results): the share of a
// transaction's time each cost takes, and the scaling rows with the redo hash map's target.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"

namespace pmlab::suites::ptm {
namespace {

using record::Metric;
using record::MetricKind;
using record::RunRecord;

std::vector<RunRecord> derive(const std::vector<RunRecord>& runs) {
  for (const bench::SuiteSummary& s : bench::Registry::instance().summaries())
    if (s.suite == "ptm") return s.derive(runs, nlohmann::ordered_json::object());
  ADD_FAILURE() << "the ptm suite registers no summary";
  return {};
}

const RunRecord* row_named(const std::vector<RunRecord>& rows, const std::string& name) {
  for (const RunRecord& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

RunRecord breakdown(const std::string& ptm, const std::string& cost, std::vector<double> throughputs) {
  RunRecord r;
  r.suite = "ptm";
  r.case_name = "breakdown";
  r.params["ptm"] = ptm;
  r.params["workload"] = "sps-1";
  r.params["cost"] = cost;
  Metric m{"throughput", throughputs.front(), "ops/s", MetricKind::measured, {}};
  if (throughputs.size() > 1) m.stats = record::summarize(throughputs, "repetitions");
  r.set(std::move(m));
  return r;
}

RunRecord tx(const std::string& ptm, const std::string& workload, int threads, double throughput) {
  RunRecord r;
  r.suite = "ptm";
  r.case_name = "tx";
  r.params["ptm"] = ptm;
  r.params["durability"] = "adr";
  r.params["workload"] = workload;
  r.params["medium"] = "pool";
  r.params["threads"] = threads;
  r.set(Metric{"throughput", throughput, "ops/s", MetricKind::measured, {}});
  return r;
}

TEST(PtmSummary, ACostsShareIsOneLessFullOverWithoutIt) {
  const auto rows = derive(
      {breakdown("redo", "full", {8e5}), breakdown("redo", "no-flush", {1e6}), breakdown("redo", "no-fence", {2e6})});
  const RunRecord* flush = row_named(rows, "ptm.share/ptm:redo/workload:sps-1/cost:no-flush");
  const RunRecord* fence = row_named(rows, "ptm.share/ptm:redo/workload:sps-1/cost:no-fence");
  ASSERT_NE(flush, nullptr);
  ASSERT_NE(fence, nullptr);
  EXPECT_NEAR(flush->find("share")->value, 0.2, 1e-12);
  EXPECT_NEAR(fence->find("share")->value, 0.6, 1e-12);
  EXPECT_EQ(row_named(rows, "ptm.share/ptm:redo/workload:sps-1/cost:full"), nullptr) << "full is the base";
}

TEST(PtmSummary, RepeatedRunsGiveTheShareOfEachPairAndItsInterval) {
  // Repetition i of the full run is paired with repetition i of the run without the cost.
  const auto rows = derive({breakdown("undo", "full", {1e6, 9e5, 8e5}), breakdown("undo", "no-log", {2e6, 1e6, 1e6})});
  const RunRecord* log = row_named(rows, "ptm.share/ptm:undo/workload:sps-1/cost:no-log");
  ASSERT_NE(log, nullptr);
  const Metric* share = log->find("share");
  ASSERT_NE(share, nullptr);
  ASSERT_TRUE(share->stats.has_value());
  // Pairs: 1 - 0.5, 1 - 0.9, 1 - 0.8: median 0.2, every sample a share.
  EXPECT_NEAR(share->value, 0.2, 1e-12);
  ASSERT_EQ(share->stats->samples.size(), 3u);
  EXPECT_NEAR(share->stats->min, 0.1, 1e-12);
  EXPECT_NEAR(share->stats->max, 0.5, 1e-12);
}

TEST(PtmSummary, ABreakdownWithoutItsFullRunGivesNoShare) {
  const auto rows = derive({breakdown("redo", "no-flush", {1e6})});
  EXPECT_TRUE(rows.empty());
}

TEST(PtmSummary, ScalingRowsCarryTheRedoHashMapsTargetOnly) {
  const auto rows = derive({tx("redo", "hashmap", 1, 1e6), tx("redo", "hashmap", 2, 1.2e6),
                            tx("undo", "hashmap", 1, 1e6), tx("undo", "hashmap", 2, 1.9e6)});
  const RunRecord* redo = row_named(rows, "ptm.scaling/ptm:redo/durability:adr/workload:hashmap/medium:pool/threads:2");
  const RunRecord* undo = row_named(rows, "ptm.scaling/ptm:undo/durability:adr/workload:hashmap/medium:pool/threads:2");
  ASSERT_NE(redo, nullptr);
  ASSERT_NE(undo, nullptr);
  EXPECT_NEAR(redo->find("scaling")->value, 1.2, 1e-12);
  EXPECT_NEAR(undo->find("scaling")->value, 1.9, 1e-12);
  ASSERT_EQ(redo->targets.size(), 1u);
  EXPECT_EQ(redo->targets[0].verdict, record::Verdict::missed);  // 1.2 < 1.5
  EXPECT_TRUE(undo->targets.empty()) << "only the redo hash map under ADR at 2 threads carries a target";
}

}  // namespace
}  // namespace pmlab::suites::ptm
