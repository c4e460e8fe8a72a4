#include "pmlab/record/query.hpp"

#include <cmath>

namespace pmlab::record {

std::string param_text(const RunRecord& r, const std::string& key) {
  const auto it = r.params.find(key);
  return it == r.params.end() ? std::string() : value_text(*it);
}

std::optional<double> param_number(const RunRecord& r, const std::string& key) {
  const auto it = r.params.find(key);
  if (it == r.params.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<double> metric_value(const RunRecord& r, const std::string& metric) {
  const Metric* m = r.find(metric);
  if (m == nullptr || !std::isfinite(m->value)) return std::nullopt;
  return m->value;
}

bool matches(const RunRecord& r, const std::string& full_case,
             const std::vector<std::pair<std::string, std::string>>& params) {
  if (r.status != RunStatus::ok || r.suite + "." + r.case_name != full_case) return false;
  for (const auto& [key, value] : params)
    if (param_text(r, key) != value) return false;
  return true;
}

}  // namespace pmlab::record
