// What a run produces: plain records. Measuring and reporting are separate (google/benchmark's habit):
// the runner fills RunRecords, results.cpp formats them as results.json.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/record/histogram.hpp"

namespace pmlab::record {

// Every number says where it comes from.
enum class MetricKind { measured, modelled, published };
const char* to_string(MetricKind k) noexcept;

struct Metric {
  std::string name;
  double value = 0.0;  // NaN is written as null
  std::string unit;
  MetricKind kind = MetricKind::measured;
  std::string origin;  // model name for modelled, source for published
};

enum class RunStatus { ok, error, skipped };
const char* to_string(RunStatus s) noexcept;

struct RunRecord {
  std::string name;
  std::string suite;
  std::string case_name;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  std::string config_hash;
  RunStatus status = RunStatus::ok;
  std::string reason;
  std::vector<Metric> metrics;
  std::vector<std::pair<double, uint64_t>> histogram_ns;  // (lower bound in ns, count)
  // Text that is no number but belongs to the row (a verdict and its reasoning): written as `notes`,
  // an object of strings, only when non-empty.
  std::vector<std::pair<std::string, std::string>> notes;
  // Evidence that is neither a number nor a note (a crash run's failures with their replay points, a
  // mutation run's mutants): each key is written beside `metrics`.
  nlohmann::ordered_json details = nlohmann::ordered_json::object();

  // Adds or replaces a metric by name.
  void set(Metric m);
  const Metric* find(const std::string& name) const;
};

nlohmann::ordered_json to_json(const RunRecord& r);

}  // namespace pmlab::record
