// What the `pmlab crash` commands share: the options they read alike, and what they record (run records
// of the `crash` suite in results.json, with the machine's context and the simulator's settings).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/durability_tracker.hpp"
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

void measured(record::RunRecord& rec, const char* name, double value, const char* unit);
// A crash run's record before its outcome: what it is (an ordinary run record of the `crash` suite).
record::RunRecord crash_record(const std::string& name, const std::string& design, nlohmann::ordered_json params,
                               uint64_t context_hash);
// The context of a crash run: the machine (as for `pmlab run`), no pool, and the settings, which with the
// CPU shape its numbers. `hash` receives the context's hash.
nlohmann::ordered_json crash_context(const nlohmann::ordered_json& crash_settings, const std::string& domain,
                                     bool quick, uint64_t* hash);
// DIR, or results/<default_name>.
std::filesystem::path out_dir(const std::string& dir, const std::string& default_name);

}  // namespace pmlab::cli
