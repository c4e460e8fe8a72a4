// What the `pmlab crash` commands share: the options they read alike, and what they record (run records
// of the `crash` suite in results.json, with the machine's context and the simulator's settings).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/durability_tracker.hpp"
#include "pmlab/crash/failure_groups.hpp"
#include "pmlab/persist/persister.hpp"
#include "pmlab/record/record.hpp"

namespace pmlab::cli {

// "line,word": each granularity once, in the order given.
Result<std::vector<crash::Granularity>> parse_granularities(const std::string& text);
// adr and/or eadr (none keeps nothing durable: refused).
Result<std::vector<persist::Domain>> parse_domains(const std::vector<std::string>& names);
// "K/N" as (K-1, N), 1 <= K <= N.
Result<std::pair<uint64_t, uint64_t>> parse_shard(const std::string& text);
// "POINT:STATE", POINT from 1, STATE from 0.
Result<std::pair<uint64_t, uint64_t>> parse_replay(const std::string& text);
// --shard K/N and --replay POINT:STATE, where given, into the options of a simulator campaign or an exec
// run (both keep them as shard, shards and replay).
template <class Options>
Status read_shard_and_replay(const std::string& shard, const std::string& replay, Options& o) {
  if (!shard.empty()) {
    auto s = parse_shard(shard);
    if (!s) return s.status();
    std::tie(o.shard, o.shards) = *s;
  }
  if (!replay.empty()) {
    auto r = parse_replay(replay);
    if (!r) return r.status();
    o.replay = *r;
  }
  return Status::success();
}

void measured(record::RunRecord& rec, const char* name, double value, const char* unit);

// A shown failure with its cause's key and the failures alike to it (crash/failure_groups.hpp): "cause" (as
// hex text: JSON readers lose digits of numbers past 2^53), "alike" and "alike_replays".
nlohmann::ordered_json with_alike(nlohmann::ordered_json failure, const crash::Alike& alike);
// "    and 12 more like it (2:6, 4:4, ...)" on stderr, where the failure stands for others.
void print_alike(const crash::Alike& alike);
// " of 7 kinds", after a run's count of failures ("" where none failed).
std::string failures_of_kinds(uint64_t kinds);
// A crash run's record before its outcome: what it is (an ordinary run record of the `crash` suite).
record::RunRecord crash_record(const std::string& name, const std::string& design, nlohmann::ordered_json params,
                               uint64_t context_hash);

// What the simulator's reports (crash::SimReport) and an exec run's (crash::exec::ExecRun) keep under the
// same names, recorded alike. A run's record: its domain and granularity as params, and, when a state
// failed, an error whose reason is `reason(first failure)`.
template <class Run, class Reason>
record::RunRecord crash_run_record(const std::string& name, const std::string& design, const Run& r,
                                   const Reason& reason, uint64_t context_hash) {
  record::RunRecord rec = crash_record(
      name, design, {{"domain", persist::to_string(r.domain)}, {"granularity", crash::to_string(r.granularity)}},
      context_hash);
  if (r.failures) {
    rec.status = record::RunStatus::error;
    rec.reason = r.details.empty() ? "failures" : reason(r.details[0]);
  }
  return rec;
}
// The crash points and states the run took and judged.
template <class Run>
void measure_states(record::RunRecord& rec, const Run& r) {
  const auto count = [](uint64_t v) { return static_cast<double>(v); };
  measured(rec, "crash_points", count(r.crash_points), "count");
  measured(rec, "crash_points_checked", count(r.crash_points_checked), "count");
  measured(rec, "states_enumerated", count(r.states_enumerated), "count");
  measured(rec, "states_checked", count(r.states_checked), "count");
  measured(rec, "duplicate_states", count(r.duplicate_states), "count");
}
// The states that failed, how fast the run judged them and how many it could have taken.
template <class Run>
void measure_outcome(record::RunRecord& rec, const Run& r) {
  const auto count = [](uint64_t v) { return static_cast<double>(v); };
  measured(rec, "failures", count(r.failures), "count");
  measured(rec, "failure_kinds", count(r.failure_kinds), "count");
  measured(rec, "seconds", r.seconds, "s");
  measured(rec, "states_per_second", r.seconds > 0 ? count(r.states_checked) / r.seconds : 0.0, "states/s");
  measured(rec, "state_space", r.state_space, "count");
}

// The context of a crash run: the machine (as for `pmlab run`), no pool, and the settings, which with the
// CPU shape its numbers. `hash` receives the context's hash.
nlohmann::ordered_json crash_context(const nlohmann::ordered_json& crash_settings, const std::string& domain,
                                     bool quick, uint64_t* hash);
// DIR, or results/<default_name> made new to this run (bench::make_default_run_directory).
std::filesystem::path out_dir(const std::string& dir, const std::string& default_name);

}  // namespace pmlab::cli
