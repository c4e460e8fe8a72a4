#include "pmlab/bench/runner.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include "pmlab/bench/bench_pool.hpp"
#include "pmlab/bench/checks.hpp"
#include "pmlab/bench/context.hpp"
#include "pmlab/bench/placement.hpp"
#include "pmlab/bench/progress.hpp"
#include "pmlab/bench/repetitions.hpp"
#include "pmlab/bench/results.hpp"
#include "pmlab/bench/run_plan.hpp"
#include "pmlab/bench/stability.hpp"
#include "pmlab/common/files.hpp"
#include "pmlab/common/hash.hpp"
#include "pmlab/common/process_state.hpp"
#include "pmlab/common/stop_signal.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/model/published.hpp"
#include "pmlab/model/run_devices.hpp"
#include "pmlab/platform/memory_tiers.hpp"
#include "pmlab/platform/system.hpp"
#include "pmlab/platform/topology.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/pool/scratch.hpp"
#include "pmlab/profile/counters.hpp"
#include "pmlab/profile/run_profiler.hpp"

namespace pmlab::bench {
namespace {

namespace fs = std::filesystem;

// Where the published data came from, and the files the run needed and could not read: each is a warning
// now and a line in the report, since every published comparison that needs it is left out.
nlohmann::ordered_json reference_data_context() {
  const model::ReferenceLocation& where = model::reference_location();
  nlohmann::ordered_json missing = nlohmann::ordered_json::array();
  for (const model::ReferenceProblem& problem : model::reference_problems()) {
    missing.push_back({{"file", problem.file}, {"reason", problem.reason}});
    std::fprintf(stderr, "%s\n",
                 printable("pmlab: warning: published data " + problem.file + " " + problem.reason + " in " +
                           model::reference_dir() +
                           ": the published comparisons that need it are left out "
                           "(PMLAB_REFERENCE_DIR names another directory; see data/reference/README.md)")
                     .c_str());
  }
  return {{"directory", where.directory}, {"found_by", where.found_by}, {"missing", missing}};
}

}  // namespace

Result<std::vector<const CaseDef*>> select_cases(const std::vector<std::string>& selectors) {
  const auto& cases = Registry::instance().cases();
  std::vector<const CaseDef*> out;
  auto add = [&](const CaseDef* c) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  if (selectors.empty() || std::find(selectors.begin(), selectors.end(), "all") != selectors.end()) {
    for (const auto& c : cases) add(&c);
    return out;
  }
  for (const auto& sel : selectors) {
    bool matched = false;
    for (const auto& c : cases) {
      if (c.suite == sel || c.full_name() == sel) {
        add(&c);
        matched = true;
      }
    }
    if (!matched) return error(Errc::invalid_argument, "unknown suite or case '" + sel + "' (see pmlab list)");
  }
  return out;
}

Result<uint64_t> pool_size_for(const std::vector<std::string>& selectors, bool quick) {
  auto selected = select_cases(selectors);
  if (!selected) return selected.status();
  LeftOut left_out;
  auto plan = plan_runs(*selected, {}, quick, left_out);
  if (!plan) return plan.status();
  return pool_bytes_for(*plan, quick, std::nullopt);
}

// The physical pages behind an emulated pool differ in speed (docs/ds.md, Threads), and which pages a
// region gets is an accident of the kernel's free lists when the pool was made. Moving the repetitions through the pool
// samples that accident instead of repeating one draw of it.
uint64_t placement_offset(uint64_t data_size, uint64_t bytes, int pass) {
  if (bytes >= data_size) return 0;
  const uint64_t slots = (data_size - bytes) / kPlacementStep + 1;
  return static_cast<uint64_t>(pass) % slots * kPlacementStep;
}

namespace {

// The context block: the machine, the pool, the defaults, the run control, the model; and its hash over
// what shapes the numbers.
nlohmann::ordered_json run_context(const RunOptions& options, const std::string& run_id, const pool::Pool* bench_pool,
                                   const persist::Config& defaults, const model::RunDevices& devices,
                                   const RunControl& control, uint64_t* hash) {
  nlohmann::ordered_json ctx = base_context(run_id, options.command_line, options.quick);
  if (bench_pool) {
    const platform::Mount mount = platform::mount_of(bench_pool->path());
    // A DAX device is its own source; a file's is the device its file system is mounted from.
    const bool dax = bench_pool->path().rfind("/dev/dax", 0) == 0;
    const platform::PoolBacking backing = platform::pool_backing(dax ? bench_pool->path() : mount.source);
    ctx["pool"] = {{"path", bench_pool->path()},
                   {"medium", pool::to_string(bench_pool->medium())},
                   {"filesystem", mount.type},
                   {"backing",
                    {{"label", backing.label},
                     {"persistence_domain", backing.persistence_domain.empty()
                                                ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(backing.persistence_domain)},
                     {"evidence", backing.evidence}}},
                   {"size_bytes", bench_pool->size()},
                   {"store_granularity", bench_pool->store_granularity()},
                   {"placement_step_bytes", kPlacementStep}};
  } else {
    ctx["pool"] = nullptr;
  }
  ctx["durability_domain"] = persist::to_string(defaults.domain);
  ctx["flush_instruction"] = persist::to_string(defaults.flush);
  if (devices.active()) ctx["model"] = model::context_json(devices);
  using J = nlohmann::ordered_json;
  ctx["run_control"] = {{"duration_s", control.ops ? J(nullptr) : J(control.duration_s)},
                        {"ops_per_thread", control.ops ? J(control.ops) : J(nullptr)},
                        {"warmup_s", control.warmup_s}};
  // Not part of the hash: a repeated point measures what a single one does, so two runs still join.
  ctx["repetitions"] = options.repetitions ? J{{"every_case", *options.repetitions}}
                       : options.quick     ? J{{"target_and_peer_cases", 3}, {"other_cases", 1}}
                                           : J{{"every_case", 5}};
  J shaping = {{"cpu", ctx["cpu"]["model"]},
               {"kernel", ctx["kernel"]},
               {"pool", ctx["pool"].is_null() ? "" : ctx["pool"]["medium"].get<std::string>()},
               {"domain", ctx["durability_domain"]},
               {"flush", ctx["flush_instruction"]},
               {"control", ctx["run_control"]},
               {"version", kPmlabVersion},
               {"git", ctx["git_revision"]}};
  if (devices.active()) shaping["model"] = ctx["model"];
  ctx["media_pages"] = media::to_string(options.pages);
  if (options.pages != media::Pages::base) shaping["media_pages"] = ctx["media_pages"];
  *hash = context_hash(shaping);
  ctx["config_hash"] = hex64(*hash);
  return ctx;
}

// What every run of one `pmlab run` shares while it executes.
struct Execution {
  const RunOptions& options;
  const model::RunDevices& devices;
  const persist::Config& defaults;
  const RunControl& control;
  const BenchPool& bench_pool;
  const std::vector<PlannedRun>& runs;
  uint64_t context_hash;
  std::vector<int> cpus;  // the CPUs this process may use
  platform::MemoryTopology topology;
  media::DramBuffer dram;
  std::map<int, std::unique_ptr<media::NodeBuffer>> node_buffers;  // a numa:N medium's memory, by node
  profile::RunProfiler* profiler = nullptr;
  profile::CounterSources counter_sources;
  // The process-wide state every run must leave as it found it (common/process_state.hpp).
  StateSnapshot neutral = snapshot_process_state();
};

// A run's record before it runs: what it is, nothing measured.
RunRecord blank_record(const PlannedRun& r, uint64_t context_hash) {
  RunRecord blank;
  blank.name = r.name;
  blank.suite = r.def->suite;
  blank.case_name = r.def->name;
  blank.params = r.params.json();
  blank.config_hash = run_hash(r.name, context_hash);
  return blank;
}

// The run's medium (dram when it has no medium parameter).
media::Medium medium_of(const PlannedRun& r) {
  if (!r.params.has("medium")) return {};
  auto m = media::parse_medium(r.params.text("medium"));
  return m ? *m : media::Medium{};
}

// The memory a run measures on: part of the pool's data area, the reusable DRAM buffer, or the buffer
// bound to the run's NUMA node.
media::Region region_for(Execution& ex, const PlannedRun& r, int pass) {
  const uint64_t bytes = region_bytes(r);
  if (bytes == 0) return {};
  if (const media::Medium m = medium_of(r); m.kind == media::Kind::numa) {
    std::unique_ptr<media::NodeBuffer>& buffer = ex.node_buffers[m.node];
    if (!buffer) buffer = std::make_unique<media::NodeBuffer>(m.node);
    if (Status s = buffer->reserve(bytes, ex.options.pages); !s)
      throw RunAbort{RunStatus::error, "medium numa:" + std::to_string(m.node) + ": " + s.message()};
    media::Region region = buffer->region();
    region.size = bytes;
    return region;
  }
  if (!uses_pool(r)) {
    if (Status s = ex.dram.reserve(bytes, ex.options.pages); !s) throw RunAbort{RunStatus::error, s.message()};
    media::Region region = ex.dram.region();
    region.size = bytes;
    return region;
  }
  const pool::Pool& p = *ex.bench_pool.get();
  if (p.data_size() < bytes)
    throw RunAbort{
        RunStatus::error,
        "needs " + format_size(bytes) + " of pool, " + p.path() + " has " + format_size(p.data_size()) +
            (ex.bench_pool.created()
                 ? std::string(" (use a larger --pool-size)")
                 : " (--pool-size applies only to a pool pmlab creates: make a larger "
                   "one with pmlab pool create PATH --size " +
                       format_size(pool_bytes_for(ex.runs, ex.options.quick, ex.options.repetitions)) + ")")};
  return {p.data() + placement_offset(p.data_size(), bytes, pass), bytes, media::Kind::pool};
}

// How much of the mapping that holds the run's memory huge pages back, as the run leaves it. The media are
// compared with each other, and a TLB that covers one medium's pages but not another's moves latencies.
void record_page_size(RunContext& ctx, const media::Region& region) {
  if (region.base == nullptr) return;
  const media::MappingPages pages = media::mapping_pages(region.base);
  if (pages.bytes > 0)
    ctx.metric("region_huge_page_fraction", static_cast<double>(pages.huge_bytes) / static_cast<double>(pages.bytes),
               "ratio");
}

// Executes one run into `rec`: its persister (with the run's device model attached), its region, the
// case body with counters around it; under --profile once plainly first, so the slowdown can be stated.
void execute_body(Execution& ex, const PlannedRun& r, int pass, RunRecord& rec) {
  const int threads = r.params.has("threads") ? static_cast<int>(r.params.integer("threads")) : 1;
  const RunPlacement placement = placement_of(ex.topology, ex.cpus, ex.options.cpu_node, medium_of(r));
  if (static_cast<size_t>(threads) > placement.cpus.size())
    throw RunAbort{RunStatus::skipped, "threads=" + std::to_string(threads) + " exceeds the " +
                                           std::to_string(placement.cpus.size()) + " CPUs this process may use" +
                                           (placement.node >= 0 ? " on node " + std::to_string(placement.node) : "")};
  persist::Config pc = ex.defaults;
  if (r.params.has("domain")) pc.domain = persist::parse_domain(r.params.text("domain")).value();
  if (r.params.has("flush")) pc.flush = persist::parse_flush(r.params.text("flush")).value();
  auto persister = persist::Persister::create(pc);
  if (!persister) throw RunAbort{RunStatus::skipped, persister.status().message()};
  std::unique_ptr<model::DeviceModel> device = model::model_for_run(ex.devices, uses_pool(r));
  if (device) persister->attach(device.get());
  const media::Region region = region_for(ex, r, pass);
  const auto body = [&](RunRecord& into) {
    RunContext ctx(*r.def, r.params, into, region, *persister, ex.control, threads, placement.cpus, ex.options.quick);
    ctx.set_model(device.get());
    if (!placement.note.empty()) ctx.note("placement", placement.note);
    r.def->body(ctx);
    record_page_size(ctx, region);
  };
  if (device) device->reset();
  RunRecord unprofiled = rec;
  if (ex.profiler) {
    body(unprofiled);
    if (device) device->reset();
    ex.profiler->begin();
  }
  profile::RunCounters counters(ex.counter_sources);
  counters.begin();
  body(rec);
  counters.end(rec);
  if (ex.profiler) ex.profiler->end(rec, &unprofiled);
  if (device) model::finish_run(*device, rec);
}

// One run, whatever happens in it: an abort or exception is its record's status, and a run a stop signal
// cut short is abandoned (it measured less than it says), not recorded as ok, nor as the error of a process
// it waited for, which the stop killed (platform/process.hpp). `pass`: the repetition, which places the run
// in the pool.
RunRecord execute_run(Execution& ex, const PlannedRun& r, int pass) {
  RunRecord rec = blank_record(r, ex.context_hash);
  try {
    execute_body(ex, r, pass, rec);
  } catch (const RunAbort& abort) {
    rec.status = abort.status;
    rec.reason = abort.reason;
  } catch (const std::exception& e) {
    rec.status = RunStatus::error;
    rec.reason = e.what();
  }
  if (stop_requested() && rec.status != RunStatus::skipped) {
    rec = blank_record(r, ex.context_hash);
    rec.status = RunStatus::skipped;
    rec.reason = "interrupted by " + signal_name(stop_signal()) + " before it finished";
  }
  // A run that leaves the process changed fails by name; the next runs are judged from the new state, so
  // one such run is reported once.
  const StateSnapshot after = snapshot_process_state();
  if (const std::vector<std::string> changes = state_changes(ex.neutral, after); !changes.empty()) {
    std::string what;
    for (const std::string& c : changes) what += (what.empty() ? "" : "; ") + c;
    rec.status = RunStatus::error;
    rec.reason = "the run left process state changed (it would shape every later run): " + what;
    ex.neutral = after;
  }
  return rec;
}

void tally(RunSummary& summary, Progress& progress, const RunRecord& r) {
  if (r.status == RunStatus::ok) ++summary.ok;
  else if (r.status == RunStatus::error) ++summary.errors;
  else ++summary.skipped;
  if (r.status == RunStatus::error) progress.note("pmlab: error in " + r.name + ": " + r.reason);
}

// Every run, repeated in passes over the selection (bench/repetitions.hpp): pass k runs the points that
// want more than k repetitions. A point that failed or was skipped is not repeated. Returns one record per
// point that ran at all, its repetitions combined.
std::vector<RunRecord> execute_passes(Execution& ex, const std::vector<int>& wanted, Progress& progress,
                                      RunSummary& summary) {
  const int passes = wanted.empty() ? 0 : *std::max_element(wanted.begin(), wanted.end());
  std::vector<std::vector<RunRecord>> reps(ex.runs.size());
  for (int pass = 0; pass < passes && !stop_requested(); ++pass)
    for (size_t i = 0; i < ex.runs.size() && !stop_requested(); ++i) {
      if (pass >= wanted[i] || (pass > 0 && reps[i].back().status != RunStatus::ok)) continue;
      progress.step(ex.runs[i].name);
      RunRecord rec = execute_run(ex, ex.runs[i], pass);
      // A later repetition a stop signal cut short leaves the earlier ones standing.
      if (pass > 0 && stop_requested()) break;
      reps[i].push_back(std::move(rec));
    }
  std::vector<RunRecord> finished;
  for (auto& r : reps) {
    if (r.empty()) continue;
    finished.push_back(combine_repetitions(std::move(r)));
    tally(summary, progress, finished.back());
  }
  return finished;
}

std::vector<const CaseDef*> every_case() {
  std::vector<const CaseDef*> out;
  for (const CaseDef& c : Registry::instance().cases()) out.push_back(&c);
  return out;
}

// --stability (bench/stability.hpp): the sample points alone kStabilityAloneRepetitions times, then
// after each suite of the selection has run in full. Returns the suites' records (one execution each);
// the sample points' executions go to `observed`.
std::vector<RunRecord> execute_stability(Execution& ex, const std::vector<PlannedRun>& samples, Progress& progress,
                                         RunSummary& summary, std::vector<StabilityObservation>& observed) {
  auto run_samples = [&](const std::string& after) {
    for (const PlannedRun& s : samples) {
      if (stop_requested()) return;
      progress.step(s.name + " (after " + after + ")");
      observed.push_back({after, execute_run(ex, s, 0)});  // one placement: only what ran before differs
    }
  };
  for (int k = 0; k < kStabilityAloneRepetitions; ++k) run_samples("alone");
  std::vector<RunRecord> finished;
  for (size_t i = 0; i < ex.runs.size() && !stop_requested();) {
    const std::string& suite = ex.runs[i].def->suite;
    for (; i < ex.runs.size() && ex.runs[i].def->suite == suite && !stop_requested(); ++i) {
      progress.step(ex.runs[i].name);
      finished.push_back(execute_run(ex, ex.runs[i], 0));
      tally(summary, progress, finished.back());
    }
    run_samples(suite);
  }
  return finished;
}

// The sample points of --stability: the quick sweep's runs the suites registered (bench/stability.hpp),
// whatever the selection, named under the run's defaults.
std::vector<PlannedRun> stability_points(const persist::Config& defaults) {
  LeftOut left_out;
  auto all = plan_runs(every_case(), {}, /*quick=*/true, left_out);
  if (!all) return {};
  std::vector<PlannedRun> out;
  for (PlannedRun& r : name_and_filter(*all, defaults, std::nullopt))
    if (!stability_samples_of(r.name).empty()) out.push_back(std::move(r));
  return out;
}

// Suite summaries: rows derived after every run, so they can join runs of several cases. An interrupted
// run has only some of the rows a summary joins: it gets none.
std::vector<RunRecord> derive_summaries(const std::vector<RunRecord>& finished, const nlohmann::ordered_json& ctx,
                                        uint64_t context_hash) {
  std::vector<RunRecord> out;
  for (const SuiteSummary& s : Registry::instance().summaries()) {
    if (stop_requested()) break;
    std::vector<RunRecord> mine;
    for (const auto& r : finished)
      if (r.suite == s.suite) mine.push_back(r);
    if (mine.empty() || !s.derive) continue;
    std::vector<RunRecord> derived;
    try {
      derived = s.derive(mine, ctx);
    } catch (const std::exception& e) {
      RunRecord failed;
      failed.name = s.suite + ".summary";
      failed.case_name = "summary";
      failed.status = RunStatus::error;
      failed.reason = e.what();
      derived = {std::move(failed)};
    }
    for (auto& d : derived) {
      d.suite = s.suite;
      d.config_hash = run_hash(d.name, context_hash);
      out.push_back(std::move(d));
    }
  }
  return out;
}

// What the run's context says of --cpu-node (a node without a usable CPU was refused with the options), of
// --profile and of the hardware counters readable here (core PMU, uncore IMC, PMEM DIMMs): every run records
// them.
Status prepare_execution(Execution& ex, const std::string& out, nlohmann::ordered_json& ctx,
                         std::unique_ptr<profile::RunProfiler>& profiler) {
  if (const std::optional<int> node = ex.options.cpu_node) ctx["cpu_node"] = *node;
  if (ex.options.profile) {
    profiler = std::make_unique<profile::RunProfiler>(out);
    ex.profiler = profiler.get();
    ctx["profile"] = profiler->context_json();
  }
  ex.counter_sources = profile::detect_counters();
  ctx["counters"] = ex.counter_sources.context_json();
  return Status::success();
}

// How the runs execute: repeated in passes (`wanted` repetitions each), or under --stability with its
// sample points; `executions` counts them all for the progress line.
struct Schedule {
  bool stability = false;
  std::vector<PlannedRun> samples;
  std::vector<int> wanted;
  size_t executions = 0;
};

Result<Schedule> schedule_of(const RunOptions& options, const std::vector<PlannedRun>& runs,
                             const persist::Config& defaults) {
  Schedule s;
  s.stability = options.stability;
  if (options.stability) {
    s.samples = stability_points(defaults);
    if (s.samples.empty())
      return error(Errc::invalid_argument, "--stability: no sample point is registered for this build");
    std::set<std::string> suites;
    for (const PlannedRun& r : runs) suites.insert(r.def->suite);
    s.executions = runs.size() + s.samples.size() * (kStabilityAloneRepetitions + suites.size());
    return s;
  }
  for (const PlannedRun& r : runs)
    s.wanted.push_back(repetitions_for(*r.def, r.params, options.quick, options.repetitions));
  s.executions = static_cast<size_t>(std::accumulate(s.wanted.begin(), s.wanted.end(), 0));
  return s;
}

std::vector<RunRecord> execute(Execution& ex, const Schedule& schedule, Progress& progress, RunSummary& summary) {
  if (!schedule.stability) return execute_passes(ex, schedule.wanted, progress, summary);
  std::vector<StabilityObservation> observed;
  std::vector<RunRecord> finished = execute_stability(ex, schedule.samples, progress, summary, observed);
  for (RunRecord& row : stability_rows(observed)) {
    row.config_hash = run_hash(row.name, ex.context_hash);
    finished.push_back(std::move(row));
  }
  return finished;
}

// What the context records once the runs are over: the sweep points left out, the published data read,
// and whether a stop signal cut the run short.
void record_context(nlohmann::ordered_json& ctx, const LeftOut& left_out, RunSummary& summary) {
  nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
  if (left_out.redundant > 0)
    skipped.push_back({{"name", "sweep"},
                       {"reason", std::to_string(left_out.redundant) +
                                      " sweep points duplicate others (e.g. a flush instruction under a "
                                      "domain that issues none) and were left out"}});
  for (const auto& [name, why] : left_out.refused) skipped.push_back({{"name", name}, {"reason", why}});
  ctx["skipped"] = skipped;
  ctx["reference_data"] = reference_data_context();
  summary.stop_signal = stop_signal();
  ctx["interrupted"] = summary.stop_signal != 0;
}

}  // namespace

Result<RunPlan> dry_run(const RunOptions& options) {
  auto selected = select_cases(options.selectors);
  if (!selected) return selected.status();
  auto filter = check_options(options, *selected);
  if (!filter) return filter.status();
  RunPlan out;
  auto planned = plan_runs(*selected, options.overrides, options.quick, out.left_out);
  if (!planned) return planned.status();
  say_refused(out.left_out);
  auto defaults = run_defaults(options, nullptr);
  if (!defaults) return defaults.status();
  const RunControl control = run_control(options);
  double executions = 0;
  for (const PlannedRun& r : name_and_filter(*planned, *defaults, *filter)) {
    out.names.push_back(r.name);
    executions += repetitions_for(*r.def, r.params, options.quick, options.repetitions);
  }
  if (control.ops == 0) out.min_seconds = executions * (control.duration_s + control.warmup_s);
  return out;
}

Result<RunSummary> run(const RunOptions& options) {
  // Plan: what runs, where, under which defaults.
  auto selected = select_cases(options.selectors);
  if (!selected) return selected.status();
  auto filter = check_options(options, *selected);
  if (!filter) return filter.status();
  auto devices = model::resolve_run_devices(options.model, options.emulate);
  if (!devices) return devices.status();
  LeftOut left_out;
  auto planned = plan_runs(*selected, options.overrides, options.quick, left_out);
  if (!planned) return planned.status();
  say_refused(left_out);
  const std::string run_id = run_id_now();
  auto made = options.out_dir.empty() ? make_default_run_directory(run_id) : fs::path(options.out_dir);
  if (!made) return made.status();
  const fs::path out = *made;
  PMLAB_TRY(check_out_dir(out, options.force));
  const RemovedIfEmpty made_here{options.out_dir.empty() ? out : fs::path()};  // a run that ends before writing

  // From here on a stop signal ends the run cleanly: the temporary pool is removed, what ran is written.
  StopSignals stop_signals;
  BenchPool bench_pool;
  std::vector<PlannedRun> pool_plan = *planned;
  if (options.stability) {  // the sample points may lie outside the selection: size the pool for all
    LeftOut ignored;
    if (auto all = plan_runs(every_case(), {}, /*quick=*/true, ignored)) pool_plan = std::move(*all);
  }
  PMLAB_TRY(bench_pool.open(options, pool_plan));
  auto defaults = run_defaults(options, bench_pool.get());
  if (!defaults) return defaults.status();
  const std::vector<PlannedRun> runs = name_and_filter(*planned, *defaults, *filter);
  if (runs.empty()) return nothing_to_run(left_out);
  const RunControl control = run_control(options);
  uint64_t hash = 0;
  ResultsDocument results(run_context(options, run_id, bench_pool.get(), *defaults, *devices, control, &hash));
  nlohmann::ordered_json& ctx = results.context();

  // Execute.
  Execution ex{options,
               *devices,
               *defaults,
               control,
               bench_pool,
               runs,
               hash,
               platform::allowed_cpus(),
               platform::read_memory_topology(),
               {},
               {},
               nullptr,
               {}};
  std::unique_ptr<profile::RunProfiler> profiler;
  if (Status s = prepare_execution(ex, out.string(), ctx, profiler); !s) return s;
  auto schedule = schedule_of(options, runs, *defaults);
  if (!schedule) return schedule.status();
  RunSummary summary;
  Progress progress(schedule->executions, options.progress);
  std::vector<RunRecord> finished = execute(ex, *schedule, progress, summary);
  for (const RunRecord& r : finished) results.add(r);
  for (RunRecord& d : derive_summaries(finished, ctx, ex.context_hash)) {
    tally(summary, progress, d);
    results.add(d);
    finished.push_back(std::move(d));
  }
  if (!stop_requested()) results.set_checks(run_checks(finished));

  record_context(ctx, left_out, summary);
  auto written = results.write(out, options.force);
  if (!written) return written.status();
  summary.results_path = *written;
  return summary;
}

}  // namespace pmlab::bench
