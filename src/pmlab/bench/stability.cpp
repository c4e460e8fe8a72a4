#include "pmlab/bench/stability.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "pmlab/bench/run_pattern.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/common/text.hpp"

namespace pmlab::bench {

namespace {

std::vector<StabilitySample>& registry() {
  static std::vector<StabilitySample> all;
  return all;
}
// Each sample's pattern, compiled once as it registers (none for one that does not compile: it matches no
// run, and stability_test requires every registered pattern to compile).
std::vector<std::optional<RunPattern>>& patterns() {
  static std::vector<std::optional<RunPattern>> all;
  return all;
}

record::Metric measured(std::string name, double v, std::string unit) {
  return record::Metric{std::move(name), v, std::move(unit), record::MetricKind::measured, {}};
}

}  // namespace

void add_stability_sample(StabilitySample sample) {
  auto pattern = RunPattern::compile(sample.run_pattern);
  patterns().push_back(pattern ? std::optional<RunPattern>(std::move(*pattern)) : std::nullopt);
  registry().push_back(std::move(sample));
}
const std::vector<StabilitySample>& stability_samples() { return registry(); }

std::vector<const StabilitySample*> stability_samples_of(std::string_view run_name) {
  std::vector<const StabilitySample*> out;
  for (size_t i = 0; i < registry().size(); ++i)
    if (patterns()[i] && patterns()[i]->found_in(run_name)) out.push_back(&registry()[i]);
  return out;
}

std::vector<record::RunRecord> stability_rows(const std::vector<StabilityObservation>& observations) {
  // (run, metric) -> after -> values, in the order observed.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, double>>> seen;
  std::map<std::pair<std::string, std::string>, std::string> units;
  for (const StabilityObservation& o : observations) {
    if (o.record.status != record::RunStatus::ok) continue;
    for (const StabilitySample* s : stability_samples_of(o.record.name)) {
      for (const std::string& m : s->metrics)
        if (const record::Metric* x = o.record.find(m); x && std::isfinite(x->value)) {
          seen[{o.record.name, m}].emplace_back(o.after, x->value);
          units[{o.record.name, m}] = x->unit;
        }
    }
  }
  std::vector<record::RunRecord> rows;
  for (const auto& [key, values] : seen) {
    const auto& [run, metric] = key;
    std::vector<double> alone;
    for (const auto& [after, v] : values)
      if (after == "alone") alone.push_back(v);
    if (alone.empty()) continue;
    const double base = median(alone);
    if (base == 0) continue;
    const auto [lo, hi] = std::minmax_element(alone.begin(), alone.end());
    const double tolerance = std::max(kStabilityMinTolerance, 3.0 * (*hi - *lo) / std::abs(base));
    const std::string& unit = units[key];
    double worst = 0;
    std::string worst_after = "alone";
    for (const auto& [after, v] : values) {
      if (after == "alone") continue;
      const double deviation = v / base - 1.0;
      record::RunRecord row;
      row.case_name = "point";
      row.params = {{"run", run}, {"metric", metric}, {"after", after}};
      row.name = record::name_in("stability", row);
      row.set(measured("value", v, unit));
      row.set(measured("value_alone", base, unit));
      row.set(measured("deviation", deviation, "ratio"));
      rows.push_back(std::move(row));
      if (std::abs(deviation) > std::abs(worst)) {
        worst = deviation;
        worst_after = after;
      }
    }
    record::RunRecord summary;
    summary.case_name = "summary";
    summary.params = {{"run", run}, {"metric", metric}};
    summary.name = record::name_in("stability", summary);
    summary.set(measured("value_alone", base, unit));
    summary.set(measured("alone_spread", (*hi - *lo) / std::abs(base), "ratio"));
    summary.set(measured("largest_deviation", worst, "ratio"));
    summary.set(measured("tolerance", tolerance, "ratio"));
    const bool stable = std::abs(worst) <= tolerance;
    summary.notes.emplace_back("verdict", stable ? "stable" : "order-dependent");
    summary.notes.emplace_back("reasoning", "largest change " + fixed(100.0 * worst, 1) + "% (after " + worst_after +
                                                "), tolerance " + fixed(100.0 * tolerance, 1) + "% (" +
                                                std::to_string(alone.size()) + " runs alone)");
    rows.push_back(std::move(summary));
  }
  for (auto& r : rows) r.suite = "stability";
  return rows;
}

}  // namespace pmlab::bench
