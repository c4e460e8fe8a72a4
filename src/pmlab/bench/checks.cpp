#include "pmlab/bench/checks.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>

#include "pmlab/common/statistics.hpp"
#include "pmlab/record/query.hpp"

namespace pmlab::bench {

namespace {

std::vector<CheckDef>& registry() {
  static std::vector<CheckDef> defs;
  return defs;
}

const char* to_string(CheckKind k) { return k == CheckKind::plausibility ? "plausibility" : "cross-check"; }
const char* to_string(CheckVerdict v) {
  return v == CheckVerdict::ok ? "ok" : v == CheckVerdict::violated ? "violated" : "not_applicable";
}

nlohmann::ordered_json entry(const CheckDef& def, CheckVerdict verdict, std::vector<std::string> runs,
                             std::string detail, const std::string& explained = {}) {
  nlohmann::ordered_json j;
  j["kind"] = to_string(def.kind);
  j["rule"] = def.id;
  j["description"] = def.description;
  j["verdict"] = to_string(verdict);
  j["runs"] = std::move(runs);
  j["detail"] = std::move(detail);
  const std::string& why = explained.empty() ? def.explained : explained;
  j["explained"] = why.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(why);
  return j;
}

}  // namespace

void add_check(CheckDef def) { registry().push_back(std::move(def)); }
const std::vector<CheckDef>& checks() { return registry(); }

nlohmann::ordered_json run_checks(const std::vector<record::RunRecord>& runs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const CheckDef& def : checks()) {
    std::vector<Finding> findings;
    try {
      findings = def.check(runs);
    } catch (const std::exception& e) {
      out.push_back(entry(def, CheckVerdict::violated, {}, std::string("the check failed: ") + e.what()));
      continue;
    }
    // Violations are grouped by the case of their first run and their explanation, so one cause found
    // across a sweep is one entry (a few details quoted, every run listed), not one per point.
    struct Group {
      std::vector<std::string> runs, details;
      std::string explained;
    };
    std::vector<std::pair<std::string, Group>> violated;
    std::vector<std::string> ok_runs, skipped_runs, skipped_details;
    size_t ok = 0;
    for (Finding& f : findings) {
      if (f.verdict == CheckVerdict::violated) {
        const std::string where = f.runs.empty() ? std::string() : f.runs[0].substr(0, f.runs[0].find('/'));
        const std::string key = where + "|" + f.explained;
        auto it = std::find_if(violated.begin(), violated.end(), [&](const auto& g) { return g.first == key; });
        if (it == violated.end()) it = violated.insert(violated.end(), {key, Group{{}, {}, f.explained}});
        for (auto& r : f.runs) it->second.runs.push_back(std::move(r));
        it->second.details.push_back(std::move(f.detail));
      } else if (f.verdict == CheckVerdict::ok) {
        ++ok;
        for (auto& r : f.runs) ok_runs.push_back(std::move(r));
      } else if (!f.detail.empty()) {  // a pair the check found but could not compare, and why
        for (auto& r : f.runs) skipped_runs.push_back(std::move(r));
        skipped_details.push_back(std::move(f.detail));
      }
    }
    constexpr size_t kQuoted = 3;
    for (auto& [key, g] : violated) {
      std::string detail;
      for (size_t i = 0; i < g.details.size() && i < kQuoted; ++i) detail += (i ? "; " : "") + g.details[i];
      if (g.details.size() > kQuoted) detail += "; and " + std::to_string(g.details.size() - kQuoted) + " more";
      if (g.details.size() > 1) detail = std::to_string(g.details.size()) + " findings: " + detail;
      out.push_back(entry(def, CheckVerdict::violated, std::move(g.runs), std::move(detail), g.explained));
    }
    if (ok > 0)
      out.push_back(entry(def, CheckVerdict::ok, std::move(ok_runs),
                          std::to_string(ok) + " comparison" + (ok > 1 ? "s" : "") + " within bounds"));
    if (!skipped_details.empty()) {
      std::string detail;
      for (size_t i = 0; i < skipped_details.size() && i < kQuoted; ++i) detail += (i ? "; " : "") + skipped_details[i];
      if (skipped_details.size() > kQuoted)
        detail += "; and " + std::to_string(skipped_details.size() - kQuoted) + " more";
      out.push_back(entry(def, CheckVerdict::not_applicable, std::move(skipped_runs), std::move(detail)));
    }
    if (findings.empty())
      out.push_back(entry(def, CheckVerdict::not_applicable, {}, "none of the runs it compares ran"));
  }
  return out;
}

std::optional<double> cores_expected(const record::RunRecord& r) {
  const auto probed = record::metric_value(r, "cores_probed");
  const auto physical = record::metric_value(r, "physical_cores");
  if (!probed) return std::nullopt;
  return physical && *physical >= 1 ? std::min(*probed, *physical) : *probed;
}

std::vector<bool> had_its_cores(const record::RunRecord& r) {
  const record::Metric* available = r.find("cores_available");
  const auto expected = cores_expected(r);
  const record::Metric* throughput = r.find("throughput");
  const size_t n = throughput && throughput->stats ? throughput->stats->samples.size() : 1;
  std::vector<bool> mask(n, true);
  if (available == nullptr || !expected) return mask;
  const double need = kCoresAvailableShare * *expected;
  if (available->stats && available->stats->samples.size() == n) {
    for (size_t i = 0; i < n; ++i) mask[i] = available->stats->samples[i] >= need;
  } else {
    for (size_t i = 0; i < n; ++i) mask[i] = available->value >= need;
  }
  return mask;
}

namespace {

// The scaling metrics from one ratio per repetition of `run` (the N-thread run, or the side-by-side run),
// the repetitions whose probe did not find their cores left out.
Scaling scaling_by_repetition(const record::RunRecord& run, const std::vector<double>& ratios_by_rep,
                              const record::Metric& like) {
  Scaling out;
  const std::vector<bool> keep = had_its_cores(run);
  const record::Metric* transfer = run.find("core_to_core_ns");
  const bool per_rep_transfer = transfer && transfer->stats && transfer->stats->samples.size() == keep.size();
  std::vector<double> ratios, near, far;
  for (size_t i = 0; i < keep.size() && i < ratios_by_rep.size(); ++i) {
    if (!keep[i]) {
      ++out.excluded;
      continue;
    }
    if (!(ratios_by_rep[i] > 0)) continue;
    ratios.push_back(ratios_by_rep[i]);
    if (transfer)
      (((per_rep_transfer ? transfer->stats->samples[i] : transfer->value) < kNearCoresNs) ? near : far)
          .push_back(ratios_by_rep[i]);
  }
  out.pairs = keep.size();
  auto metric = [&](const char* name, std::vector<double> v) -> std::optional<record::Metric> {
    if (v.empty()) return std::nullopt;
    record::Metric m{name, pmlab::median(v), "ratio", like.kind, like.origin};
    if (v.size() >= 2) m.stats = record::summarize(std::move(v), like.stats ? like.stats->over : "repetitions");
    return m;
  };
  out.ratio = metric("scaling", ratios);
  out.near = metric("scaling_near_cores", near);
  out.far = metric("scaling_far_cores", far);
  return out;
}

}  // namespace

Scaling scaling_of(const record::RunRecord& n_threads, const record::RunRecord& one_thread) {
  const record::Metric* a = n_threads.find("throughput");
  const record::Metric* b = one_thread.find("throughput");
  if (a == nullptr || b == nullptr) return {};
  const std::vector<bool> keep = had_its_cores(n_threads);
  const bool paired = a->stats && b->stats && a->stats->samples.size() == b->stats->samples.size() &&
                      a->stats->samples.size() == keep.size() && keep.size() >= 2;
  if (!paired) {
    Scaling out;
    out.pairs = 1;
    if (!keep.front()) {
      out.excluded = 1;
      return out;
    }
    out.ratio = record::ratio_of("scaling", a, b);
    return out;
  }
  std::vector<double> ratios(keep.size(), 0.0);
  for (size_t i = 0; i < keep.size(); ++i)
    if (b->stats->samples[i] > 0) ratios[i] = a->stats->samples[i] / b->stats->samples[i];
  return scaling_by_repetition(n_threads, ratios, *a);
}

Scaling scaling_of_side_by_side(const record::RunRecord& run) {
  const record::Metric* m = run.find("scaling");
  if (m == nullptr) return {};
  const std::vector<double> ratios = m->stats ? m->stats->samples : std::vector<double>{m->value};
  return scaling_by_repetition(run, ratios, *m);
}

std::optional<int64_t> ok_run_threads(const record::RunRecord& r) {
  if (r.status != record::RunStatus::ok) return std::nullopt;
  const auto t = r.params.find("threads");
  if (t == r.params.end() || !t->is_number_integer()) return std::nullopt;
  return t->get<int64_t>();
}

std::string scaling_exclusions(const Scaling& s) {
  if (s.excluded == 0) return {};
  return "; " + std::to_string(s.excluded) + " of " + std::to_string(s.pairs) +
         " repetitions left out: the host ran the run's CPUs on fewer cores than threads (cores_available)" +
         (s.ratio ? std::string() : std::string(" - no repetition left, no ratio"));
}

void fill_scaling_row(record::RunRecord& row, const Scaling& scaling, const record::RunRecord& many, int64_t threads,
                      const std::string& source, const std::optional<ScalingTarget>& target) {
  row.notes.emplace_back("scaling", "throughput at " + std::to_string(threads) + " threads / at 1 thread (" + source +
                                        ")" + scaling_exclusions(scaling));
  if (!scaling.ratio) return;
  row.set(*scaling.ratio);
  for (const auto* part : {&scaling.near, &scaling.far})
    if (*part) row.set(**part);
  for (const char* probe : {"core_to_core_ns", "record_handoffs_per_op"})
    if (const record::Metric* m = many.find(probe)) row.set(*m);
  if (target) row.add_target({"scaling", target->label, target->threshold, record::TargetDirection::at_least});
}

void fill_scaling_row(record::RunRecord& row, const RunPair& p, const std::string& source,
                      const std::optional<ScalingTarget>& target) {
  fill_scaling_row(row, scaling_of(*p.many, *p.one), *p.many, p.threads, source, target);
}

bool exceeds(const record::Metric& a, const record::Metric& b, double margin) {
  if (a.stats && b.stats && a.stats->samples.size() >= 2 && b.stats->samples.size() >= 2)
    return a.stats->ci_low > b.stats->ci_high;
  return a.value > b.value * (1.0 + margin);
}

}  // namespace pmlab::bench
