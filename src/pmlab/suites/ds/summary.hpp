// The ds suite's summary: the target ratios against PMDK's maps and the overhead decomposition, as derived
// rows of results.json (summary.cpp).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/bench/case.hpp"
#include "pmlab/suites/ds/contenders.hpp"

namespace pmlab::suites::ds {

// The target: our persist-mode structure >= 2x the throughput of PMDK's peer, on every workload run.
inline constexpr double kTargetRatio = 2.0;
// The bound on the harness's share of the fastest structure's time per operation (ds.harness).
inline constexpr double kHarnessShareTarget = 0.15;

std::vector<record::RunRecord> summarize(const std::vector<record::RunRecord>& runs,
                                         const nlohmann::ordered_json& context);

}  // namespace pmlab::suites::ds
