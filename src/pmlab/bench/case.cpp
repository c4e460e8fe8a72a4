#include "pmlab/bench/case.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <thread>

#include "pmlab/common/statistics.hpp"
#include "pmlab/platform/parallelism.hpp"
#include "pmlab/platform/topology.hpp"

namespace pmlab::bench {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add_suite(std::string name, std::string summary) {
  suites_.emplace_back(std::move(name), std::move(summary));
}

void Registry::add(CaseDef def) { cases_.push_back(std::move(def)); }

void Registry::add_summary(SuiteSummary summary) { summaries_.push_back(std::move(summary)); }

namespace std_params {
namespace {

// The fields every parameter has.
ParamSpec spec(std::string name, ParamType type, std::string doc, std::vector<std::string> defaults,
               std::vector<std::string> quick) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.doc = std::move(doc);
  p.defaults = std::move(defaults);
  p.quick = std::move(quick);
  return p;
}

// An integer or size parameter bounded to [min, max].
ParamSpec bounded(std::string name, ParamType type, std::string doc, std::vector<std::string> defaults,
                  std::vector<std::string> quick, int64_t min, int64_t max) {
  ParamSpec p = spec(std::move(name), type, std::move(doc), std::move(defaults), std::move(quick));
  p.min = min;
  p.max = max;
  return p;
}

}  // namespace

ParamSpec choice(std::string name, std::string doc, std::vector<std::string> choices, std::vector<std::string> defaults,
                 std::vector<std::string> quick) {
  ParamSpec p = spec(std::move(name), ParamType::choice, std::move(doc), std::move(defaults), std::move(quick));
  p.choices = std::move(choices);
  return p;
}

ParamSpec size(std::string name, std::string doc, std::vector<std::string> defaults, std::vector<std::string> quick,
               int64_t min, int64_t max) {
  return bounded(std::move(name), ParamType::size, std::move(doc), std::move(defaults), std::move(quick), min, max);
}

ParamSpec integer(std::string name, std::string doc, std::vector<std::string> defaults, std::vector<std::string> quick,
                  int64_t min, int64_t max) {
  return bounded(std::move(name), ParamType::integer, std::move(doc), std::move(defaults), std::move(quick), min, max);
}

ParamSpec medium(std::vector<std::string> defaults) {
  ParamSpec p = choice("medium",
                       "memory the case runs on: dram (anonymous memory), pool (the run's pool file), numa:N "
                       "(anonymous memory bound to NUMA node N, every page checked; numa:all: every node with "
                       "memory)",
                       {"dram", "pool", "numa"}, std::move(defaults));
  p.type = ParamType::medium;
  return p;
}

ParamSpec domain(std::vector<std::string> defaults, std::vector<std::string> quick) {
  return choice("domain",
                "durability domain: none (nothing flushed or fenced), adr (flush + fence), eadr (fence only); "
                "auto = the run's default",
                {"auto", "none", "adr", "eadr"}, std::move(defaults), std::move(quick));
}

ParamSpec flush(std::vector<std::string> defaults, std::vector<std::string> quick) {
  return choice("flush",
                "flush instruction: clflush, clflushopt, clwb, or ntstore (non-temporal stores); auto = the run's "
                "default",
                {"auto", "clflush", "clflushopt", "clwb", "ntstore"}, std::move(defaults), std::move(quick));
}

ParamSpec threads(std::vector<std::string> defaults, std::vector<std::string> quick) {
  return integer("threads", "worker threads, each pinned to its own CPU; at most the CPUs this process may use",
                 std::move(defaults), std::move(quick), 1, 1024);
}

}  // namespace std_params

void RunContext::metric(std::string name, double value, std::string unit, MetricKind kind, std::string origin) {
  record_.set(Metric{std::move(name), value, std::move(unit), kind, std::move(origin)});
}

void RunContext::timed_metric(std::string name, double ns, uint64_t ops_per_sample, MetricKind kind,
                              std::string origin) {
  Metric m{std::move(name), ns, "ns", kind, std::move(origin)};
  const double floor_ns =
      3.0 * platform::Clock::get().resolution_ns() / static_cast<double>(std::max<uint64_t>(ops_per_sample, 1));
  m.at_timer_floor = std::isfinite(ns) && ns < floor_ns;
  record_.set(std::move(m));
}

void RunContext::metric_samples(std::string name, std::vector<double> samples, std::string unit) {
  std::erase_if(samples, [](double x) { return !std::isfinite(x); });
  Metric m{std::move(name), samples.empty() ? NAN : median(samples), std::move(unit), MetricKind::measured, {}};
  if (!samples.empty()) m.stats = record::summarize(std::move(samples), "rounds");
  record_.set(std::move(m));
}

void RunContext::target(std::string metric, double threshold, TargetDirection direction, std::string label) {
  record_.add_target(record::Target{std::move(metric), std::move(label), threshold, direction});
}

void RunContext::note(std::string key, std::string text) {
  for (auto& [k, t] : record_.notes)
    if (k == key) {
      t = std::move(text);
      return;
    }
  record_.notes.emplace_back(std::move(key), std::move(text));
}

void RunContext::skip(const std::string& reason) { throw RunAbort{RunStatus::skipped, reason}; }
void RunContext::fail(const std::string& reason) { throw RunAbort{RunStatus::error, reason}; }

namespace {

// Runs `body` on a thread per state, each pinned to its CPU (cpus, round robin); the first exception a
// thread throws is rethrown once all have joined. Returns how many threads could be pinned.
int run_pinned(const std::vector<int>& cpus, const std::vector<std::unique_ptr<ThreadState>>& states,
               const std::function<void(ThreadState&)>& body) {
  std::vector<std::thread> workers;
  std::atomic<int> pinned{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  for (size_t t = 0; t < states.size(); ++t) {
    workers.emplace_back([&, t] {
      if (platform::pin_current_thread(cpus[t % cpus.size()])) pinned.fetch_add(1);
      try {
        body(*states[t]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  for (auto& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
  return pinned.load();
}

}  // namespace

void RunContext::run_threads(const std::function<void(ThreadState&)>& body) {
  // The cores the host gives the run's CPUs and what a line costs between two of them, probed before and
  // after it: a multi-thread number taken while two vCPUs took turns on one core, or sat on different
  // dies, says as much about the host as about the design.
  std::vector<int> distinct;
  for (int t = 0; t < threads_; ++t) {
    const int cpu = cpus_[static_cast<size_t>(t) % cpus_.size()];
    if (std::find(distinct.begin(), distinct.end(), cpu) == distinct.end()) distinct.push_back(cpu);
  }
  const double cores_before = distinct.size() > 1 ? platform::cores_available(distinct) : 1.0;
  const double transfer_before = distinct.size() > 1 ? platform::core_to_core_ns(distinct[0], distinct[1]) : 0.0;
  std::barrier<> sync(threads_);
  std::vector<std::unique_ptr<ThreadState>> states;
  for (int t = 0; t < threads_; ++t) states.push_back(std::make_unique<ThreadState>(t, threads_, control_, sync));
  const int pinned = run_pinned(cpus_, states, body);

  const platform::Clock& clock = platform::Clock::get();
  Histogram merged;
  uint64_t ops = 0, first = UINT64_MAX, last = 0;
  persist::Counters counters{};
  for (const auto& s : states) {
    merged.merge(s->histogram());
    ops += s->ops();
    if (s->ops() > 0) {
      first = std::min(first, s->start_tick());
      last = std::max(last, s->end_tick());
    }
    counters += s->counters();
  }
  metric("threads_pinned", pinned, "count");
  if (distinct.size() > 1) {
    metric("cores_probed", static_cast<double>(distinct.size()), "count");
    // SMT siblings share a core's multiplier, which the probe keeps busy: two of them read as one core.
    metric("physical_cores", platform::physical_cores(distinct), "count");
    metric("cores_available", std::min(cores_before, platform::cores_available(distinct)), "count");
    metric("core_to_core_ns", std::max(transfer_before, platform::core_to_core_ns(distinct[0], distinct[1])), "ns");
  }
  if (std::none_of(states.begin(), states.end(), [](const auto& s) { return s->measured(); })) return;
  if (ops == 0) fail("the case measured no operations");
  const double seconds = clock.to_ns(last - first) / 1e9;
  metric("ops", static_cast<double>(ops), "count");
  metric("seconds", seconds, "s");
  metric("throughput", static_cast<double>(ops) / seconds, "ops/s");
  if (bytes_per_op_ > 0) metric("bandwidth", bytes_per_op_ * static_cast<double>(ops) / seconds / 1048576.0, "MiB/s");
  if (merged.count() > 0) {
    auto ns = [&](double ticks) { return ticks / clock.ticks_per_ns(); };
    uint64_t batch = 1;
    for (const auto& s : states) batch = std::max(batch, s->ops_per_sample());
    timed_metric("latency_avg", ns(merged.mean()), batch);
    timed_metric("latency_p50", ns(merged.quantile(0.50)), batch);
    timed_metric("latency_p99", ns(merged.quantile(0.99)), batch);
    timed_metric("latency_p999", ns(merged.quantile(0.999)), batch);
    metric("latency_max", ns(static_cast<double>(merged.max())), "ns");
    if (batch > 1) metric("ops_per_latency_sample", static_cast<double>(batch), "count");
    // What each timed region had subtracted (the drained stamp pair's calibrated cost): a region not much
    // longer than it carries the calibration's error in every operation it averages over.
    metric("timer_overhead_ns", clock.drained_overhead_ns(), "ns");
    uint64_t every = 1;
    for (const auto& s : states) every = std::max(every, s->sample_every());
    if (every > 1) metric("latency_sampled_every", static_cast<double>(every), "count");
    record_.histogram_ns.clear();
    for (const auto& [lo, n] : merged.buckets()) record_.histogram_ns.emplace_back(ns(static_cast<double>(lo)), n);
  }
  const double per_op = 1.0 / static_cast<double>(ops);
  metric("flushes_per_op", static_cast<double>(counters.flushes) * per_op, "count");
  metric("flushed_bytes_per_op", static_cast<double>(counters.flushed_bytes) * per_op, "B");
  metric("fences_per_op", static_cast<double>(counters.fences) * per_op, "count");
  metric("nt_bytes_per_op", static_cast<double>(counters.nt_bytes) * per_op, "B");
}

}  // namespace pmlab::bench
