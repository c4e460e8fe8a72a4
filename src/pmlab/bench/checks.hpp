// Checks over a whole run's records, after the suites' summaries: plausibility rules (a number no
// measurement of real hardware can give: a negative share of time, a p-store faster than a cache hit)
// and cross-checks (two cases that measure the same operation must agree). Each is one entry of a table
// the suites register; the results go to results.json's `checks` and to the top of the report. A
// violation is a finding: fixed, or explained in the docs the check links to.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/record/record.hpp"

namespace pmlab::bench {

enum class CheckKind { plausibility, cross_check };
enum class CheckVerdict { ok, violated, not_applicable };

// One application of a check: the runs it looked at and what it found.
struct Finding {
  CheckVerdict verdict = CheckVerdict::ok;
  std::vector<std::string> runs;
  std::string detail;
  // Where the docs explain this finding, when only some of a check's findings are explained.
  std::string explained = {};
};

struct CheckDef {
  CheckKind kind = CheckKind::plausibility;
  std::string id;
  std::string description;
  // Where the docs explain a disagreement this check is known to find on emulated PMEM, or empty.
  std::string explained;
  // Every finding over the run's records (none when nothing it applies to ran).
  std::function<std::vector<Finding>(const std::vector<record::RunRecord>&)> check;
};

// The registered checks (bench::Registry keeps them beside the cases).
void add_check(CheckDef def);
const std::vector<CheckDef>& checks();
struct CheckRegistration {
  explicit CheckRegistration(CheckDef def) { add_check(std::move(def)); }
};

// Runs every check: a violation per finding, the ok findings of a check folded into one entry, a check
// with no finding as not_applicable. A check that throws is a violation saying so.
nlohmann::ordered_json run_checks(const std::vector<record::RunRecord>& runs);

// Helpers the rules share (reading a record: record/query.hpp).
// Whether a exceeds b beyond noise: by the metrics' intervals when both have them (a's low end above
// b's high end), else by more than `margin` (a relative fraction).
bool exceeds(const record::Metric& a, const record::Metric& b, double margin);

// A multi-thread run had the cores it asked for when its probe (`cores_available`, RunContext::run_threads)
// found at least this share of the cores it expects running at once.
inline constexpr double kCoresAvailableShare = 0.8;
// The cores a run's probe expects: its CPUs (`cores_probed`), SMT siblings counted once where the kernel
// says which CPUs share a core (`physical_cores`); nothing for a run without a probe.
std::optional<double> cores_expected(const record::RunRecord& r);
// The repetitions of `r` (or its one run) whose probe found its cores: a mask in the order the repetitions
// ran, all true when `r` has no probe (one thread).
std::vector<bool> had_its_cores(const record::RunRecord& r);

// Two CPUs whose probe handed a line between them faster than this share a cache ("near"); slower, they
// sit apart (on the development VM the probe read 33-63 ns or 181-234 ns, nothing between).
inline constexpr double kNearCoresNs = 100;
// Throughput at N threads over one thread's (`scaling`), paired by repetition over the repetitions in
// which the N-thread run had its cores; `excluded` counts the others. Without a usable pair, no metric.
struct Scaling {
  std::optional<record::Metric> ratio;
  // The same ratio over the repetitions whose N-thread run found its CPUs near / far (core_to_core_ns),
  // named scaling_near_cores / scaling_far_cores; absent without such repetitions.
  std::optional<record::Metric> near, far;
  size_t excluded = 0;
  size_t pairs = 0;
};
Scaling scaling_of(const record::RunRecord& n_threads, const record::RunRecord& one_thread);
// The same from a run that measured both thread counts side by side: its `scaling` metric, one ratio per
// repetition, over the repetitions in which it had its cores.
Scaling scaling_of_side_by_side(const record::RunRecord& run);
// An N-thread run (N > 1) and the 1-thread run of the same point.
struct RunPair {
  const record::RunRecord* many = nullptr;
  const record::RunRecord* one = nullptr;
  int64_t threads = 0;
};
template <class Point>
struct ScalingPair : RunPair {
  Point point;
};
// The thread count of a run that ran ok and states one.
std::optional<int64_t> ok_run_threads(const record::RunRecord& r);
// The scaling pairs of `runs`, in the order of their points: the ok runs grouped by point_of(run), a
// `Point` with its own ordering (nullopt leaves the run out), each run above 1 thread paired with its
// group's 1-thread run.
template <class Point, class PointOf>
std::vector<ScalingPair<Point>> scaling_pairs(const std::vector<record::RunRecord>& runs, const PointOf& point_of) {
  std::map<Point, std::map<int64_t, const record::RunRecord*>> groups;
  for (const record::RunRecord& r : runs) {
    const std::optional<int64_t> threads = ok_run_threads(r);
    if (!threads) continue;
    if (std::optional<Point> point = point_of(r)) groups[std::move(*point)][*threads] = &r;
  }
  std::vector<ScalingPair<Point>> out;
  for (const auto& [point, by_threads] : groups) {
    const auto one = by_threads.find(1);
    if (one == by_threads.end()) continue;
    for (const auto& [threads, run] : by_threads)
      if (threads > 1) out.push_back({{run, one->second, threads}, point});
  }
  return out;
}
// "" when every pair counted; else what was left out and why, for the row's note.
std::string scaling_exclusions(const Scaling& s);
// Fills a scaling row (named, with its parameters, by the caller) from pair `p`: the note naming `source`
// (the case the runs came from) and what was left out, the ratio with its near / far parts, the N-thread
// run's line-transfer probe and modelled record hand-offs (when it has them), and `target` when given (its
// label and threshold), judged from the ratio.
struct ScalingTarget {
  std::string label;
  double threshold = 0;
};
void fill_scaling_row(record::RunRecord& row, const RunPair& p, const std::string& source,
                      const std::optional<ScalingTarget>& target);
// The same from a computed `scaling` whose N-thread side (its probes) is `many`.
void fill_scaling_row(record::RunRecord& row, const Scaling& scaling, const record::RunRecord& many, int64_t threads,
                      const std::string& source, const std::optional<ScalingTarget>& target);

}  // namespace pmlab::bench
