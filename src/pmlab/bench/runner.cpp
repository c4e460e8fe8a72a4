#include "pmlab/bench/runner.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <regex>
#include <set>

#include "pmlab/bench/context.hpp"
#include "pmlab/bench/progress.hpp"
#include "pmlab/common/files.hpp"
#include "pmlab/common/hash.hpp"
#include "pmlab/common/stop_signal.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/model/run_devices.hpp"
#include "pmlab/platform/system.hpp"
#include "pmlab/platform/topology.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/profile/counters.hpp"
#include "pmlab/profile/run_profiler.hpp"

namespace pmlab::bench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBenchLayout = "bench";
constexpr uint64_t kMinBenchPool = 64ULL << 20;

// Benchmarks use the pool's data area as scratch memory: nothing to recover.
[[maybe_unused]] const bool bench_layout_registered = pool::LayoutRegistry::instance().add(
    {kBenchLayout, 1, "scratch memory for benchmarks (no persistent structure, nothing to recover)", {}, {}});

struct PlannedRun {
  const CaseDef* def;
  Params params;
  std::string name;
};

bool uses_pool(const PlannedRun& r) {
  return r.params.has("medium") && r.params.text("medium") == "pool";
}

uint64_t region_bytes(const PlannedRun& r) { return r.def->region_bytes ? r.def->region_bytes(r.params) : 0; }

// What the pool-using runs need, at least 64 MiB, in 2 MiB steps.
uint64_t pool_bytes_for(const std::vector<PlannedRun>& plan) {
  uint64_t need = kMinBenchPool;
  for (const auto& r : plan)
    if (uses_pool(r)) need = std::max(need, region_bytes(r) + pool::kHeaderSize);
  return (need + (2ULL << 20) - 1) & ~((2ULL << 20) - 1);
}

std::string default_pool_path() {
  std::error_code ec;
  fs::path dir = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path(ec);
  return (dir / ("pmlab-" + std::to_string(getpid()) + ".pool")).string();
}

// Replaces domain=auto / flush=auto with the run's default so names and records say what ran.
void resolve_auto(Params& p, const persist::Config& defaults) {
  if (p.has("domain") && p.text("domain") == "auto") p.set("domain", persist::to_string(defaults.domain));
  if (p.has("flush") && p.text("flush") == "auto") p.set("flush", persist::to_string(defaults.flush));
}

// Temporary pools of processes that ended without removing them (SIGKILL) fill /dev/shm run after run.
// Removes the ones whose process is gone and whose lock is free; names those it cannot remove.
void sweep_stale_pools(const fs::path& dir) {
  const auto note = [](const std::string& line) { std::fprintf(stderr, "%s\n", printable(line).c_str()); };
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("pmlab-", 0) != 0 || name.size() <= 11 || name.compare(name.size() - 5, 5, ".pool") != 0) continue;
    const std::string digits = name.substr(6, name.size() - 11);
    auto pid = parse_count(digits, 1, INT32_MAX);
    if (!pid || static_cast<pid_t>(*pid) == getpid()) continue;
    const std::string path = entry.path().string();
    // A live process may be a pmlab run that is using its pool: not ours to judge.
    if (kill(static_cast<pid_t>(*pid), 0) == 0 || errno == EPERM) continue;
    // remove() takes the pool's lock first, so a pool some process still has open is left alone.
    if (Status s = pool::remove(path, pool::RemoveMode::damaged_too); s) {
      note("pmlab: removed stale pool " + path + " (process " + digits + " ended without removing it)");
    } else if (s.code() != Errc::busy && s.code() != Errc::not_found) {
      note("pmlab: note: " + path + " was left by process " + digits + ", which has ended; not removed: " +
                    s.message() + " (remove it with: rm " + path + ")");
    }
  }
}

// A run directory that already holds results would end up with new results beside an old report.
Status check_out_dir(const fs::path& out, bool force) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return Status::success();
  if (!fs::is_directory(out, ec)) return error(Errc::not_a_file, "--out " + out.string() + " exists and is not a directory");
  for (const char* name : {"results.json", "report.html"}) {
    if (!force && fs::exists(out / name, ec))
      return error(Errc::already_exists, "--out " + out.string() + " already holds " + name +
                                             "; choose a new directory, or pass --force to replace its results "
                                             "(the old report is removed with them)");
  }
  return Status::success();
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

namespace {

Result<std::vector<PlannedRun>> plan_runs(const std::vector<const CaseDef*>& selected, const Overrides& overrides,
                                          bool quick, size_t& redundant) {
  std::vector<PlannedRun> plan;
  for (const CaseDef* c : selected) {
    auto points = expand(c->params, overrides, quick);
    if (!points) return error(Errc::invalid_argument, c->full_name() + ": " + points.status().message());
    for (auto& p : *points) {
      if (c->redundant && c->redundant(p)) {
        ++redundant;
        continue;
      }
      plan.push_back({c, std::move(p), {}});
    }
  }
  return plan;
}

}  // namespace

Result<uint64_t> pool_size_for(const std::vector<std::string>& selectors, bool quick) {
  auto selected = select_cases(selectors);
  if (!selected) return selected.status();
  size_t redundant = 0;
  auto plan = plan_runs(*selected, {}, quick, redundant);
  if (!plan) return plan.status();
  return pool_bytes_for(*plan);
}

Result<RunSummary> run(const RunOptions& options) {
  auto selected = select_cases(options.selectors);
  if (!selected) return selected.status();

  // Every --set must name a parameter of some selected case: a typo must not silently run defaults.
  for (const auto& [name, values] : options.overrides) {
    bool known = false;
    for (const CaseDef* c : *selected)
      for (const auto& spec : c->params) known = known || spec.name == name;
    if (!known) return error(Errc::invalid_argument, "--set " + name + ": no selected case has a parameter '" + name + "'");
  }
  std::optional<std::regex> filter;
  if (!options.filter.empty()) {
    try {
      filter.emplace(options.filter);
    } catch (const std::regex_error& e) {
      return error(Errc::invalid_argument, "--filter '" + options.filter + "' is not a valid regular expression");
    }
  }
  if (options.flush) PMLAB_TRY(persist::check_supported(*options.flush, platform::CpuFeatures::host()));
  // A sweep that names a flush instruction the CPU lacks would skip every run and "succeed".
  if (auto it = options.overrides.find("flush"); it != options.overrides.end()) {
    for (const std::string& value : it->second) {
      if (value == "auto") continue;
      auto flush = persist::parse_flush(value);
      if (!flush) return flush.status();
      if (Status s = persist::check_supported(*flush, platform::CpuFeatures::host()); !s)
        return error(s.code(), "--set flush=" + value + ": " + s.message());
    }
  }
  if (options.duration_s && *options.duration_s <= 0) return error(Errc::invalid_argument, "--duration must be positive");
  if (options.ops && *options.ops == 0) return error(Errc::invalid_argument, "--ops must be positive");
  auto devices = model::resolve_run_devices(options.model, options.emulate);
  if (!devices) return devices.status();

  // Plan: expand the sweeps (names resolved after the run's defaults are known).
  size_t redundant = 0;
  auto planned = plan_runs(*selected, options.overrides, options.quick, redundant);
  if (!planned) return planned.status();
  std::vector<PlannedRun>& plan = *planned;

  const std::string run_id = run_id_now();
  const fs::path out = options.out_dir.empty() ? fs::path("results") / run_id : fs::path(options.out_dir);
  PMLAB_TRY(check_out_dir(out, options.force));

  // From here on a stop signal ends the run cleanly: the temporary pool is removed, what ran is written.
  StopSignals stop_signals;

  // The pool, when any run needs it: opened once, locked for the whole run.
  std::unique_ptr<pool::Pool> bench_pool;
  bool created_pool = false;
  std::string pool_path = options.pool_path.empty() ? default_pool_path() : options.pool_path;
  if (options.pool_path.empty()) sweep_stale_pools(fs::path(pool_path).parent_path());
  if (std::any_of(plan.begin(), plan.end(), uses_pool)) {
    std::error_code ec;
    if (fs::exists(pool_path, ec) || fs::is_symlink(pool_path, ec)) {
      pool::OpenOptions open_options;
      open_options.layout = kBenchLayout;
      auto opened = pool::Pool::open(pool_path, open_options);
      if (!opened) return opened.status();
      bench_pool = std::move(*opened);
    } else {
      const uint64_t size = options.pool_size ? options.pool_size : pool_bytes_for(plan);
      if (!options.keep_pool) StopSignals::set_file_to_remove(pool_path);
      auto made = pool::Pool::create(pool_path, size, kBenchLayout);
      if (!made) return made.status();
      bench_pool = std::move(*made);
      created_pool = true;
    }
  }
  struct PoolCleanup {
    bool remove;
    std::string path;
    std::unique_ptr<pool::Pool>& pool;
    ~PoolCleanup() {
      pool.reset();
      if (remove) (void)pool::remove(path, pool::RemoveMode::damaged_too);
      StopSignals::set_file_to_remove("");
    }
  } cleanup{created_pool && !options.keep_pool, pool_path, bench_pool};

  // Run-wide persistence defaults: the pool's map-time choice, else ADR with the best flush; then flags.
  persist::Config defaults;
  if (bench_pool) {
    defaults = bench_pool->persister().config();
  } else {
    auto d = persist::default_config(persist::Domain::adr, platform::CpuFeatures::host());
    if (!d) return d.status();
    defaults = *d;
  }
  if (options.domain) defaults.domain = *options.domain;
  if (options.flush) defaults.flush = *options.flush;

  std::set<std::string> seen;
  std::vector<PlannedRun> runs;
  for (auto& r : plan) {
    resolve_auto(r.params, defaults);
    r.name = r.def->full_name() + r.params.name_suffix();
    if (filter && !std::regex_search(r.name, *filter)) continue;
    if (!seen.insert(r.name).second) continue;
    runs.push_back(std::move(r));
  }
  if (runs.empty()) return error(Errc::invalid_argument, "nothing to run: the selection and --filter match no run");

  nlohmann::ordered_json doc;
  doc["schema_version"] = kSchemaVersion;
  doc["pmlab_version"] = kPmlabVersion;
  nlohmann::ordered_json ctx;
  ctx["run_id"] = run_id;
  ctx["date"] = iso8601_now();
  ctx["command_line"] = options.command_line;
  ctx["quick"] = options.quick;
  const nlohmann::ordered_json machine = machine_context();
  for (const auto& [k, v] : machine.items()) ctx[k] = v;
  if (bench_pool) {
    ctx["pool"] = {{"path", bench_pool->path()},
                   {"medium", pool::to_string(bench_pool->medium())},
                   {"filesystem", platform::filesystem_of(bench_pool->path())},
                   {"size_bytes", bench_pool->size()},
                   {"store_granularity", bench_pool->store_granularity()}};
  } else {
    ctx["pool"] = nullptr;
  }
  ctx["durability_domain"] = persist::to_string(defaults.domain);
  ctx["flush_instruction"] = persist::to_string(defaults.flush);
  if (devices->active()) ctx["model"] = model::context_json(*devices);
  RunControl control;
  control.duration_s = options.duration_s.value_or(options.quick ? 0.05 : 0.5);
  control.warmup_s = std::min(0.1, control.duration_s / 5);
  control.ops = options.ops.value_or(0);
  ctx["run_control"] = {{"duration_s", control.ops ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(control.duration_s)},
                        {"ops_per_thread", control.ops ? nlohmann::ordered_json(control.ops) : nlohmann::ordered_json(nullptr)},
                        {"warmup_s", control.warmup_s}};
  // The hash covers what shapes the numbers, so rows from different setups never join by accident.
  nlohmann::ordered_json shaping = {{"cpu", ctx["cpu"]["model"]}, {"kernel", ctx["kernel"]},
                                    {"pool", ctx["pool"].is_null() ? "" : ctx["pool"]["medium"].get<std::string>()},
                                    {"domain", ctx["durability_domain"]}, {"flush", ctx["flush_instruction"]},
                                    {"control", ctx["run_control"]}, {"version", kPmlabVersion},
                                    {"git", ctx["git_revision"]}};
  if (devices->active()) shaping["model"] = ctx["model"];
  const std::string shaping_text = json_text(shaping);
  const uint64_t context_hash = fnv1a64(shaping_text.data(), shaping_text.size());
  ctx["config_hash"] = hex64(context_hash);
  nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
  if (redundant > 0)
    skipped.push_back({{"name", "sweep"}, {"reason", std::to_string(redundant) + " sweep points duplicate others (e.g. a flush instruction under a domain that issues none) and were left out"}});

  const std::vector<int> cpus = platform::allowed_cpus();
  media::DramBuffer dram;
  std::unique_ptr<profile::RunProfiler> profiler;
  if (options.profile) {
    profiler = std::make_unique<profile::RunProfiler>(out.string());
    ctx["profile"] = profiler->context_json();
  }
  // Hardware counters wherever readable (core PMU, uncore IMC, PMEM DIMMs): every run records them.
  const profile::CounterSources counter_sources = profile::detect_counters();
  ctx["counters"] = counter_sources.context_json();
  Progress progress(runs.size(), options.progress);
  RunSummary summary;
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  std::vector<RunRecord> finished;  // what suite summaries derive their rows from

  for (const auto& r : runs) {
    if (stop_requested()) break;
    progress.step(r.name);
    // A run's record before it runs: what it is, nothing measured.
    const auto blank_record = [&] {
      RunRecord blank;
      blank.name = r.name;
      blank.suite = r.def->suite;
      blank.case_name = r.def->name;
      blank.params = r.params.json();
      blank.config_hash = hex64(fnv1a64(r.name.data(), r.name.size(), context_hash));
      return blank;
    };
    RunRecord rec = blank_record();
    try {
      const int threads = r.params.has("threads") ? static_cast<int>(r.params.integer("threads")) : 1;
      if (static_cast<size_t>(threads) > cpus.size())
        throw RunAbort{RunStatus::skipped, "threads=" + std::to_string(threads) + " exceeds the " +
                                               std::to_string(cpus.size()) + " CPUs this process may use"};
      persist::Config pc = defaults;
      if (r.params.has("domain")) pc.domain = persist::parse_domain(r.params.text("domain")).value();
      if (r.params.has("flush")) pc.flush = persist::parse_flush(r.params.text("flush")).value();
      auto persister = persist::Persister::create(pc);
      if (!persister) throw RunAbort{RunStatus::skipped, persister.status().message()};
      // The device model of --model / --emulate, observing this run's persister.
      std::unique_ptr<model::DeviceModel> device = model::model_for_run(*devices, uses_pool(r));
      if (device) persister->attach(device.get());

      media::Region region;
      const uint64_t bytes = region_bytes(r);
      if (bytes > 0) {
        if (uses_pool(r)) {
          if (bench_pool->data_size() < bytes)
            throw RunAbort{RunStatus::error, "needs " + format_size(bytes) + " of pool, " + bench_pool->path() + " has " +
                                                 format_size(bench_pool->data_size()) +
                                                 (created_pool ? std::string(" (use a larger --pool-size)")
                                                               : " (--pool-size applies only to a pool pmlab creates: "
                                                                 "make a larger one with pmlab pool create PATH --size " +
                                                                     format_size(pool_bytes_for(runs)) + ")")};
          region = {bench_pool->data(), bytes, media::Kind::pool};
        } else {
          if (Status s = dram.reserve(bytes); !s) throw RunAbort{RunStatus::error, s.message()};
          region = dram.region();
          region.size = bytes;
        }
      }
      RunContext ctx_run(*r.def, r.params, rec, region, *persister, control, threads, cpus, options.quick);
      ctx_run.set_model(device.get());
      if (device) device->reset();
      if (profiler) {
        // The same run once without perf first, so the record can state the profiling slowdown.
        RunRecord unprofiled = rec;
        {
          RunContext ctx_plain(*r.def, r.params, unprofiled, region, *persister, control, threads, cpus, options.quick);
          ctx_plain.set_model(device.get());
          r.def->body(ctx_plain);
        }
        if (device) device->reset();
        profiler->begin();
        profile::RunCounters counters(counter_sources);
        counters.begin();
        r.def->body(ctx_run);
        counters.end(rec);
        profiler->end(rec, &unprofiled);
      } else {
        profile::RunCounters counters(counter_sources);
        counters.begin();
        r.def->body(ctx_run);
        counters.end(rec);
      }
      if (device) model::finish_run(*device, rec);
    } catch (const RunAbort& abort) {
      rec.status = abort.status;
      rec.reason = abort.reason;
    } catch (const std::exception& e) {
      rec.status = RunStatus::error;
      rec.reason = e.what();
    }
    // A run a stop signal cut short measured less than it says: it is abandoned, not recorded as ok.
    if (stop_requested() && rec.status == RunStatus::ok) {
      rec = blank_record();
      rec.status = RunStatus::skipped;
      rec.reason = "interrupted by " + signal_name(stop_signal()) + " before it finished";
    }
    if (rec.status == RunStatus::ok) ++summary.ok;
    else if (rec.status == RunStatus::error) ++summary.errors;
    else ++summary.skipped;
    if (rec.status == RunStatus::error) progress.note("pmlab: error in " + rec.name + ": " + rec.reason);
    records.push_back(to_json(rec));
    finished.push_back(std::move(rec));
  }
  // Suite summaries: derived rows after every run, so they can join runs of several cases. An
  // interrupted run has only some of the rows a summary joins: it gets none.
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
      d.config_hash = hex64(fnv1a64(d.name.data(), d.name.size(), context_hash));
      if (d.status == RunStatus::ok) ++summary.ok;
      else if (d.status == RunStatus::error) ++summary.errors;
      else ++summary.skipped;
      if (d.status == RunStatus::error) progress.note("pmlab: error in " + d.name + ": " + d.reason);
      records.push_back(to_json(d));
    }
  }
  ctx["skipped"] = skipped;
  summary.stop_signal = stop_signal();
  ctx["interrupted"] = summary.stop_signal != 0;
  doc["context"] = ctx;
  doc["runs"] = records;

  std::error_code ec;
  const bool out_existed = fs::exists(out, ec);
  fs::create_directories(out, ec);
  if (ec) return errno_status(ec.value(), "cannot create " + out.string());
  fs::path file = out / "results.json";
  if (Status s = write_file_atomically(file.string(), json_text(doc, 1) + "\n"); !s) {
    if (!out_existed) fs::remove(out, ec);  // no empty run directory left behind (removes only an empty one)
    return s;
  }
  // --force: the old report described the old results.
  if (options.force) fs::remove(out / "report.html", ec);
  summary.results_path = file.string();
  return summary;
}

}  // namespace pmlab::bench
