#include "pmlab/record/record.hpp"

#include <algorithm>
#include <cmath>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/common/statistics.hpp"

namespace pmlab::record {

namespace {
constexpr auto kMetricKinds = enum_names<MetricKind>(
    "metric kind",
    {{MetricKind::measured, "measured"}, {MetricKind::modelled, "modelled"}, {MetricKind::published, "published"}});
constexpr auto kRunStatuses = enum_names<RunStatus>(
    "run status", {{RunStatus::ok, "ok"}, {RunStatus::error, "error"}, {RunStatus::skipped, "skipped"}});
constexpr auto kDirections = enum_names<TargetDirection>(
    "target direction", {{TargetDirection::at_least, "at_least"}, {TargetDirection::at_most, "at_most"}});
constexpr auto kVerdicts =
    enum_names<Verdict>("verdict", {{Verdict::met, "met"}, {Verdict::missed, "missed"}, {Verdict::unclear, "unclear"}});

Verdict judge(const Target& t, const Metric* m) {
  if (m == nullptr || !std::isfinite(m->value)) return Verdict::unclear;
  const bool up = t.direction == TargetDirection::at_least;
  const auto meets = [&](double x) { return up ? x >= t.threshold : x <= t.threshold; };
  if (!m->stats || m->stats->samples.size() < 2) return meets(m->value) ? Verdict::met : Verdict::missed;
  const double worst = up ? m->stats->ci_low : m->stats->ci_high;
  const double best = up ? m->stats->ci_high : m->stats->ci_low;
  if (meets(worst)) return Verdict::met;
  if (!meets(best)) return Verdict::missed;
  return Verdict::unclear;
}

nlohmann::ordered_json to_json(const Stats& s) {
  nlohmann::ordered_json j;
  j["n"] = s.samples.size();
  j["samples"] = s.samples;
  j["min"] = s.min;
  j["max"] = s.max;
  j["ci_low"] = s.ci_low;
  j["ci_high"] = s.ci_high;
  j["ci_level"] = 0.95;
  j["over"] = s.over;
  return j;
}

nlohmann::ordered_json to_json(const Target& t, const Metric* m) {
  nlohmann::ordered_json j;
  j["metric"] = t.metric;
  j["label"] = t.label;
  j["threshold"] = t.threshold;
  j["direction"] = to_string(t.direction);
  j["value"] = m && std::isfinite(m->value) ? nlohmann::ordered_json(m->value) : nlohmann::ordered_json(nullptr);
  const bool ci = m && m->stats && m->stats->samples.size() >= 2;
  j["ci_low"] = ci ? nlohmann::ordered_json(m->stats->ci_low) : nlohmann::ordered_json(nullptr);
  j["ci_high"] = ci ? nlohmann::ordered_json(m->stats->ci_high) : nlohmann::ordered_json(nullptr);
  j["verdict"] = to_string(t.verdict);
  return j;
}

}  // namespace

const char* to_string(MetricKind k) noexcept { return kMetricKinds.name(k); }
const char* to_string(RunStatus s) noexcept { return kRunStatuses.name(s); }
const char* to_string(TargetDirection d) noexcept { return kDirections.name(d); }
const char* to_string(Verdict v) noexcept { return kVerdicts.name(v); }

Stats summarize(std::vector<double> samples, std::string over) {
  Stats s;
  s.samples = std::move(samples);
  if (s.samples.empty()) return s;
  const auto [lo, hi] = std::minmax_element(s.samples.begin(), s.samples.end());
  s.min = *lo;
  s.max = *hi;
  const Interval ci = bootstrap_median_ci(s.samples);
  s.ci_low = ci.low;
  s.ci_high = ci.high;
  s.over = std::move(over);
  return s;
}

void RunRecord::set(Metric m) {
  for (auto& existing : metrics)
    if (existing.name == m.name) {
      existing = std::move(m);
      return;
    }
  metrics.push_back(std::move(m));
}

std::optional<Metric> ratio_of(std::string name, const Metric* a, const Metric* b) {
  if (a == nullptr || b == nullptr || !std::isfinite(a->value) || !std::isfinite(b->value) || b->value <= 0)
    return std::nullopt;
  Metric r{std::move(name), a->value / b->value, "ratio", a->kind, a->origin};
  if (a->stats && b->stats && a->stats->over == b->stats->over &&
      a->stats->samples.size() == b->stats->samples.size() && a->stats->samples.size() >= 2) {
    std::vector<double> paired;
    for (size_t i = 0; i < a->stats->samples.size(); ++i)
      if (b->stats->samples[i] > 0) paired.push_back(a->stats->samples[i] / b->stats->samples[i]);
    if (paired.size() >= 2) {
      r.value = median(paired);
      r.stats = summarize(std::move(paired), a->stats->over);
    }
  }
  return r;
}

const Metric* RunRecord::find(const std::string& name) const {
  for (const auto& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

Metric* RunRecord::find(const std::string& name) {
  return const_cast<Metric*>(static_cast<const RunRecord*>(this)->find(name));
}

void RunRecord::add_target(Target target) {
  // A metric may carry one bound of each direction (a range); the same bound again replaces it.
  std::erase_if(targets, [&](const Target& t) { return t.metric == target.metric && t.direction == target.direction; });
  targets.push_back(std::move(target));
  judge_targets();
}

void RunRecord::judge_targets() {
  for (Target& t : targets) {
    const Metric* judged = find(t.metric);
    t.verdict = judge(t, judged);
  }
}

nlohmann::ordered_json to_json(const RunRecord& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["suite"] = r.suite;
  j["case"] = r.case_name;
  j["params"] = r.params;
  j["config_hash"] = r.config_hash;
  j["status"] = to_string(r.status);
  j["reason"] = r.reason.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.reason);
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  for (const auto& m : r.metrics) {
    nlohmann::ordered_json e;
    e["value"] = std::isfinite(m.value) ? nlohmann::ordered_json(m.value) : nlohmann::ordered_json(nullptr);
    e["unit"] = m.unit;
    e["kind"] = to_string(m.kind);
    if (m.kind == MetricKind::modelled) e["model"] = m.origin;
    if (m.kind == MetricKind::published) e["source"] = m.origin;
    if (m.stats) e["stats"] = to_json(*m.stats);
    if (m.at_timer_floor) e["at_timer_floor"] = true;
    metrics[m.name] = e;
  }
  j["metrics"] = metrics;
  if (!r.notes.empty()) {
    nlohmann::ordered_json notes = nlohmann::ordered_json::object();
    for (const auto& [key, text] : r.notes) notes[key] = text;
    j["notes"] = notes;
  }
  if (!r.targets.empty()) {
    nlohmann::ordered_json targets = nlohmann::ordered_json::array();
    for (const Target& t : r.targets) targets.push_back(to_json(t, r.find(t.metric)));
    j["targets"] = targets;
  }
  for (const auto& [key, value] : r.details.items()) j[key] = value;
  if (!r.histogram_ns.empty()) {
    nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
    for (const auto& [lo, n] : r.histogram_ns) buckets.push_back({lo, n});
    j["histogram"] = {{"unit", "ns"}, {"buckets", buckets}};
  }
  return j;
}

std::string value_text(const nlohmann::ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string params_suffix(const nlohmann::ordered_json& params) {
  std::string out;
  for (auto it = params.begin(); it != params.end(); ++it) out += "/" + it.key() + ":" + value_text(*it);
  return out;
}

std::string name_in(const std::string& suite, const RunRecord& r) {
  return suite + "." + r.case_name + params_suffix(r.params);
}

}  // namespace pmlab::record
