#include "pmlab/crash/simulator.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/crash/checker.hpp"
#include "pmlab/crash/enumerator.hpp"
#include "pmlab/crash/image_mapping.hpp"
#include "pmlab/crash/interleaving.hpp"
#include "pmlab/platform/clock.hpp"

namespace pmlab::crash {
namespace {

// Operations of a run: which returned and which is in flight; in a concurrent run, every beginning and
// return in order, and the threads' interleaving.
class Tracker final : public OpTracker {
 public:
  static constexpr size_t kMaxHistory = kMaxOpEvents;

  explicit Tracker(uint64_t seed) : interleaving_(mix64(seed ^ 0x1e7e51ea7ULL)) {}

  void begin(uint64_t op, std::string_view label) noexcept override {
    interleaving_.point();
    in_flight_ += 1;
    label_.assign(label.data(), label.size());
    record({.thread = Interleaving::current(), .op = static_cast<uint32_t>(op), .result = 0, .returned = false});
  }
  void end(uint64_t op) noexcept override { end_returning(op, 0); }
  void end_returning(uint64_t op, uint64_t result) noexcept override {
    in_flight_ -= 1;
    completed_ = concurrent_ ? completed_ + 1 : op + 1;
    record({.thread = Interleaving::current(), .op = static_cast<uint32_t>(op), .result = result, .returned = true});
    interleaving_.point();
  }
  void run_threads(unsigned threads, const std::function<void(unsigned)>& body) override {
    if (threads > Interleaving::kMaxThreads) {
      problem_ = "it asked for " + std::to_string(threads) + " threads (the simulator runs at most " +
                 std::to_string(Interleaving::kMaxThreads) + ")";
      return;
    }
    concurrent_ = true;
    interleaving_.run(threads, body);
  }
  CrashPoint point(uint64_t fence, bool at_exit) const {
    CrashPoint p;
    p.ops_completed = completed_;
    p.op_in_flight = in_flight_ > 0;
    p.fence_index = fence;
    p.at_exit = at_exit;
    p.op_label = label_;
    if (concurrent_) p.history = history_;
    return p;
  }
  uint64_t completed() const { return completed_; }
  bool concurrent() const noexcept { return concurrent_; }
  Interleaving& interleaving() noexcept { return interleaving_; }
  // Why the run cannot be checked, or empty.
  const std::string& problem() const noexcept { return problem_; }

 private:
  void record(const OpEvent& e) {
    if (!concurrent_) return;
    if (history_.size() == kMaxHistory) {
      problem_ = "its concurrent history exceeds " + std::to_string(kMaxHistory) + " events (run fewer --ops)";
      return;
    }
    history_.push_back(e);
  }

  Interleaving interleaving_;
  uint64_t completed_ = 0;
  uint64_t in_flight_ = 0;
  bool concurrent_ = false;
  std::string label_;
  std::vector<OpEvent> history_;
  std::string problem_;
};

// What a crash point leaves pending, in one number: where and what each pending line may hold. Two runs of
// a deterministic design have the same at every point.
uint64_t signature(const CrashSpace& space) {
  uint64_t h = space.pieces.size();
  for (const PendingLine& line : space.lines) {
    h = mix64(h ^ line.offset);
    for (const LineBytes& v : line.values) h = mix64(h ^ image_hash(v.data(), line.size));
  }
  return h;
}

persist::Config run_config(persist::Domain domain) {
  return {.domain = domain,
          .flush = persist::best_line_flush(platform::CpuFeatures::host()),
          .elide_flush = false,
          .elide_fence = false};
}

class Simulation {
 public:
  Simulation(const SubjectInfo& info, const SimOptions& options, SimReport& report)
      : info_(info), options_(options), report_(report) {}

  Status run() {
    const size_t size = info_.make(options_.subject)->image_bytes();
    ImageMapping working(size);
    if (working.base() == nullptr) return error(Errc::no_space, "cannot map a " + std::to_string(size) + "-byte image");
    image_ = {working.base(), size};
    auto persister = persist::Persister::create(run_config(options_.domain));
    if (!persister) return persister.status();
    // The checkers start before the design first runs here: nothing of a run can be in them.
    auto pool = CheckerPool::start(info_, checker_options(persister->config()), image_);
    if (!pool) return pool.status();
    pool_ = pool->get();
    if (Status s = measure_run(*persister); !s) return s;
    allocation_ = allocate_budget(sizes_, options_.budget);
    working.zero();
    check_run(*persister);
    return conclude();
  }

 private:
  CheckerOptions checker_options(const persist::Config& config) const {
    CheckerOptions co;
    co.jobs = options_.jobs ? options_.jobs : default_jobs();
    co.timeout_s = options_.timeout_s;
    co.domain = options_.domain;
    co.config = config;
    co.granularity = options_.granularity;
    co.recovery_budget = options_.recovery_budget;
    co.subject = options_.subject;
    co.mutant = options_.mutant;
    co.record_sites = options_.record_sites;
    return co;
  }

  // The first run: each crash point's state space, measured (sizes_, signatures_).
  Status measure_run(persist::Persister& persister) {
    auto subject = info_.make(options_.subject);
    subject->format(image_, persister);
    CallSites sites(options_.mutant);
    sites.record(options_.record_sites);
    DurabilityTracker* self = nullptr;
    auto measure = [&] {
      const CrashSpace space = make_space(self->pending(), self->durable(), options_.granularity);
      sizes_.push_back(space.states);
      signatures_.push_back(signature(space));
    };
    DurabilityTracker tracker(image_, options_.domain, [&](const std::source_location&) { measure(); });
    self = &tracker;
    tracker.set_call_sites(&sites);
    tracker.set_granularity(options_.granularity);
    Tracker ops(options_.seed);
    ops.interleaving().park_after(options_.park_depth, options_.park_hold);
    ops.interleaving().run_alone_after(options_.alone_hold);
    tracker.set_interleaving(&ops.interleaving());
    persister.attach(&tracker);
    subject->run(image_, persister, ops);
    persister.detach();
    if (!ops.problem().empty())
      return error(Errc::invalid_argument, info_.name + " cannot be crash-tested: " + ops.problem());
    tracker.finish();
    measure();
    report_.sites = sites.seen();
    return Status::success();
  }

  // The second run: the same operations, each crash point's states sent to the checkers.
  void check_run(persist::Persister& persister) {
    on_verdict_ = [this](uint64_t tag, CheckVerdict&& v) { verdict(tag, std::move(v)); };
    auto subject = info_.make(options_.subject);
    subject->format(image_, persister);
    CallSites sites(options_.mutant);
    DurabilityTracker tracker(image_, options_.domain,
                              [this](const std::source_location& where) { crash_point(site_of(where), false); });
    tracker.set_call_sites(&sites);
    tracker.set_granularity(options_.granularity);
    ops_.interleaving().park_after(options_.park_depth, options_.park_hold);
    ops_.interleaving().run_alone_after(options_.alone_hold);
    tracker.set_interleaving(&ops_.interleaving());
    tracker_ = &tracker;
    persister.attach(&tracker);
    subject->run(image_, persister, ops_);
    persister.detach();
    tracker.finish();
    crash_point("exit", true);
    report_.dropped_values = tracker.dropped_values();
    report_.mutation_effects = sites.effects();
    tracker_ = nullptr;
  }

  // The last verdicts, then the report: the first error, or the failures in crash-point order.
  Status conclude() {
    report_.operations = ops_.completed();
    report_.concurrent = ops_.concurrent();
    Status finished = pool_->finish(on_verdict_);
    if (options_.record_sites) report_.sites.merge(pool_->sites());
    report_.mutation_effects += pool_->mutation_effects();
    if (!finished.ok()) return finished;
    if (!error_.ok()) return error_;
    if (report_.crash_points != sizes_.size())
      return error(Errc::failed, info_.name + " is not deterministic: its two runs reached " +
                                     std::to_string(sizes_.size()) + " and " + std::to_string(report_.crash_points) +
                                     " crash points (run() must repeat itself exactly)");
    explain_failures();
    report_.deviation_depth = partial_depth_ != UINT64_MAX ? partial_depth_ : report_.max_pending_lines;
    return Status::success();
  }

  struct Point {
    uint64_t index;
    CrashPoint at;
    std::string site;
    CrashSpace space;
    std::vector<CrashState> states;
  };
  struct Pending {
    std::shared_ptr<Point> point;
    size_t state;
  };

  void crash_point(const std::string& site, bool at_exit) {
    const uint64_t index = ++report_.crash_points;
    if (index > sizes_.size()) return;  // reported as non-determinism after the run
    if (!error_.ok() || (options_.replay && options_.replay->first != index)) return;
    auto point = std::make_shared<Point>();
    point->index = index;
    point->at = ops_.point(at_exit ? tracker_->fences() + 1 : tracker_->fences(), at_exit);
    point->site = site;
    point->space = make_space(tracker_->pending(), tracker_->durable(), options_.granularity);
    if (signature(point->space) != signatures_[index - 1]) {
      error_ = error(Errc::failed,
                     info_.name + " is not deterministic: crash point " + std::to_string(index) +
                         " has another set of pending lines in the second run (run() must repeat itself exactly)");
      return;
    }
    // The same exploration as the run being replayed (same budget and seed), of which one state is checked.
    Exploration e = explore(point->space, allocation_[index - 1], options_.seed ^ (index * 0x9e3779b97f4a7c15ULL));
    report_.states_enumerated += e.states.size();
    report_.state_space += point->space.states;
    report_.max_pending_lines = std::max<uint64_t>(report_.max_pending_lines, point->space.lines.size());
    if (e.exhaustive) ++report_.exhaustive_points;
    else partial_depth_ = std::min<uint64_t>(partial_depth_, e.deviation_depth);
    point->states = std::move(e.states);

    const std::vector<std::byte>& durable = tracker_->durable();
    const uint64_t durable_hash = image_hash(durable.data(), durable.size());
    bool checked_any = false;
    for (size_t i = 0; i < point->states.size(); ++i) {
      if (options_.replay && i != options_.replay->second) continue;
      const uint64_t key = mix64(state_hash(durable_hash, durable, point->space, point->states[i]) ^
                                 mix64(point->at.ops_completed * 2 + (point->at.op_in_flight ? 1 : 0)));
      if (!seen_.insert(key).second) {
        ++report_.duplicate_states;
        continue;
      }
      if (options_.shards > 1 && key % options_.shards != options_.shard) continue;
      if (options_.stop_at_first_failure && report_.failures > 0) return;
      auto slot = pool_->acquire(on_verdict_);
      if (!slot) {
        error_ = slot.status();
        return;
      }
      build_image(durable, point->space, point->states[i], pool_->image(*slot));
      // A function of the state alone (so a replay decides as its run did, and no stride can alias).
      const bool crash_recovery =
          options_.recovery_budget > 0 &&
          mix64(key ^ (options_.seed * 0xd6e8feb86659fd93ULL)) % std::max<uint64_t>(1, options_.recovery_every) == 0;
      const uint64_t tag = next_tag_++;
      pending_.emplace(tag, Pending{point, i});
      pool_->submit(*slot, tag, CheckRequest{point->at, crash_recovery, key ^ options_.seed});
      ++report_.states_checked;
      checked_any = true;
    }
    if (checked_any) ++report_.crash_points_checked;
  }

  void verdict(uint64_t tag, CheckVerdict&& v) {
    auto it = pending_.find(tag);
    if (it == pending_.end()) return;
    report_.recovery_states_checked += v.recovery_states;
    if (!v.ok) {
      ++report_.failures;
      const Point& p = *it->second.point;
      const CrashState& state = p.states[it->second.state];
      Failure f;
      f.crash_point = p.index;
      f.state = it->second.state;
      f.at = p.at;
      f.site = p.site;
      f.strategy = to_string(state.strategy);
      f.persisted = describe(p.space, state);
      f.property = std::move(v.message);
      keep_failure(std::move(f), persisted_kinds(p.space, state));
    }
    pending_.erase(it);
  }

  // What makes failures alike (Failure::alike): numbers stand for which record, offset or count, which
  // change from one showing of a bug to the next.
  static uint64_t cause_of(const Failure& f, const std::string& kinds) {
    const std::string key = f.site + "\n" +
                            (f.at.at_exit        ? "exit"
                             : f.at.op_in_flight ? "in flight"
                                                 : "after") +
                            "\n" + numbers_masked(f.at.op_label) + "\n" + kinds + "\n" + numbers_masked(f.property);
    return fnv1a64(key.data(), key.size());
  }

  // The kinds of pieces a state persisted, each once, but for their numbers ("latest", "value # of #", "torn
  // (…)"): states that persisted alike pieces of more lines or of others are one cause, as exec mode keys each
  // line's origin once. Keyed by the whole list, a bug that fails at many lines split into a kind per count.
  static std::string persisted_kinds(const CrashSpace& space, const CrashState& state) {
    std::set<std::string> kinds;
    for (uint32_t l = 0; l < space.lines.size(); ++l)
      if (const std::string what = describe_line(space, state, l); !what.empty()) kinds.insert(numbers_masked(what));
    std::string key;
    for (const std::string& k : kinds) key += k + ";";
    return key;
  }

  // Every failure is counted by its cause; the earliest of each cause is kept whole, whatever order verdicts
  // arrive in (for the first kMaxCauses causes met: more is a design whose messages are all unlike).
  void keep_failure(Failure&& f, const std::string& kinds) {
    static constexpr size_t kMaxCauses = 4096;
    const uint64_t cause = cause_of(f, kinds);
    failed_.push_back({f.crash_point, f.state, cause});
    auto it = first_of_cause_.find(cause);
    if (it == first_of_cause_.end()) {
      if (first_of_cause_.size() < kMaxCauses) first_of_cause_.emplace(cause, std::move(f));
    } else if (std::tie(f.crash_point, f.state) < std::tie(it->second.crash_point, it->second.state)) {
      it->second = std::move(f);
    }
  }

  // The first failure of each of the first causes, with those alike to it.
  void explain_failures() {
    std::sort(failed_.begin(), failed_.end());
    std::vector<uint64_t> causes;
    for (const auto& [point, state, cause] : failed_) causes.push_back(cause);
    const auto groups = group_alike(causes);
    report_.failure_kinds = groups.size();
    for (const auto& group : groups) {
      if (report_.details.size() == options_.max_failure_details) break;
      auto first = first_of_cause_.find(causes[group.front()]);
      if (first == first_of_cause_.end()) continue;
      Failure& f = report_.details.emplace_back(std::move(first->second));
      f.alike.cause = first->first;
      f.alike.others = group.size() - 1;
      for (size_t k = 1; k < group.size() && f.alike.replays.size() < kAlikeListed; ++k) {
        const auto& [point, state, cause] = failed_[group[k]];
        f.alike.replays.push_back(replay_id(point, state));
      }
    }
  }

  const SubjectInfo& info_;
  const SimOptions& options_;
  SimReport& report_;
  Image image_{};
  CheckerPool* pool_ = nullptr;
  CheckerPool::OnVerdict on_verdict_;
  DurabilityTracker* tracker_ = nullptr;
  Tracker ops_{options_.seed};
  std::vector<double> sizes_;
  std::vector<uint64_t> signatures_;
  std::vector<uint64_t> allocation_;
  std::unordered_set<uint64_t> seen_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> failed_;  // (crash point, state, cause) of every failure
  std::unordered_map<uint64_t, Failure> first_of_cause_;
  uint64_t next_tag_ = 0;
  uint64_t partial_depth_ = UINT64_MAX;  // shallowest complete deviation level of a partly covered point
  Status error_;
};

}  // namespace

unsigned default_jobs() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

Result<SimReport> simulate(const SubjectInfo& info, const SimOptions& options) {
  if (options.domain == persist::Domain::none)
    return error(Errc::invalid_argument, "domain none keeps nothing durable: there is nothing to crash-test");
  if (options.budget == 0) return error(Errc::invalid_argument, "--budget must be positive");
  if (options.shards == 0 || options.shard >= options.shards)
    return error(Errc::invalid_argument, "shard " + std::to_string(options.shard + 1) + " of " +
                                             std::to_string(options.shards) + " does not exist");
  SimReport report;
  report.subject = info.name;
  report.domain = options.domain;
  report.granularity = options.granularity;
  report.shard = options.shard;
  report.shards = options.shards;
  const uint64_t t0 = platform::Clock::monotonic_ns();
  Simulation sim(info, options, report);
  PMLAB_TRY(sim.run());
  report.seconds = static_cast<double>(platform::Clock::monotonic_ns() - t0) / 1e9;
  return report;
}

}  // namespace pmlab::crash
