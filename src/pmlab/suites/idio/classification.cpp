#include "pmlab/suites/idio/classification.hpp"

#include <cmath>
#include <cstdio>
#include <map>

#include "pmlab/media/region.hpp"
#include "pmlab/record/query.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/paper_tables.hpp"
#include "pmlab/suites/idio/selection.hpp"

namespace pmlab::suites::idio {

using record::Metric;
using record::MetricKind;
using record::RunRecord;

const char* to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::present: return "present";
    case Verdict::absent: return "absent";
    case Verdict::not_applicable: return "not_applicable";
  }
  return "?";
}

const char* to_string(NotApplicable why) noexcept {
  switch (why) {
    case NotApplicable::no_pool_runs: return "no_pool_runs";
    case NotApplicable::no_paired_runs: return "no_paired_runs";
    case NotApplicable::no_media_counters: return "no_media_counters";
    case NotApplicable::runs_skipped: return "runs_skipped";
  }
  return "?";
}

const char* to_string(ImpactClass c) noexcept {
  switch (c) {
    case ImpactClass::none: return "none";
    case ImpactClass::low: return "low";
    case ImpactClass::moderate: return "moderate";
    case ImpactClass::high: return "high";
    case ImpactClass::not_measured: return "not_measured";
  }
  return "?";
}

Decision decide(std::optional<double> pool, std::optional<double> dram) {
  Decision d;
  if (!pool) return d;
  if (*pool < kPresentAt) {
    d.verdict = Verdict::absent;
    return d;
  }
  d.verdict = Verdict::present;
  if (dram && *dram > 0) d.pmem_specific = *pool / *dram >= kSpecificAt;
  return d;
}

ImpactClass impact_class(std::optional<double> impact) {
  if (!impact) return ImpactClass::not_measured;
  if (*impact < 1.1) return ImpactClass::none;
  if (*impact < 1.5) return ImpactClass::low;
  if (*impact <= 3.0) return ImpactClass::moderate;
  return ImpactClass::high;
}

namespace {

const Classification* find(const std::vector<Classification>& cs, std::string_view id) {
  for (const auto& c : cs)
    if (c.id == id) return &c;
  return nullptr;
}

// The verdict on the effects the measurement left in `c`.
void judge(Classification& c) {
  if (c.not_applicable) return;
  c.decision = decide(c.pool, c.dram);
  if (c.pool_emulated && c.decision.verdict == Verdict::present) c.decision.pmem_specific = false;
  if (c.decision.verdict == Verdict::not_applicable) c.not_applicable = NotApplicable::no_pool_runs;
}

// The larger effect of the idiosyncrasies `ids` on each medium, and the model behind the first of them that
// rests on one: a recommendation's impact is modelled when any idiosyncrasy it rests on is.
void impact_of_effects(Recommendation& r, const std::vector<Classification>& classes,
                       const std::vector<std::string_view>& ids) {
  for (const auto id : ids) {
    const Classification* c = find(classes, id);
    if (c == nullptr) continue;
    r.impact_pool = max_of(r.impact_pool, c->pool);
    r.impact_dram = max_of(r.impact_dram, c->dram);
    if (r.pool_model.empty()) r.pool_model = c->pool_model;
    if (r.dram_model.empty()) r.dram_model = c->dram_model;
  }
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The effect (or impact) metric `name`: modelled with `model` when one is named, measured otherwise; NaN
// when not measured.
Metric ratio_metric(const std::string& name, std::optional<double> value, const std::string& model) {
  const double v = value ? *value : std::nan("");
  return model.empty() ? measured(name, v) : Metric{name, v, "ratio", MetricKind::modelled, model};
}

const char* yes_no(bool b) { return b ? "yes" : "no"; }

}  // namespace

std::vector<Classification> classify(const std::vector<RunRecord>& runs, const PublishedSheets& published,
                                     bool pool_emulated, const std::string& tier) {
  std::vector<Classification> out;
  for (const IdiosyncrasyRow& row : idiosyncrasy_rows()) {
    Classification c{.id = std::string(row.id),
                     .tier = tier,
                     .idiosyncrasy = std::string(row.idiosyncrasy),
                     .root_cause = std::string(row.root_cause),
                     .applicability = std::string(row.applicability),
                     .effect = std::string(row.effect),
                     .pool_emulated = pool_emulated && tier == "pool"};
    row.measure(c, runs, published);
    judge(c);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> numa_tiers(const std::vector<RunRecord>& runs) {
  std::map<int, std::string> nodes;  // by node number
  for (const RunRecord& r : runs) {
    if (r.status != record::RunStatus::ok) continue;
    const std::string text = record::param_text(r, "medium");
    if (auto medium = media::parse_medium(text); medium && medium->kind == media::Kind::numa)
      nodes.emplace(medium->node, text);
  }
  std::vector<std::string> out;
  for (auto& [node, medium] : nodes) out.push_back(std::move(medium));
  return out;
}

std::vector<Recommendation> recommend(const std::vector<RunRecord>& runs, const std::vector<Classification>& classes) {
  std::vector<Recommendation> out;
  for (const RecommendationRow& row : recommendation_rows()) {
    Recommendation r{.id = std::string(row.id),
                     .rule = std::string(row.rule),
                     .recommendation = std::string(row.recommendation),
                     .follows_from = std::string(row.follows_from),
                     .published_impact = std::string(row.published_impact)};
    if (row.impact != nullptr) {
      const std::string case_name(row.impact_case);
      r.impact_pool = row.impact(runs, "pool");
      r.impact_dram = row.impact(runs, "dram");
      r.pool_model = model_of(ok_runs(runs, case_name, on_medium("pool")), "bandwidth");
      r.dram_model = model_of(ok_runs(runs, case_name, on_medium("dram")), "bandwidth");
    } else {
      impact_of_effects(r, classes, row.impact_of_effects);
    }
    r.impact_class = impact_class(r.impact_pool);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RunRecord> classification_records(const std::vector<Classification>& classes) {
  std::vector<RunRecord> out;
  for (const auto& c : classes) {
    const bool pool = c.tier == "pool";
    RunRecord r;
    r.case_name = "classification";
    r.params = {{"idiosyncrasy", c.id}};
    if (!pool) r.params["tier"] = c.tier;
    r.name = record::name_in(kSuite, r);
    r.set(ratio_metric(pool ? "effect_pool" : "effect_tier", c.pool, c.pool_model));
    r.set(ratio_metric("effect_dram", c.dram, c.dram_model));
    if (c.published_pmem)
      r.set(Metric{"effect_published_pmem", *c.published_pmem, "ratio", MetricKind::published, c.published_source});
    if (c.published_dram)
      r.set(Metric{"effect_published_dram", *c.published_dram, "ratio", MetricKind::published, c.published_source});
    for (const auto& m : c.extra) r.set(m);
    const auto& specific = c.decision.pmem_specific;
    r.notes = {{"idiosyncrasy", c.idiosyncrasy},
               {"effect", c.effect},
               {"verdict", to_string(c.decision.verdict)},
               {pool ? "pmem_specific" : "tier_specific", specific ? yes_no(*specific) : "unknown"},
               {"root_cause", c.root_cause},
               {"applicability", c.applicability},
               {"pool_emulated", yes_no(c.pool_emulated)},
               {"present_at", number_text(kPresentAt)},
               {"specific_at", number_text(kSpecificAt)}};
    if (c.not_applicable) r.notes.emplace_back("not_applicable_because", to_string(*c.not_applicable));
    if (c.not_applicable == NotApplicable::runs_skipped) r.notes.emplace_back("skip_reason", c.skip_reason);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RunRecord> recommendation_records(const std::vector<Recommendation>& recs) {
  std::vector<RunRecord> out;
  for (const auto& rec : recs) {
    RunRecord r;
    r.case_name = "recommendation";
    r.params = {{"rule", rec.id}};
    r.name = record::name_in(kSuite, r);
    r.set(ratio_metric("impact_pool", rec.impact_pool, rec.pool_model));
    r.set(ratio_metric("impact_dram", rec.impact_dram, rec.dram_model));
    r.notes = {{"rule", rec.rule},
               {"recommendation", rec.recommendation},
               {"follows_from", rec.follows_from},
               {"impact_class", to_string(rec.impact_class)},
               {"published_impact", rec.published_impact},
               {"published_source", std::string(kTable4Source)}};
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace pmlab::suites::idio
