// Picking runs and numbers out of the idio suite's records, for the classification and the
// recommendations: the successful runs of a case, filters on their parameters, and the largest or smallest
// value of a parameter or a metric over them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/record/record.hpp"

namespace pmlab::suites::idio {

using RunFilter = std::function<bool(const record::RunRecord&)>;
using RunSet = std::vector<const record::RunRecord*>;

// The successful runs of `case_name` that pass `filter` (all of them without one).
RunSet ok_runs(const std::vector<record::RunRecord>& runs, const std::string& case_name, const RunFilter& filter = {});
// The reason the first unsuccessful run of `case_name` that gave one gave.
std::optional<std::string> skip_reason(const std::vector<record::RunRecord>& runs, const std::string& case_name);

RunFilter on_medium(const std::string& medium);
// The run's parameter `key` reads `value` (as text).
RunFilter param_is(const std::string& key, const std::string& value);
// The run's parameter `key` is the number `value`.
RunFilter number_is(const std::string& key, double value);
RunFilter both(RunFilter a, RunFilter b);

// The largest / smallest number parameter `key` over `rs`.
std::optional<double> max_param(const RunSet& rs, const std::string& key);
std::optional<double> min_param(const RunSet& rs, const std::string& key);
// The largest / smallest value of `metric` over the runs of `rs` that pass `filter`.
std::optional<double> max_metric(const RunSet& rs, const std::string& metric, const RunFilter& filter = {});
std::optional<double> min_metric(const RunSet& rs, const std::string& metric, const RunFilter& filter = {});
// The model behind `metric` in any of the runs, when one of them reports it as modelled; "" otherwise.
std::string model_of(const RunSet& rs, const std::string& metric);

// a / b, when both are there and b is positive.
std::optional<double> ratio(std::optional<double> a, std::optional<double> b);
std::optional<double> max_of(std::optional<double> a, std::optional<double> b);

record::Metric measured(std::string name, double value, std::string unit = "ratio");

}  // namespace pmlab::suites::idio
