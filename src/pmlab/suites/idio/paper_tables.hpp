// [PMIdioBench]'s Table 1 (the idiosyncrasies I1-I8, their root cause and the classes of memory they apply
// to) and Table 4 (the recommendations R1-R7 and their published impact), as the paper words them, one row
// each, with what the idio suite measures for it.
#pragma once

#include <string_view>
#include <vector>

#include "pmlab/suites/idio/effects.hpp"

namespace pmlab::suites::idio {

struct IdiosyncrasyRow {
  std::string_view id;             // "I1" … "I8"
  std::string_view idiosyncrasy;   // Table 1 wording
  std::string_view root_cause;     // Table 1
  std::string_view applicability;  // Table 1 classes (C1 NVDIMM, C2 internal cache+prefetcher,
                                   // C3 granularity mismatch, C4 DCPMM)
  std::string_view effect;         // the ratio this suite measures as the effect
  MeasureEffect* measure;
};
const std::vector<IdiosyncrasyRow>& idiosyncrasy_rows();

struct RecommendationRow {
  std::string_view id;                // "R1" … "R7"
  std::string_view rule;              // Table 4 "Rule"
  std::string_view recommendation;    // Table 4 "Recommendation"
  std::string_view follows_from;      // the idiosyncrasies (or the study) it follows from
  std::string_view published_impact;  // Table 4 "Impact"
  // The impact here is the larger effect of these idiosyncrasies…
  std::vector<std::string_view> impact_of_effects = {};
  // …or, with `impact_case`, `impact` of that case's runs on each medium. Neither: not measured here.
  std::string_view impact_case = {};
  MeasureImpact* impact = nullptr;
};
const std::vector<RecommendationRow>& recommendation_rows();

// Where Table 4 is published.
inline constexpr std::string_view kTable4Source = "[PMIdioBench] Table 4 (Gugnani et al., PVLDB 14(4) 2021)";

}  // namespace pmlab::suites::idio
