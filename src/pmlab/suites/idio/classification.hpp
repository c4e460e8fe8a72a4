// The method of [PMIdioBench] applied to this platform: for each idiosyncrasy, its effect measured on the
// pool and on DRAM, and a verdict — present, absent, or not applicable here — with Table 1's root cause. An
// effect the DRAM shows as much as the pool is real but not PMEM-specific (§3: "if it also exists with DRAM,
// we can pinpoint some hardware component other than DRAM and PMEM as the root cause"). Then Table 4: the
// recommendations R1–R7 with the impact measured here. Pure functions of the finished run records, so they
// are tested on fixtures. The records carry verdicts as tokens and the numbers behind them; the report
// words them (python/pmlab_report/idio_sentences.py).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pmlab/record/record.hpp"
#include "pmlab/suites/idio/reference.hpp"

namespace pmlab::suites::idio {

// An effect is a ratio >= 1 in the idiosyncrasy's direction (e.g. p-store latency / load latency).
inline constexpr double kPresentAt = 1.2;    // at least 20 % worse: the behaviour is there
inline constexpr double kSpecificAt = 1.25;  // pool effect at least 1.25x the DRAM effect: PMEM-specific

enum class Verdict { present, absent, not_applicable };
// The token results.json records: present, absent or not_applicable.
const char* to_string(Verdict v) noexcept;

// Why an idiosyncrasy cannot be judged here (Verdict::not_applicable).
enum class NotApplicable {
  no_pool_runs,       // no successful run measured the effect on the pool
  no_paired_runs,     // no local/remote pair of runs succeeded (I4)
  no_media_counters,  // a read-modify-write shows only in media counters; neither they nor a model are here (I7)
  runs_skipped,       // the runs were skipped, for Classification::skip_reason
};
// The token results.json records: the enumerator's name.
const char* to_string(NotApplicable why) noexcept;

struct Decision {
  Verdict verdict = Verdict::not_applicable;
  std::optional<bool> pmem_specific;  // unknown without a DRAM effect, or when not present
};
// The rule above. `pool` missing means the effect could not be measured here.
Decision decide(std::optional<double> pool, std::optional<double> dram);

struct Classification {
  std::string id;             // "I1" … "I8"
  std::string tier = "pool";  // the medium judged against local DRAM: the pool, or a NUMA node ("numa:2")
  std::string idiosyncrasy;   // [PMIdioBench] Table 1 wording
  std::string root_cause;     // Table 1
  std::string
      applicability;   // Table 1 classes (C1 NVDIMM, C2 internal cache+prefetcher, C3 granularity mismatch, C4 DCPMM)
  std::string effect;  // what the effect ratio is
  // Filled in by the measurement and the verdict; the "= {}" lets classify() name only the members above.
  // `pool` is the effect on the tier judged, whichever it is.
  std::optional<double> pool = {}, dram = {};
  std::optional<double> published_pmem = {}, published_dram = {};
  std::string published_source = {};
  Decision decision = {};
  std::optional<NotApplicable> not_applicable = {};  // set with Verdict::not_applicable
  std::string skip_reason = {};                      // with NotApplicable::runs_skipped: the reason the runs gave
  std::vector<record::Metric> extra = {};            // supporting numbers (kinds as measured / modelled / published)
  bool pool_emulated = false;                        // the pool is DRAM pages: no difference to DRAM can be PMEM's
  // Set when an effect rests on modelled numbers (a run under --emulate, or a device model's counters): the
  // model's name, and the effect is then written as kind modelled.
  std::string pool_model = {}, dram_model = {};
};

// `pool_emulated`: context.pool.medium says the pool is emulated (DRAM pages behind a file), so an effect
// stronger on the pool than on DRAM comes from the mapping or from noise, never from PMEM media.
// `tier`: the medium judged against DRAM, "pool" or a NUMA node the runs measured ("numa:N").
std::vector<Classification> classify(const std::vector<record::RunRecord>& runs, const PublishedSheets& published,
                                     bool pool_emulated = false, const std::string& tier = "pool");

// The NUMA nodes the idio runs measured as media of their own ("numa:N"), each a tier to classify beside the
// pool, in the order of their node numbers.
std::vector<std::string> numa_tiers(const std::vector<record::RunRecord>& runs);

// Table 4's impact scale: N/A (no impact) below 1.1x, low < 1.5x, moderate 1.5-3x, high > 3x; not_measured
// without an impact.
enum class ImpactClass { none, low, moderate, high, not_measured };
// The token results.json records: the enumerator's name.
const char* to_string(ImpactClass c) noexcept;
ImpactClass impact_class(std::optional<double> impact);

struct Recommendation {
  std::string id;                // "R1" … "R7"
  std::string rule;              // Table 4 "Rule"
  std::string recommendation;    // Table 4 "Recommendation"
  std::string follows_from;      // "I1, I2"
  std::string published_impact;  // Table 4 "Impact" (text, published)
  std::optional<double> impact_pool = {}, impact_dram = {};
  ImpactClass impact_class = ImpactClass::not_measured;  // of impact_pool
  std::string pool_model = {}, dram_model = {};          // as in Classification
};

std::vector<Recommendation> recommend(const std::vector<record::RunRecord>& runs,
                                      const std::vector<Classification>& classes);

// Rows for results.json: idio.classification/idiosyncrasy:In and idio.recommendation/rule:Rn.
// The pool's rows are idio.classification/idiosyncrasy:<id>; a NUMA tier's add /tier:<medium> and the
// parameter `tier`, with the effect on it as effect_tier and its verdict's specificity as tier_specific.
std::vector<record::RunRecord> classification_records(const std::vector<Classification>& classes);
std::vector<record::RunRecord> recommendation_records(const std::vector<Recommendation>& recs);

}  // namespace pmlab::suites::idio
