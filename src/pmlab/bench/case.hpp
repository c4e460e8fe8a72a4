// A benchmark case: declared once with its parameters, registered in a suite, run by the runner for every
// point of its sweep. The case body runs its own tight loop (inlined, no virtual call per operation);
// the harness owns threads, pinning, warm-up, timing, counters and records.
#pragma once

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/params.hpp"
#include "pmlab/common/stop_signal.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/model/memory_model.hpp"
#include "pmlab/persist/persister.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/record/histogram.hpp"
#include "pmlab/record/record.hpp"

namespace pmlab::bench {

// The harness writes what record/ defines, and hands a case the device model the run attached.
using model::MemoryModel;
using record::Histogram;
using record::Metric;
using record::MetricKind;
using record::RunRecord;
using record::RunStatus;
using record::TargetDirection;

class RunContext;

struct CaseDef {
  std::string suite;
  std::string name;
  std::string summary;
  std::vector<ParamSpec> params;
  // Bytes of medium the run needs at `params` (0: the case uses no medium).
  std::function<uint64_t(const Params&)> region_bytes = nullptr;
  // A reason when this point of the sweep duplicates another (it is then left out of the sweep).
  std::function<std::optional<std::string>(const Params&)> redundant = nullptr;
  std::function<void(RunContext&)> body;
  // Repetitions under --quick of the points whose numbers are compared with each other's (a share or a
  // target ratio computed from two runs needs an interval); null or 0: the runner's default
  // (bench/repetitions.hpp).
  std::function<int(const Params&)> quick_repetitions = nullptr;

  std::string full_name() const { return suite + "." + name; }
};

// A suite's summary: rows derived from the finished runs of that suite (a classification, a table that
// joins several cases). The runner calls `derive` once after every run of the invocation has finished,
// with that suite's records in run order and the run's `context` block (e.g. whether the pool is
// emulated), and appends the rows it returns to runs[] (docs/results-schema.md, "Derived rows"). A number
// computed only from measured numbers is itself measured.
struct SuiteSummary {
  std::string suite;
  std::function<std::vector<RunRecord>(const std::vector<RunRecord>& runs, const nlohmann::ordered_json& context)>
      derive;
  // The derived cases it writes (case name, one line), for `pmlab list`.
  std::vector<std::pair<std::string, std::string>> cases = {};
};

class Registry {
 public:
  static Registry& instance();
  void add_suite(std::string name, std::string summary);
  void add(CaseDef def);
  void add_summary(SuiteSummary summary);
  const std::vector<CaseDef>& cases() const { return cases_; }
  const std::vector<std::pair<std::string, std::string>>& suites() const { return suites_; }
  const std::vector<SuiteSummary>& summaries() const { return summaries_; }

 private:
  std::vector<CaseDef> cases_;
  std::vector<std::pair<std::string, std::string>> suites_;
  std::vector<SuiteSummary> summaries_;
};

// Registers at static-initialization time; suites are linked as object files so these always run.
struct CaseRegistration {
  explicit CaseRegistration(CaseDef def) { Registry::instance().add(std::move(def)); }
};
struct SuiteRegistration {
  SuiteRegistration(std::string name, std::string summary) {
    Registry::instance().add_suite(std::move(name), std::move(summary));
  }
};
struct SuiteSummaryRegistration {
  explicit SuiteSummaryRegistration(SuiteSummary summary) { Registry::instance().add_summary(std::move(summary)); }
};

// Standard parameters the harness understands: it builds the medium and the persister from them.
namespace std_params {
ParamSpec medium(std::vector<std::string> defaults = {"dram", "pool"});
// "auto" resolves to the run-wide choice (the pool's map-time decision, or --domain / --flush).
ParamSpec domain(std::vector<std::string> defaults = {"auto"}, std::vector<std::string> quick = {});
ParamSpec flush(std::vector<std::string> defaults = {"auto"}, std::vector<std::string> quick = {});
ParamSpec threads(std::vector<std::string> defaults = {"1"}, std::vector<std::string> quick = {});
ParamSpec size(std::string name, std::string doc, std::vector<std::string> defaults, std::vector<std::string> quick,
               int64_t min, int64_t max);
ParamSpec integer(std::string name, std::string doc, std::vector<std::string> defaults, std::vector<std::string> quick,
                  int64_t min, int64_t max);
ParamSpec choice(std::string name, std::string doc, std::vector<std::string> choices, std::vector<std::string> defaults,
                 std::vector<std::string> quick = {});
}  // namespace std_params

// How long each thread measures.
struct RunControl {
  double duration_s = 0.5;    // fixed-duration runs
  uint64_t ops = 0;           // fixed-ops runs when non-zero (per thread)
  double warmup_s = 0.05;     // untimed, before the start barrier
  bool per_op_timing = true;  // latency histogram; otherwise only the whole loop is timed
};

// One worker thread's view: its index, and the measured loop.
class ThreadState {
 public:
  ThreadState(int index, int count, const RunControl& control, std::barrier<>& sync)
      : index_(index), count_(count), control_(control), sync_(sync) {}

  int index() const noexcept { return index_; }
  int count() const noexcept { return count_; }

  // Runs op(i) with i = 0, 1, 2, …: warm-up, start barrier, timed operations, end barrier. With per-op
  // timing, operations are timed one in sample_every() or in batches of ops_per_sample() (choose_timing).
  template <class Op>
  void measure(Op&& op) {
    const platform::Clock& clock = platform::Clock::get();
    uint64_t i = 0;
    const uint64_t warm_start = platform::Clock::now();
    const uint64_t warm_until = warm_start + clock.from_ns(control_.warmup_s * 1e9);
    uint64_t warm_end = warm_start;
    while ((warm_end = platform::Clock::now()) < warm_until) {
      for (int k = 0; k < 16; ++k) op(i++);
    }
    ops_per_sample_ = 1;
    sample_every_ = 1;
    // An operation this long makes a stamp pair's cost negligible: timed one by one, and the probe (1536
    // operations) is not worth its time.
    constexpr double kTimeEveryOpNs = 20000;
    const bool long_ops = i > 0 && clock.to_ns(warm_end - warm_start) / static_cast<double>(i) >= kTimeEveryOpNs;
    if (control_.per_op_timing && !long_ops) choose_timing(clock, op, i);
    sync_.arrive_and_wait();
    const persist::Counters before = persist::thread_counters();
    const uint64_t start = platform::Clock::start();
    const uint64_t deadline = control_.ops ? UINT64_MAX : start + clock.from_ns(control_.duration_s * 1e9);
    const uint64_t target = control_.ops ? control_.ops : UINT64_MAX;
    // Timed regions end when the operation's stores and write-backs are complete (Clock::stop_drained).
    const uint64_t overhead = clock.from_ns(clock.drained_overhead_ns());
    uint64_t done = 0;
    if (control_.per_op_timing) {
      const uint64_t n_max = ops_per_sample_;
      const uint64_t stretch = (sample_every_ - 1) * n_max;
      uint64_t timed = 0;
      while (done < target) {
        // The batches between two samples run as one tight loop, as the untimed loop below runs them: per-
        // batch bookkeeping between operations that are chains of misses takes room the core would use to
        // overlap them (docs/checks.md, "How the harness times an operation").
        const uint64_t untimed = std::min(stretch, target - done);
        for (uint64_t k = 0; k < untimed; ++k) op(i++);
        done += untimed;
        if (done >= target) break;
        const uint64_t n = std::min(n_max, target - done);
        // A sampled batch starts from drained stores, as when every batch is timed: otherwise it would
        // wait for the write-backs the untimed operations before it left in flight.
        if (sample_every_ > 1) _mm_mfence();
        const uint64_t t0 = platform::Clock::start();
        for (uint64_t k = 0; k < n; ++k) op(i++);
        const uint64_t t1 = platform::Clock::stop_drained();
        const uint64_t d = t1 - t0;
        // Each sample stands for the sample_every_ batches it was picked from: threads that sample at
        // different rates then weigh in the merged histogram by the operations they ran.
        histogram_.add((d > overhead ? d - overhead : 0) / n, n * sample_every_);
        done += n;
        if (t1 >= deadline) break;
        // A stop signal ends a long fixed-ops run early; polled outside the timed interval.
        if ((++timed & 63) == 0 && stop_requested()) break;
      }
    } else {
      constexpr uint64_t kBatch = 64;
      while (done < target) {
        const uint64_t n = std::min(kBatch, target - done);
        for (uint64_t k = 0; k < n; ++k) op(i++);
        done += n;
        if (platform::Clock::now() >= deadline || stop_requested()) break;
      }
    }
    end_ = platform::Clock::stop_drained();
    start_ = start;
    ops_ = done;
    counters_ = persist::thread_counters() - before;
    measured_ = true;
    sync_.arrive_and_wait();
  }

  const Histogram& histogram() const noexcept { return histogram_; }
  uint64_t ops() const noexcept { return ops_; }
  uint64_t start_tick() const noexcept { return start_; }
  uint64_t end_tick() const noexcept { return end_; }
  const persist::Counters& counters() const noexcept { return counters_; }
  bool measured() const noexcept { return measured_; }
  // Operations per latency sample (1: each timed on its own).
  uint64_t ops_per_sample() const noexcept { return ops_per_sample_; }
  // One operation in this many is timed (1: every one).
  uint64_t sample_every() const noexcept { return sample_every_; }

 private:
  // How the measured loop times operations, decided on the warm operation itself (after the warm-up, so
  // first-touch page faults do not count): a stretch run untimed against the same stretch timed one by one.
  // - An operation shorter than 10x the timer's measured resolution is timed in batches (ops_per_sample_):
  //   the clock cannot tell its own length, only a batch's; each operation of a batch gets the batch's mean.
  // - One batch (or operation) in sample_every_ is timed, so that timing costs the throughput about 1% as
  //   the probe sees it. A sample costs the loop more than the probe's estimate, which times operations
  //   back to back: in the loop the drained stamps also stop the overlap of the untimed operations around
  //   it (docs/checks.md has the measurements). The untimed operations count in throughput. A run keeps
  //   at least about kMinSamples samples.
  template <class Op>
  void choose_timing(const platform::Clock& clock, Op& op, uint64_t& i) {
    constexpr uint64_t kProbe = 256;
    constexpr uint64_t kMaxSampleEvery = 1024;
    constexpr double kMinSamples = 1000;
    uint64_t best_plain = UINT64_MAX, best_timed = UINT64_MAX;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const uint64_t a = platform::Clock::start();
      for (uint64_t k = 0; k < kProbe; ++k) op(i++);
      const uint64_t b = platform::Clock::stop_drained();
      for (uint64_t k = 0; k < kProbe; ++k) {
        const uint64_t t0 = platform::Clock::start();
        op(i++);
        const uint64_t t1 = platform::Clock::stop_drained();
        asm volatile("" : : "r"(t1 - t0));
      }
      const uint64_t c = platform::Clock::stop_drained();
      best_plain = std::min(best_plain, b - a);
      best_timed = std::min(best_timed, c - b);
    }
    const double op_ns = clock.to_ns(best_plain) / static_cast<double>(kProbe);
    const double floor_ns = 10.0 * clock.resolution_ns();
    if (op_ns < floor_ns) ops_per_sample_ = static_cast<uint64_t>(std::ceil(floor_ns / std::max(op_ns, 0.01)));
    if (best_timed <= best_plain) return;
    // Timing cost relative to the work, per timed batch (one stamp pair per batch of ops_per_sample_).
    const double cost = static_cast<double>(best_timed - best_plain) / static_cast<double>(best_plain) /
                        static_cast<double>(ops_per_sample_);
    const double expected_ops =
        control_.ops ? static_cast<double>(control_.ops) : control_.duration_s * 1e9 / std::max(op_ns, 0.01);
    const double per_sample = kMinSamples * static_cast<double>(ops_per_sample_);
    const uint64_t most = std::clamp<uint64_t>(static_cast<uint64_t>(expected_ops / per_sample), 1, kMaxSampleEvery);
    sample_every_ = std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(cost / 0.01)), 1, most);
  }

  int index_;
  int count_;
  const RunControl& control_;
  std::barrier<>& sync_;
  Histogram histogram_;
  uint64_t ops_ = 0;
  uint64_t start_ = 0;
  uint64_t end_ = 0;
  persist::Counters counters_{};
  bool measured_ = false;
  uint64_t ops_per_sample_ = 1;
  uint64_t sample_every_ = 1;
};

// Everything a case body sees for one run.
class RunContext {
 public:
  RunContext(const CaseDef& def, const Params& params, RunRecord& record, media::Region region,
             const persist::Persister& persister, RunControl control, int threads, std::vector<int> cpus, bool quick)
      : def_(def),
        params_(params),
        record_(record),
        region_(region),
        persister_(persister),
        control_(control),
        threads_(threads),
        cpus_(std::move(cpus)),
        quick_(quick) {}

  const Params& params() const noexcept { return params_; }
  const media::Region& region() const noexcept { return region_; }
  const persist::Persister& persister() const noexcept { return persister_; }
  int threads() const noexcept { return threads_; }
  // The CPUs this run's threads are pinned to, in order (a case that starts threads of its own uses them).
  const std::vector<int>& cpus() const noexcept { return cpus_; }
  bool quick() const noexcept { return quick_; }
  RunControl& control() noexcept { return control_; }
  // The device model attached to this run (`--model` / `--emulate`), or null.
  MemoryModel* model() const noexcept { return model_; }
  void set_model(MemoryModel* model) noexcept { model_ = model; }

  // Spawns threads() workers pinned round-robin to the allowed CPUs, runs body(ThreadState&) in each,
  // joins, then records throughput, latency percentiles and persistence counters per operation
  // (only when the body used ThreadState::measure; a case that times itself records its own metrics).
  void run_threads(const std::function<void(ThreadState&)>& body);
  // Bytes each operation moves: adds a bandwidth metric (MiB/s) to the standard ones.
  void set_bytes_per_op(double bytes) noexcept { bytes_per_op_ = bytes; }

  void metric(std::string name, double value, std::string unit, MetricKind kind = MetricKind::measured,
              std::string origin = {});
  // The time of single operations (a latency percentile, in ns): flagged at_timer_floor within 3x of the
  // timer's measured resolution, where the clock decides more of the value than the operation does
  // (operations timed in batches of n: within 3x of the resolution / n).
  void timed_metric(std::string name, double ns, uint64_t ops_per_sample = 1, MetricKind kind = MetricKind::measured,
                    std::string origin = {});
  // A metric measured several times within the run (the rounds of a side-by-side comparison): its value is
  // their median, and it carries their spread and the median's confidence interval.
  void metric_samples(std::string name, std::vector<double> samples, std::string unit);
  // A target on a metric of this run, set before: recorded beside the metrics and judged from the metric's
  // interval (record::Target).
  void target(std::string metric, double threshold, TargetDirection direction, std::string label);
  // Text that belongs to the run's row but is no number (e.g. why a peer tool gave no number): `notes`.
  void note(std::string key, std::string text);
  // Ends the run as skipped or failed; the rest of the sweep goes on.
  [[noreturn]] void skip(const std::string& reason);
  [[noreturn]] void fail(const std::string& reason);

 private:
  const CaseDef& def_;
  const Params& params_;
  RunRecord& record_;
  media::Region region_;
  const persist::Persister& persister_;
  RunControl control_;
  int threads_;
  std::vector<int> cpus_;
  bool quick_;
  double bytes_per_op_ = 0.0;
  MemoryModel* model_ = nullptr;
};

// Thrown by RunContext::skip / fail, caught by the runner.
struct RunAbort {
  RunStatus status;
  std::string reason;
};

}  // namespace pmlab::bench
