// The ds suite's summary: the target ratios against PMDK's maps and the overhead decomposition, as derived
// rows of results.json (summary.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/bench/case.hpp"

namespace pmlab::suites::ds {

// The target: our persist-mode structure >= 2x the throughput of PMDK's peer, on every workload run.
inline constexpr double kTargetRatio = 2.0;
// The structure that measures the harness itself (ycsb_case.cpp), and the bound on its share of the fastest
// structure's operation time.
inline constexpr const char* kNullStructure = "null";
// The null structure on the same operations with their types spread evenly (workload::with_types_spread):
// the harness without the branch mispredictions of a random operation mix, which every structure pays alike.
inline constexpr const char* kNullPredictableStructure = "null-predictable";
inline bool is_null_structure(const std::string& s) { return s == kNullStructure || s == kNullPredictableStructure; }
inline constexpr double kHarnessShareTarget = 0.15;
inline const std::vector<std::pair<std::string, std::string>> kTargetPairs{{"bptree", "pmdk-btree"},
                                                                           {"hashtable", "pmdk-hashmap-tx"}};

std::vector<record::RunRecord> summarize(const std::vector<record::RunRecord>& runs, const nlohmann::ordered_json& context);

}  // namespace pmlab::suites::ds
