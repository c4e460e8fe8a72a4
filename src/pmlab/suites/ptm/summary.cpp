// The ptm suite's derived rows (bench::SuiteSummary):
//   ptm.share/ptm:P/workload:W/cost:C   the share of a transaction's time that cost C takes ([PMDKOverheads]):
//       1 - full throughput / throughput with C switched off, from the ptm.breakdown runs. With repetitions the
//       share is the median of the per-repetition shares (a repetition's full and no-C runs ran in the same
//       pass) with its interval; a share whose interval includes 0 is not distinguishable from no cost.
//   ptm.scaling/ptm:P/durability:D/workload:W/medium:M/threads:N   ptm.tx's throughput at N threads / at 1 thread,
//       paired by repetition; the redo PTM's hash map (50% lookups) under ADR at 2 threads carries the
//       target of 1.5x (its concurrency control lets lookups and disjoint updates run at once).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/checks.hpp"
#include "pmlab/record/query.hpp"

namespace pmlab::suites::ptm {
namespace {

using record::Metric;
using record::RunRecord;

// The points that carry a scaling target, and the target.
struct ScalingTargetPoint {
  const char* ptm;
  const char* durability;
  const char* workload;
  int64_t threads;
  double ratio;
  const char* what;
};
constexpr ScalingTargetPoint kScalingTargets[] = {
    {"redo", "adr", "hashmap", 2, 1.5, "the redo PTM's hash map at 2 threads / at 1 thread (ADR, 50% lookups)"}};

// A ptm.tx point the scaling rows pair runs of: every parameter but the thread count.
struct TxPoint {
  std::string ptm, durability, workload, medium;
  auto operator<=>(const TxPoint&) const = default;
};

void append_scaling(const std::vector<RunRecord>& runs, std::vector<RunRecord>& rows) {
  const auto pairs = bench::scaling_pairs<TxPoint>(runs, [](const RunRecord& r) -> std::optional<TxPoint> {
    if (r.case_name != "tx") return std::nullopt;
    return TxPoint{record::param_text(r, "ptm"), record::param_text(r, "durability"), record::param_text(r, "workload"),
                   record::param_text(r, "medium")};
  });
  for (const auto& p : pairs) {
    const TxPoint& at = p.point;
    RunRecord row;
    row.case_name = "scaling";
    row.params = {{"ptm", at.ptm}, {"durability", at.durability}, {"workload", at.workload}, {"medium", at.medium}};
    row.params["threads"] = p.threads;
    row.name = record::name_in("ptm", row);
    std::optional<bench::ScalingTarget> target;
    for (const ScalingTargetPoint& t : kScalingTargets)
      if (at.ptm == t.ptm && at.durability == t.durability && at.workload == t.workload && p.threads == t.threads)
        target = bench::ScalingTarget{t.what, t.ratio};
    bench::fill_scaling_row(row, p, "ptm.tx", target);
    rows.push_back(std::move(row));
  }
}

std::vector<RunRecord> summarize(const std::vector<RunRecord>& runs, const nlohmann::ordered_json&) {
  std::map<std::pair<std::string, std::string>, std::map<std::string, const RunRecord*>> points;
  for (const RunRecord& r : runs)
    if (r.case_name == "breakdown" && r.status == record::RunStatus::ok)
      points[{record::param_text(r, "ptm"), record::param_text(r, "workload")}][record::param_text(r, "cost")] = &r;
  std::vector<RunRecord> rows;
  for (const auto& [point, costs] : points) {
    const auto& [ptm, workload] = point;
    auto full = costs.find("full");
    if (full == costs.end()) continue;
    for (const auto& [cost, without] : costs) {
      if (cost == "full") continue;
      const auto ratio = record::ratio_of("share", full->second->find("throughput"), without->find("throughput"));
      if (!ratio) continue;
      RunRecord row;
      row.case_name = "share";
      row.params = {{"ptm", ptm}, {"workload", workload}, {"cost", cost}};
      row.name = record::name_in("ptm", row);
      Metric share = *ratio;
      share.value = 1.0 - share.value;
      if (share.stats) {
        for (double& x : share.stats->samples) x = 1.0 - x;
        share.stats = record::summarize(share.stats->samples, share.stats->over);
      }
      row.set(std::move(share));
      row.notes.emplace_back("share", "1 - full throughput / throughput with " + cost + " (ADR, one thread)");
      rows.push_back(std::move(row));
    }
  }
  append_scaling(runs, rows);
  return rows;
}

const bench::SuiteSummaryRegistration summary{bench::SuiteSummary{
    "ptm",
    summarize,
    {{"share", "the share of a transaction's time logging, flushing or fencing takes, with its interval"},
     {"scaling", "throughput at N threads over one thread's, per PTM, durability model and workload"}}}};

}  // namespace
}  // namespace pmlab::suites::ptm
