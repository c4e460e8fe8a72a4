// Crash states of one crash point, cheapest first.
//
// A state chooses, for each pending unit, 0 (its durable content) or k >= 1 (its k-th candidate). The
// order: none and all persisted; every state when there are few (exhaustive); then accumulative prefixes
// (the first k units persisted, in address order); then every state at most `max_deviation` units away
// from none and from all; then seeded random states. Duplicates are dropped; the sequence is a function
// of (units, budget, seed) alone, so a state is replayed by its index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pmlab/crash/durability_tracker.hpp"

namespace pmlab::crash {

struct CrashState {
  std::vector<uint8_t> choice;  // per pending unit
  std::string strategy;         // "none", "all", "exhaustive", "prefix", "deviation", "random"
};

struct EnumerationLimits {
  uint64_t budget = 64;           // states at most
  uint64_t exhaustive_limit = 64; // enumerate everything when the state count is at most this
  int max_deviation = 2;
  uint64_t seed = 1;
};

std::vector<CrashState> enumerate_states(const std::vector<PendingUnit>& units, const EnumerationLimits& limits);

// The crash image of a state: the durable image with the chosen candidates written over it.
void build_image(const std::vector<std::byte>& durable, const std::vector<PendingUnit>& units,
                 const CrashState& state, std::byte* out);

// A content hash of the image a state yields, computable without building it: a sum over 8-byte words
// of a mix of (word index, value), so changing a unit only changes its words' terms.
uint64_t image_hash(const std::vector<std::byte>& durable);
uint64_t state_hash(uint64_t durable_hash, const std::vector<std::byte>& durable,
                    const std::vector<PendingUnit>& units, const CrashState& state);

// "lines 0x40 (latest), 0x80 (written back)": what a state persisted, for failure reports.
std::string describe(const std::vector<PendingUnit>& units, const CrashState& state);

}  // namespace pmlab::crash
