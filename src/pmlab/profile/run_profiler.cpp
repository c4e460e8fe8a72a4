#include "pmlab/profile/run_profiler.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "pmlab/profile/flamegraph.hpp"

namespace pmlab::profile {
namespace {

namespace fs = std::filesystem;

// 4999 Hz: enough samples in a --quick run's 0.05 s per thread, and not a multiple of common timer ticks.
constexpr int kFrequencyHz = 4999;

std::string scratch_dir() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  return (base / ("pmlab-perf-" + std::to_string(getpid()))).string();
}

}  // namespace

RunProfiler::RunProfiler(std::string run_dir, PerfSupport perf)
    : run_dir_(std::move(run_dir)), perf_(std::move(perf)) {}

nlohmann::ordered_json RunProfiler::context_json() const {
  nlohmann::ordered_json j;
  j["enabled"] = true;
  j["available"] = perf_.available;
  j["event"] = perf_.available ? nlohmann::ordered_json(perf_.event) : nlohmann::ordered_json(nullptr);
  j["method"] = "perf record -e cpu-clock -a --call-graph fp, enabled around each run's body, filtered to this process";
  j["frequency_hz"] = kFrequencyHz;
  j["reason"] = perf_.available ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(perf_.reason);
  return j;
}

void RunProfiler::begin() {
  recording_.reset();
  start_error_.clear();
  if (!perf_.available) {
    start_error_ = perf_.reason;
    return;
  }
  if (!sites_loaded_) {  // once per invocation: objdump of the whole binary takes a moment
    sites_ = persist_sites_of_self();
    sites_loaded_ = true;
  }
  auto r = Recording::start(perf_, scratch_dir(), kFrequencyHz);
  if (!r) start_error_ = r.status().message();
  else recording_ = std::move(*r);
}

void RunProfiler::end(record::RunRecord& rec, const record::RunRecord* unprofiled) {
  auto missing = [&](const std::string& why) { rec.notes.emplace_back("profile_missing", why); };
  if (!recording_) {
    missing(start_error_);
    return;
  }
  Status stopped = recording_->stop();
  if (!stopped) {
    recording_.reset();
    missing(stopped.message());
    return;
  }
  auto samples = recording_->samples();
  recording_.reset();
  std::error_code ec;
  fs::remove_all(scratch_dir(), ec);
  if (!samples) {
    missing(samples.status().message());
    return;
  }
  const Breakdown b = breakdown(*samples, sites_);
  using record::Metric;
  using record::MetricKind;
  rec.set(Metric{"profile_samples", static_cast<double>(b.samples), "count", MetricKind::measured, {}});
  for (int i = 0; i < kActivities; ++i) {
    const auto a = static_cast<Activity>(i);
    rec.set(Metric{std::string("profile_share_") + to_string(a),
                   b.samples ? b.share(a) : std::nan(""),
                   "ratio",
                   MetricKind::measured,
                   {}});
  }
  if (unprofiled != nullptr) {
    const Metric* off = unprofiled->find("throughput");
    const Metric* on = rec.find("throughput");
    if (off && on && on->value > 0 && std::isfinite(off->value))
      rec.set(Metric{"profile_slowdown", off->value / on->value, "ratio", MetricKind::measured, {}});
  }
  rec.notes.emplace_back("profile_event", perf_.event);
  if (b.samples == 0) {
    missing("perf recorded no samples of this process during the run (too short for " + std::to_string(kFrequencyHz) +
            " Hz)");
    return;
  }
  FlameGraphOptions options;
  options.title = rec.name;
  options.subtitle = perf_.event + ", " + std::to_string(b.samples) + " samples, persistence " +
                     std::to_string(static_cast<int>(std::lround(100 * b.share(Activity::persistence)))) + "%";
  const std::string relative = "profiles/" + (rec.config_hash.empty() ? std::string("run") : rec.config_hash) + ".svg";
  fs::create_directories(fs::path(run_dir_) / "profiles", ec);
  std::ofstream out(fs::path(run_dir_) / relative, std::ios::binary | std::ios::trunc);
  out << flame_graph_svg(fold(*samples), options);
  if (!out.flush()) {
    missing("cannot write " + (fs::path(run_dir_) / relative).string());
    return;
  }
  rec.notes.emplace_back("profile_svg", relative);
}

}  // namespace pmlab::profile
