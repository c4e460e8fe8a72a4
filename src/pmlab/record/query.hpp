// Reading run records: what the checks, the classifications and the summaries ask of a record, in one
// place, so each asks it the same way (a missing parameter, a number parameter, a metric that is absent
// or not finite).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pmlab/record/record.hpp"

namespace pmlab::record {

// The run's parameter `key` as text: a string as it is, a number or a boolean as JSON writes it; "" when
// the run has no such parameter.
std::string param_text(const RunRecord& r, const std::string& key);
// The run's parameter `key` when it is a number.
std::optional<double> param_number(const RunRecord& r, const std::string& key);
// The metric's value when the run has it and it is finite (a failed measurement records NaN).
std::optional<double> metric_value(const RunRecord& r, const std::string& metric);
// True when `r` ran ok as `suite.case` with every (key, value) of `params` (values compared as text).
bool matches(const RunRecord& r, const std::string& full_case,
             const std::vector<std::pair<std::string, std::string>>& params = {});

}  // namespace pmlab::record
