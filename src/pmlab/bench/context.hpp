// The `context` block of results.json: the machine and setup every number in a run depends on.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "pmlab/platform/memory_tiers.hpp"

namespace pmlab::bench {

inline constexpr int kSchemaVersion = 3;
inline constexpr const char* kPmlabVersion = "0.1.0";

// CPU (vendor, model, ISA flags, caches, TSC rate, allowed CPUs), NUMA nodes and memory tiers, kernel,
// host, timer, hardware-counter availability, git revision.
nlohmann::ordered_json machine_context();

// The memory tiers (platform/memory_tiers.hpp) as results.json and `pmlab info --json` write them.
nlohmann::ordered_json memory_tiers_json(const platform::MemoryTopology& topology);

// "20261121-214000" in UTC, and the ISO 8601 form of the same instant.
std::string run_id_now();
std::string iso8601_now();

}  // namespace pmlab::bench
