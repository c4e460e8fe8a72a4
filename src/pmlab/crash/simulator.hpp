// The crash simulator: runs a Subject's operation stream on a tracked region and, at every fence and at
// exit, checks crash states in forked children with the design's own recovery. Recovery is crash-tested
// too: at its own fences, what it has written so far is crashed and recovered again, from scratch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/durability_tracker.hpp"
#include "pmlab/crash/subject.hpp"

namespace pmlab::crash {

struct SimOptions {
  persist::Domain domain = persist::Domain::adr;
  Granularity granularity = Granularity::line;
  uint64_t budget = 2000;         // crash states checked in all (across crash points)
  uint64_t min_per_point = 2;     // at least none and all at every crash point while budget lasts
  uint64_t exhaustive_limit = 64;
  int max_deviation = 2;
  uint64_t seed = 1;              // enumeration seed (random states)
  double timeout_s = 5.0;         // per recovery; longer counts as a hang
  SubjectOptions subject;
  // Check only this (crash point, state): crash points numbered from 1 in order, states from 0.
  std::optional<std::pair<uint64_t, uint64_t>> replay;
  size_t max_failure_details = 20;
  // Crash during recovery: for every `recovery_every`-th state checked, recovery runs tracked, and at each
  // of its fences up to `recovery_budget` crash states of its writes are recovered again in a grandchild
  // and must meet the same contract (a recovery must survive its own crash). 0: off.
  uint64_t recovery_budget = 0;
  uint64_t recovery_every = 1;
};

struct Failure {
  uint64_t crash_point = 0;  // 1-based
  uint64_t state = 0;        // index in that crash point's enumeration
  CrashPoint at;
  std::string site;          // file:line (function) of the fence the crash came before
  std::string strategy;
  std::string persisted;     // which units the state persisted beyond the durable image
  std::string property;      // what the check said
  std::string replay() const { return std::to_string(crash_point) + ":" + std::to_string(state); }
};

struct SimReport {
  std::string subject;
  persist::Domain domain = persist::Domain::adr;
  Granularity granularity = Granularity::line;
  uint64_t operations = 0;
  uint64_t crash_points = 0;
  uint64_t crash_points_checked = 0;  // points that got at least one state before the budget ran out
  uint64_t states_enumerated = 0;
  uint64_t states_checked = 0;
  uint64_t duplicate_states = 0;  // identical (image, operation history) seen before: checked once
  uint64_t recovery_states_checked = 0;  // crash states taken inside recovery and recovered again
  uint64_t failures = 0;
  double seconds = 0.0;
  std::vector<Failure> details;
};

Result<SimReport> simulate(const SubjectInfo& subject, const SimOptions& options);

}  // namespace pmlab::crash
