// Adding up a sharded crash run: `pmlab crash … --shard K/N` (and `crash exec --shard`) checks a
// deterministic share of the crash states, so N shards run anywhere (a batch system's array job) and their
// results.json documents add up to the run they stand for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/common/status.hpp"

namespace pmlab::crash {

struct ShardDocument {
  std::string origin;               // where it was read from, for the errors
  nlohmann::ordered_json document;  // a results.json of a sharded crash run
};

struct MergedShards {
  nlohmann::ordered_json context;            // the first shard's, its shard marked merged from `origins`
  std::vector<nlohmann::ordered_json> runs;  // one per run name, in the order first met
  uint64_t shards = 0;
  uint64_t failures = 0;  // failing crash states over every run
};

// Every shard of one run, each once, run with the same settings: their runs by name, with the counts of
// the states each shard checked added up (states, duplicates, recovery states, failures, seconds), the
// exploration's own numbers (crash points, state space) taken as they are in every shard, the rates and
// the coverage recomputed from the sums, and the failures listed in crash-point order (each cause
// once: the earliest of the shards' failures of that cause, the others counted alike to it). Anything else is
// an error naming the shard: a document of another kind, other settings, a shard twice or missing.
Result<MergedShards> merge_shards(const std::vector<ShardDocument>& shards);

}  // namespace pmlab::crash
