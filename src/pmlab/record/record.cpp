#include "pmlab/record/record.hpp"

#include <cmath>

#include "pmlab/common/enum_names.hpp"

namespace pmlab::record {

namespace {
constexpr auto kMetricKinds = enum_names<MetricKind>(
    "metric kind",
    {{MetricKind::measured, "measured"}, {MetricKind::modelled, "modelled"}, {MetricKind::published, "published"}});
constexpr auto kRunStatuses = enum_names<RunStatus>(
    "run status", {{RunStatus::ok, "ok"}, {RunStatus::error, "error"}, {RunStatus::skipped, "skipped"}});
}  // namespace

const char* to_string(MetricKind k) noexcept { return kMetricKinds.name(k); }
const char* to_string(RunStatus s) noexcept { return kRunStatuses.name(s); }

void RunRecord::set(Metric m) {
  for (auto& existing : metrics)
    if (existing.name == m.name) {
      existing = std::move(m);
      return;
    }
  metrics.push_back(std::move(m));
}

const Metric* RunRecord::find(const std::string& name) const {
  for (const auto& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
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
    metrics[m.name] = e;
  }
  j["metrics"] = metrics;
  if (!r.notes.empty()) {
    nlohmann::ordered_json notes = nlohmann::ordered_json::object();
    for (const auto& [key, text] : r.notes) notes[key] = text;
    j["notes"] = notes;
  }
  for (const auto& [key, value] : r.details.items()) j[key] = value;
  if (!r.histogram_ns.empty()) {
    nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
    for (const auto& [lo, n] : r.histogram_ns) buckets.push_back({lo, n});
    j["histogram"] = {{"unit", "ns"}, {"buckets", buckets}};
  }
  return j;
}

}  // namespace pmlab::record
