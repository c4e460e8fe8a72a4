#include "pmlab/bench/repetitions.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "pmlab/common/statistics.hpp"

namespace pmlab::bench {

int repetitions_for(const CaseDef& def, const Params& point, bool quick, std::optional<int> requested) {
  if (requested) return *requested;
  if (!quick) return 5;
  if (def.quick_repetitions)
    if (const int n = def.quick_repetitions(point); n > 0) return n;
  const std::string& n = def.name;
  const bool target = n == "target" || (n.size() > 7 && n.ends_with("_target"));
  const bool peer = n.starts_with("vs_");
  return target || peer ? 3 : 1;
}

namespace {

bool is_flag(const Metric& m) { return m.unit == "bool" || m.unit == "flag"; }

std::vector<std::pair<double, uint64_t>> summed_histograms(const std::vector<RunRecord>& reps) {
  std::map<double, uint64_t> sum;
  for (const RunRecord& r : reps)
    for (const auto& [lo, n] : r.histogram_ns) sum[lo] += n;
  return {sum.begin(), sum.end()};
}

}  // namespace

RunRecord combine_repetitions(std::vector<RunRecord> repetitions) {
  if (repetitions.empty()) return {};
  for (RunRecord& r : repetitions)
    if (r.status != RunStatus::ok) {
      if (repetitions.size() > 1) r.reason += " (in a repetition of " + std::to_string(repetitions.size()) + ")";
      return std::move(r);
    }
  if (repetitions.size() == 1) return std::move(repetitions.front());
  RunRecord out = repetitions.front();
  for (Metric& m : out.metrics) {
    if (m.kind == MetricKind::published || is_flag(m)) continue;
    std::vector<double> values;
    for (const RunRecord& r : repetitions)
      if (const Metric* x = r.find(m.name); x && std::isfinite(x->value)) values.push_back(x->value);
    // A setting or a count every repetition gave alike (a threshold, rounds) has no spread to report.
    if (values.empty() || std::all_of(values.begin(), values.end(), [&](double v) { return v == values[0]; })) continue;
    m.value = median(values);
    m.stats = record::summarize(std::move(values), "repetitions");
    // A repetition at the timer floor makes the median suspect too.
    for (const RunRecord& r : repetitions)
      if (const Metric* x = r.find(m.name)) m.at_timer_floor = m.at_timer_floor || x->at_timer_floor;
  }
  out.histogram_ns = summed_histograms(repetitions);
  out.judge_targets();
  out.notes.emplace_back("repetitions", std::to_string(repetitions.size()) +
                                            " repetitions: every number is their median (stats: spread and 95% "
                                            "interval); the other notes are the first repetition's");
  return out;
}

}  // namespace pmlab::bench
