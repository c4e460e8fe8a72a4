#include "pmlab/crash/shards.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "pmlab/crash/failure_groups.hpp"

namespace pmlab::crash {
namespace {

using json = nlohmann::ordered_json;

// A merged run has no shard index: it is the whole, not a shard of it.
bool is_sharded_crash_run(const json& doc) {
  if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array() || !doc.contains("context") ||
      !doc["context"].is_object() || !doc["context"].contains("crash") || !doc["context"]["crash"].is_object())
    return false;
  const json& shard = doc["context"]["crash"].value("shard", json());
  return shard.is_object() && shard.value("index", json()).is_number_unsigned() &&
         shard.value("of", json()).is_number_unsigned();
}

// The same settings but for the shard index, and every shard of the same count, each once, all there.
Result<uint64_t> check_shards(const std::vector<ShardDocument>& shards) {
  for (const ShardDocument& s : shards)
    if (!is_sharded_crash_run(s.document))
      return error(Errc::corrupted, s.origin + " is not the results of a sharded pmlab crash run");
  const json& first = shards.front().document["context"]["crash"];
  const uint64_t count = first["shard"]["of"].get<uint64_t>();
  std::set<uint64_t> seen;
  for (const ShardDocument& s : shards) {
    json settings = s.document["context"]["crash"], reference = first;
    const uint64_t index = settings["shard"]["index"].get<uint64_t>();
    settings.erase("shard");
    reference.erase("shard");
    if (settings != reference || s.document["context"]["crash"]["shard"]["of"] != count)
      return error(Errc::invalid_argument, s.origin + " was run with other settings than " + shards.front().origin);
    if (!seen.insert(index).second)
      return error(Errc::invalid_argument, "shard " + std::to_string(index) + " is given twice");
  }
  if (seen.size() != count)
    return error(Errc::invalid_argument, "shards " + std::to_string(seen.size()) + " of " + std::to_string(count) +
                                             " given: every shard is needed for the whole");
  return count;
}

// Adds a shard's run to the same run of the shards before it.
void add_run(json& merged, const json& run) {
  static const std::set<std::string> summed = {"states_checked", "duplicate_states", "recovery_states_checked",
                                               "failures", "seconds"};
  // at() on the shard's run: a key it lacks is an error to report, not a read past the object.
  const json& metrics = run.at("metrics");
  for (const auto& key : summed)
    if (merged["metrics"].contains(key) && metrics.contains(key))
      merged["metrics"][key]["value"] =
          merged["metrics"][key]["value"].get<double>() + metrics.at(key).at("value").get<double>();
  // A shard counts the kinds among its own failures: the whole has at least as many as any shard.
  if (merged["metrics"].contains("failure_kinds") && metrics.contains("failure_kinds"))
    merged["metrics"]["failure_kinds"]["value"] = std::max(merged["metrics"]["failure_kinds"]["value"].get<double>(),
                                                           metrics.at("failure_kinds").at("value").get<double>());
  for (const json& f : run.value("failures", json::array())) merged["failures"].push_back(f);
  if (run.at("status") == "error") {
    merged["status"] = "error";
    if (merged["reason"].is_null()) merged["reason"] = run.value("reason", json());
  }
}

// (crash point, state) of "12:3"; text of another form last.
std::pair<uint64_t, uint64_t> replay_order(const std::string& replay) {
  unsigned long long point = 0, state = 0;
  if (std::sscanf(replay.c_str(), "%llu:%llu", &point, &state) != 2) return {UINT64_MAX, UINT64_MAX};
  return {point, state};
}

// Each cause once: of the shards' failures of one cause (each standing for its shard's alike ones), the
// earliest stays, the others counted and listed among those alike to it. The failures are in crash-point order.
void fold_causes(json& failures) {
  json folded = json::array();
  std::map<std::string, size_t> at;
  for (json& f : failures) {
    if (!f.contains("cause")) {
      folded.push_back(std::move(f));
      continue;
    }
    auto [it, fresh] = at.emplace(f["cause"].get<std::string>(), folded.size());
    if (fresh) {
      folded.push_back(std::move(f));
      continue;
    }
    json& first = folded[it->second];
    std::vector<std::string> listed = first["alike_replays"].get<std::vector<std::string>>();
    listed.push_back(f["replay"].get<std::string>());
    for (const json& r : f["alike_replays"]) listed.push_back(r.get<std::string>());
    std::sort(listed.begin(), listed.end(),
              [](const std::string& a, const std::string& b) { return replay_order(a) < replay_order(b); });
    if (listed.size() > kAlikeListed) listed.resize(kAlikeListed);
    first["alike_replays"] = listed;
    first["alike"] = first["alike"].get<uint64_t>() + 1 + f["alike"].get<uint64_t>();
  }
  failures = std::move(folded);
}

// The rates and the coverage from the sums; the failures in crash-point order, each cause once.
void finish_run(json& run) {
  json& metrics = run["metrics"];
  if (metrics.contains("states_checked") && metrics.contains("seconds")) {
    const double seconds = metrics["seconds"]["value"].get<double>();
    const double checked = metrics["states_checked"]["value"].get<double>();
    metrics["states_per_second"]["value"] = seconds > 0 ? checked / seconds : 0.0;
    if (metrics.contains("state_space") && metrics["state_space"]["value"].get<double>() > 0)
      metrics["coverage"]["value"] = std::min(1.0, checked / metrics["state_space"]["value"].get<double>());
  }
  std::sort(run["failures"].begin(), run["failures"].end(), [](const json& x, const json& y) {
    return std::make_pair(x["crash_point"].get<uint64_t>(), x["state"].get<uint64_t>()) <
           std::make_pair(y["crash_point"].get<uint64_t>(), y["state"].get<uint64_t>());
  });
  fold_causes(run["failures"]);
  // Exact unless a shard had more kinds than it explained (max_failure_details): then a floor.
  if (metrics.contains("failure_kinds"))
    metrics["failure_kinds"]["value"] =
        std::max(metrics["failure_kinds"]["value"].get<double>(), static_cast<double>(run["failures"].size()));
}

// The runs of every shard by name, added up (check_shards has made sure they belong together).
MergedShards add_up(const std::vector<ShardDocument>& shards, uint64_t count) {
  std::map<std::string, json> by_name;
  std::vector<std::string> order;
  for (const ShardDocument& s : shards) {
    for (const json& run : s.document["runs"]) {
      const std::string name = run.at("name").get<std::string>();
      auto [it, fresh] = by_name.emplace(name, run);
      if (fresh) order.push_back(name);
      else add_run(it->second, run);
    }
  }
  MergedShards merged;
  merged.shards = count;
  merged.context = shards.front().document["context"];
  json origins = json::array();
  for (const ShardDocument& s : shards) origins.push_back(s.origin);
  merged.context["crash"]["shard"] = {{"index", nullptr}, {"of", count}, {"merged_from", origins}};
  for (const std::string& name : order) {
    json run = std::move(by_name[name]);
    finish_run(run);
    if (run["metrics"].contains("failures"))
      merged.failures += static_cast<uint64_t>(run["metrics"]["failures"]["value"].get<double>());
    merged.runs.push_back(std::move(run));
  }
  return merged;
}

}  // namespace

Result<MergedShards> merge_shards(const std::vector<ShardDocument>& shards) {
  if (shards.empty()) return error(Errc::invalid_argument, "name the shards' run directories");
  auto count = check_shards(shards);
  if (!count) return count.status();
  try {
    return add_up(shards, *count);
  } catch (const json::exception& e) {
    // A file edited by hand, or written by another tool: its runs are not what crash writes.
    return error(Errc::corrupted,
                 "the shards' runs are not as pmlab crash writes them (" + std::string(e.what()) + ")");
  }
}

}  // namespace pmlab::crash
