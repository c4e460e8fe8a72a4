// `pmlab run --stability`: is a result independent of what ran before it in the process? A few
// persistence-sensitive points (registered by the suites: an I1 p-store, a core.persist p-store, a log
// append, a PTM transaction) run alone several times, then once after each suite of the selection has run
// in full; each metric must stay within noise of its value alone. Earlier runs can leave caches, the
// memory controller's queues, page tables or process state behind: this is the check that such state does
// not reach the numbers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pmlab/record/record.hpp"

namespace pmlab::bench {

struct StabilitySample {
  std::string run_pattern;           // regular expression on run names (the quick sweep's point)
  std::vector<std::string> metrics;  // what must not depend on the order
};
void add_stability_sample(StabilitySample sample);
const std::vector<StabilitySample>& stability_samples();
// The samples whose pattern `run_name` matches.
std::vector<const StabilitySample*> stability_samples_of(std::string_view run_name);
struct StabilityRegistration {
  explicit StabilityRegistration(StabilitySample s) { add_stability_sample(std::move(s)); }
};

// How often the sample runs alone before the suites (its spread there is the noise it is judged against).
inline constexpr int kStabilityAloneRepetitions = 3;
// The least relative band a metric may move after another suite and still count as unchanged.
inline constexpr double kStabilityMinTolerance = 0.15;

// One execution of a sample point: its record and what ran before it ("alone", or a suite's name).
struct StabilityObservation {
  std::string after;
  record::RunRecord record;
};

// Rows `stability.point/run:NAME/metric:M/after:S` (the value after S beside the value alone and the
// deviation) and `stability.summary/run:NAME/metric:M` (largest deviation, the tolerance, verdict
// stable / order-dependent). Tolerance: the larger of kStabilityMinTolerance and three times the
// relative spread (max - min) / median of the alone repetitions.
std::vector<record::RunRecord> stability_rows(const std::vector<StabilityObservation>& observations);

}  // namespace pmlab::bench
