// What a run produces: plain records. Measuring and reporting are separate (google/benchmark's habit):
// the runner fills RunRecords, results.cpp formats them as results.json.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/record/histogram.hpp"

namespace pmlab::record {

// Every number says where it comes from.
enum class MetricKind { measured, modelled, published };
const char* to_string(MetricKind k) noexcept;

// How a metric's value varies: over repetitions of its run (`pmlab run --repetitions`) or over the rounds
// of one side-by-side comparison. The metric's value is then the median of `samples`.
struct Stats {
  std::vector<double> samples;
  double min = 0, max = 0;
  double ci_low = 0, ci_high = 0;  // 95% bootstrap interval of the median
  std::string over;                // "repetitions" | "rounds"
};
// Stats of `samples` (at least one, NaNs left out by the caller).
Stats summarize(std::vector<double> samples, std::string over);

struct Metric;
// a / b as a metric `name` (unit ratio, a's kind), or nothing when either is missing or b is not positive.
// When both were repeated equally often, repetition i of a is paired with repetition i of b (they ran in
// the same pass, close in time) and the ratio is the median of the paired ratios, with their interval.
std::optional<Metric> ratio_of(std::string name, const Metric* a, const Metric* b);

struct Metric {
  std::string name;
  double value = 0.0;  // NaN is written as null
  std::string unit;
  MetricKind kind = MetricKind::measured;
  std::string origin;  // model name for modelled, source for published
  std::optional<Stats> stats = std::nullopt;
  // A per-operation time within 3x of the timer's measured resolution: the clock, not the operation,
  // decides most of its value.
  bool at_timer_floor = false;
};

// A target a case checks (a speed ratio against a peer, an overhead bound). The verdict is judged from the
// metric's confidence interval where it has one: met when the whole interval meets the threshold, missed
// when none of it does, unclear when it straddles; with one sample, from the value alone.
enum class TargetDirection { at_least, at_most };
enum class Verdict { met, missed, unclear };
const char* to_string(TargetDirection d) noexcept;
const char* to_string(Verdict v) noexcept;
struct Target {
  std::string metric;  // the judged metric of the same run
  std::string label;   // what it means, for a reader
  double threshold = 0;
  TargetDirection direction = TargetDirection::at_least;
  Verdict verdict = Verdict::unclear;
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
  std::vector<Target> targets;

  // Adds or replaces a metric by name.
  void set(Metric m);
  const Metric* find(const std::string& name) const;
  Metric* find(const std::string& name);
  // Records `target` (replacing one on the same metric) and judges it: call after its metric is set.
  void add_target(Target target);
  // Judges every target again from its metric (after repetitions changed the metric's value and stats).
  void judge_targets();
};

nlohmann::ordered_json to_json(const RunRecord& r);

// A parameter's value as text: a string as it is, a number or a boolean as JSON writes it.
std::string value_text(const nlohmann::ordered_json& value);
// How a name spells parameters: "/<param>:<value>" for each, in order.
std::string params_suffix(const nlohmann::ordered_json& params);
// The name of `r` in `suite`, spelled as the runner names a run: "<suite>.<case>" and its parameters' suffix.
std::string name_in(const std::string& suite, const RunRecord& r);

}  // namespace pmlab::record
