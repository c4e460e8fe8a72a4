// The ptm suite's derived rows (bench::SuiteSummary):
//   ptm.share/ptm:P/workload:W/cost:C   the share of a transaction's time that cost C takes ([PMDKOverheads]):
//       1 - full throughput / throughput with C switched off, from the ptm.breakdown runs. With repetitions the
//       share is the median of the per-repetition shares (a repetition's full and no-C runs ran in the same
//       pass) with its interval; a share whose interval includes 0 is not distinguishable from no cost.
#include <map>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/checks.hpp"

namespace pmlab::suites::ptm {
namespace {

using record::Metric;
using record::RunRecord;

std::vector<RunRecord> summarize(const std::vector<RunRecord>& runs, const nlohmann::ordered_json&) {
  std::map<std::pair<std::string, std::string>, std::map<std::string, const RunRecord*>> points;
  for (const RunRecord& r : runs)
    if (r.case_name == "breakdown" && r.status == record::RunStatus::ok)
      points[{bench::param_text(r, "ptm"), bench::param_text(r, "workload")}][bench::param_text(r, "cost")] = &r;
  std::vector<RunRecord> rows;
  for (const auto& [key, costs] : points) {
    auto full = costs.find("full");
    if (full == costs.end()) continue;
    for (const auto& [cost, without] : costs) {
      if (cost == "full") continue;
      const auto ratio = record::ratio_of("share", full->second->find("throughput"), without->find("throughput"));
      if (!ratio) continue;
      RunRecord row;
      row.case_name = "share";
      row.params["ptm"] = key.first;
      row.params["workload"] = key.second;
      row.params["cost"] = cost;
      row.name = "ptm.share/ptm:" + key.first + "/workload:" + key.second + "/cost:" + cost;
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
  return rows;
}

const bench::SuiteSummaryRegistration summary{bench::SuiteSummary{
    "ptm", summarize, {{"share", "the share of a transaction's time logging, flushing or fencing takes, with its interval"}}}};

}  // namespace
}  // namespace pmlab::suites::ptm
