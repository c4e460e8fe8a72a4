#include "pmlab/suites/idio/selection.hpp"

#include <algorithm>
#include <cmath>

#include "pmlab/record/query.hpp"

namespace pmlab::suites::idio {

using record::Metric;
using record::metric_value;
using record::MetricKind;
using record::param_number;
using record::param_text;
using record::RunRecord;
using record::RunStatus;

RunSet ok_runs(const std::vector<RunRecord>& runs, const std::string& case_name, const RunFilter& filter) {
  RunSet out;
  for (const auto& r : runs)
    if (r.case_name == case_name && r.status == RunStatus::ok && (!filter || filter(r))) out.push_back(&r);
  return out;
}

std::optional<std::string> skip_reason(const std::vector<RunRecord>& runs, const std::string& case_name) {
  for (const auto& r : runs)
    if (r.case_name == case_name && r.status != RunStatus::ok && !r.reason.empty()) return r.reason;
  return std::nullopt;
}

RunFilter on_medium(const std::string& medium) { return param_is("medium", medium); }

RunFilter param_is(const std::string& key, const std::string& value) {
  return [key, value](const RunRecord& r) { return param_text(r, key) == value; };
}

RunFilter number_is(const std::string& key, double value) {
  return [key, value](const RunRecord& r) {
    auto v = param_number(r, key);
    return v && std::fabs(*v - value) < 1e-9;
  };
}

RunFilter both(RunFilter a, RunFilter b) {
  return [a, b](const RunRecord& r) { return a(r) && b(r); };
}

namespace {

// The value `prefer` picks among the runs' values (each read by `read`, absent ones skipped).
template <typename Read, typename Prefer>
std::optional<double> best_of(const RunSet& rs, Read read, Prefer prefer) {
  std::optional<double> best;
  for (const auto* r : rs)
    if (auto v = read(*r); v && (!best || prefer(*v, *best))) best = v;
  return best;
}

bool larger(double a, double b) { return a > b; }
bool smaller(double a, double b) { return a < b; }

template <typename Prefer>
std::optional<double> best_metric(const RunSet& rs, const std::string& metric, const RunFilter& filter, Prefer prefer) {
  return best_of(
      rs, [&](const RunRecord& r) { return !filter || filter(r) ? metric_value(r, metric) : std::nullopt; }, prefer);
}

}  // namespace

std::optional<double> max_param(const RunSet& rs, const std::string& key) {
  return best_of(
      rs, [&](const RunRecord& r) { return param_number(r, key); }, larger);
}

std::optional<double> min_param(const RunSet& rs, const std::string& key) {
  return best_of(
      rs, [&](const RunRecord& r) { return param_number(r, key); }, smaller);
}

std::optional<double> max_metric(const RunSet& rs, const std::string& metric, const RunFilter& filter) {
  return best_metric(rs, metric, filter, larger);
}

std::optional<double> min_metric(const RunSet& rs, const std::string& metric, const RunFilter& filter) {
  return best_metric(rs, metric, filter, smaller);
}

std::string model_of(const RunSet& rs, const std::string& metric) {
  for (const auto* r : rs)
    if (const Metric* m = r->find(metric); m != nullptr && m->kind == MetricKind::modelled) return m->origin;
  return "";
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

std::optional<double> max_of(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

Metric measured(std::string name, double value, std::string unit) {
  return Metric{std::move(name), value, std::move(unit), MetricKind::measured, {}};
}

}  // namespace pmlab::suites::idio
