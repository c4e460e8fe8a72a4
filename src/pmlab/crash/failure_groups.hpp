// Failures alike, shown once. A bug shows in state after state that differ only in which record the crash
// cut or which bytes persisted: listed one by one, twenty alike failures hide the one that is not. Each
// crash-testing mode keys its failures by what makes them alike (the simulator in simulator.cpp, crash exec
// in exec/failure_causes.hpp); a failure shown stands for the others of its key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pmlab::crash {

// How many of the failures alike to the one shown are named (as crash point:state).
inline constexpr size_t kAlikeListed = 8;

// How a failure is named to replay it: "POINT:STATE" (--replay takes it).
inline std::string replay_id(uint64_t crash_point, uint64_t state) {
  return std::to_string(crash_point) + ":" + std::to_string(state);
}

// The failures a shown failure stands for: the others of its key, after it by crash point and state.
struct Alike {
  uint64_t cause = 0;                // the key its failures share
  uint64_t others = 0;               // how many besides it
  std::vector<std::string> replays;  // the first of them (crash point:state), at most kAlikeListed
};

// The text with every number written as '#': a run of digits, or a hexadecimal one after 0x
// ("slot 0x1f0 holds 92" -> "slot # holds #").
std::string numbers_masked(std::string_view text);

// The positions of `keys` grouped by key, each group in the order of its positions and the groups in the
// order of their first position.
std::vector<std::vector<size_t>> group_alike(const std::vector<uint64_t>& keys);

}  // namespace pmlab::crash
