// The ds suite's summary: the target ratios against PMDK's maps and the overhead decomposition, as derived
// rows of results.json (summary.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/bench/case.hpp"

namespace pmlab::suites::ds {

// The target: our persist-mode structure >= 1.5x the throughput of PMDK's peer (workload a).
inline constexpr double kTargetRatio = 1.5;
inline const std::vector<std::pair<std::string, std::string>> kTargetPairs{{"bptree", "pmdk-btree"},
                                                                           {"hashtable", "pmdk-hashmap-tx"}};

std::vector<record::RunRecord> summarize(const std::vector<record::RunRecord>& runs, const nlohmann::ordered_json& context);

}  // namespace pmlab::suites::ds
