// The idiosyncrasy suite: PMIdioBench's I1–I8 [PMIdioBench] on this platform, DRAM beside the pool, then
// classified (present / absent / not applicable here, with Table 1's root cause) and turned into
// Table 4's recommendations with the impact measured here. Those two tables are derived rows appended
// to results.json by the suite summary below.
#include "pmlab/bench/case.hpp"
#include "pmlab/suites/idio/classification.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/reference.hpp"

namespace pmlab::suites::idio {
namespace {

std::vector<record::RunRecord> summarize(const std::vector<record::RunRecord>& runs,
                                         const nlohmann::ordered_json& context) {
  auto published = PublishedSheets::load(PublishedSheets::default_path());
  const PublishedSheets sheets = published ? *published : PublishedSheets{};
  const auto pool = context.find("pool");
  const bool emulated = pool != context.end() && pool->is_object() && pool->value("medium", "") == "emulated";
  auto classes = classify(runs, sheets, emulated);
  auto rows = classification_records(classes);
  auto recs = recommendation_records(recommend(runs, classes));
  rows.insert(rows.end(), recs.begin(), recs.end());
  // Each NUMA node measured is judged against local DRAM as the pool is; the recommendations stay the pool's.
  for (const std::string& tier : numa_tiers(runs)) {
    // A node's memory is what it is, never DRAM behind a pool file: nothing of its effect is emulation.
    auto tier_rows = classification_records(classify(runs, sheets, /*pool_emulated=*/false, tier));
    rows.insert(rows.end(), tier_rows.begin(), tier_rows.end());
  }
  if (!published)
    for (auto& r : rows) r.notes.emplace_back("published", "no published numbers: " + published.status().message());
  return rows;
}

const bench::SuiteSummaryRegistration summary{bench::SuiteSummary{
    kSuite,
    summarize,
    {{"classification",
      "I1-I8 present / absent / not applicable here, PMEM-specific or not, effect and published value; "
      "per NUMA node measured too (tier:numa:N)"},
     {"recommendation", "R1-R7 with the impact measured here"}}}};

}  // namespace
}  // namespace pmlab::suites::idio
