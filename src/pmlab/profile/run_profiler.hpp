// `pmlab run --profile`: records each run with perf, folds its stacks, writes its flame graph to
// <run-dir>/profiles/<config-hash>.svg and adds the time breakdown to its record. Without perf or
// without permission the runs go on, and the context and every run's notes say why there is no profile.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "pmlab/record/record.hpp"
#include "pmlab/profile/perf.hpp"

namespace pmlab::profile {

class RunProfiler {
 public:
  // `run_dir` is where results.json goes; profiles go to run_dir/profiles.
  explicit RunProfiler(std::string run_dir, PerfSupport perf = detect_perf());

  // context.profile: whether profiling was on, the event, the method, or why there is no profile.
  nlohmann::ordered_json context_json() const;

  // Starts sampling for one run (a failure is kept and reported by end()).
  void begin();
  // Stops sampling and adds to `rec`: metrics profile_samples, profile_share_<activity> (fraction of
  // sampled time, measured), and profile_slowdown when `unprofiled` (the same run without perf) has a
  // throughput; notes profile_svg and profile_event, or profile_missing with the reason.
  void end(record::RunRecord& rec, const record::RunRecord* unprofiled);

  bool available() const { return perf_.available; }

 private:
  std::string run_dir_;
  PerfSupport perf_;
  std::unique_ptr<Recording> recording_;
  std::string start_error_;
  bool sites_loaded_ = false;
  PersistSites sites_;
};

}  // namespace pmlab::profile
