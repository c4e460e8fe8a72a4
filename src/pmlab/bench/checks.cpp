#include "pmlab/bench/checks.hpp"

#include <algorithm>
#include <cmath>
#include <exception>

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
    std::vector<std::string> ok_runs;
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
      out.push_back(entry(def, CheckVerdict::ok, std::move(ok_runs), std::to_string(ok) + " comparison" + (ok > 1 ? "s" : "") + " within bounds"));
    else if (findings.empty())
      out.push_back(entry(def, CheckVerdict::not_applicable, {}, "none of the runs it compares ran"));
  }
  return out;
}

std::string param_text(const record::RunRecord& r, const std::string& key) {
  auto it = r.params.find(key);
  if (it == r.params.end()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

bool matches(const record::RunRecord& r, const std::string& full_case,
             const std::vector<std::pair<std::string, std::string>>& params) {
  if (r.status != record::RunStatus::ok || r.suite + "." + r.case_name != full_case) return false;
  for (const auto& [k, v] : params)
    if (param_text(r, k) != v) return false;
  return true;
}

std::optional<double> value_of(const record::RunRecord& r, const std::string& metric) {
  const record::Metric* m = r.find(metric);
  if (m == nullptr || !std::isfinite(m->value)) return std::nullopt;
  return m->value;
}

bool exceeds(const record::Metric& a, const record::Metric& b, double margin) {
  if (a.stats && b.stats && a.stats->samples.size() >= 2 && b.stats->samples.size() >= 2)
    return a.stats->ci_low > b.stats->ci_high;
  return a.value > b.value * (1.0 + margin);
}

}  // namespace pmlab::bench
