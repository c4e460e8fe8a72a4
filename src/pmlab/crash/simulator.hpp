// The crash simulator: runs a Subject's operation stream on a tracked region and, at every fence and at
// exit, checks crash states with the design's own recovery, in processes that never ran the design
// (checker.hpp). Recovery is crash-tested too: inside it and at its end, what it wrote is crashed and
// recovered again, from scratch.
//
// The stream runs twice: a first run measures each crash point's state space, so the budget goes where
// the states are (a point with few states takes only what it has; the rest share what remains); the
// second run checks. A design whose two runs differ is reported, not trusted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/call_sites.hpp"
#include "pmlab/crash/durability_tracker.hpp"
#include "pmlab/crash/failure_groups.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash {

struct SimOptions {
  persist::Domain domain = persist::Domain::adr;
  Granularity granularity = Granularity::line;
  uint64_t budget = 2000;  // crash states in all (across crash points)
  uint64_t seed = 1;       // enumeration seed (random states, recovery sampling)
  double timeout_s = 5.0;  // per recovery; longer counts as a hang
  SubjectOptions subject;
  // Check only this (crash point, state): crash points numbered from 1 in order, states from 0.
  std::optional<std::pair<uint64_t, uint64_t>> replay;
  size_t max_failure_details = 20;  // causes explained (each by its first failure)
  // Crash during and at the end of recovery: the recovery of one state in `recovery_every` (picked by a
  // seeded hash of the state, so no pattern of the design can dodge it) runs tracked, and at each of its
  // fences and at its end up to `recovery_budget` crash states of its writes are recovered again. 0: off.
  uint64_t recovery_budget = 0;
  uint64_t recovery_every = 1;
  unsigned jobs = 0;  // checker processes; 0: one per CPU this process may run on
  // Check only the states of shard `shard` (0-based) of `shards`: a deterministic partition of the states
  // by their content, so shards run anywhere and `crash merge` adds them up to the whole.
  uint64_t shard = 0, shards = 1;
  std::optional<Mutant> mutant;  // mutation testing: one call site removed or weakened
  // A concurrent run's targeted preemption (Interleaving::park_after): the thread that makes the mutated
  // call is parked at its `park_depth`-th handover point after it while the others run `park_hold` of
  // theirs. 0: the seeded random schedule alone.
  unsigned park_depth = 0, park_hold = 48;
  // Or the thread that makes the mutated call runs alone for `alone_hold` of its handover points after it
  // (Interleaving::run_alone_after). 0: off.
  unsigned alone_hold = 0;
  bool stop_at_first_failure = false;
  bool record_sites = false;  // report the call sites the run and the recoveries reached
};

struct Failure {
  uint64_t crash_point = 0;  // 1-based
  uint64_t state = 0;        // index in that crash point's exploration
  CrashPoint at;
  std::string site;  // file:line (function) of the fence the crash came before
  std::string strategy;
  std::string persisted;  // which pieces the state persisted beyond the durable image
  std::string property;   // what the check said
  // The failures it stands for: those at the same site, in or after the same kind of operation, that
  // persisted the same pieces and broke the same property, but for the numbers in each.
  Alike alike;
  std::string replay() const { return replay_id(crash_point, state); }
};

struct SimReport {
  std::string subject;
  persist::Domain domain = persist::Domain::adr;
  Granularity granularity = Granularity::line;
  uint64_t shard = 0, shards = 1;
  uint64_t operations = 0;
  bool concurrent = false;  // the subject ran threads (OpTracker::run_threads)
  uint64_t crash_points = 0;
  uint64_t crash_points_checked = 0;     // points with at least one state checked
  uint64_t states_enumerated = 0;        // states the explorations chose (all shards)
  uint64_t states_checked = 0;           // recovered and checked (this shard)
  uint64_t duplicate_states = 0;         // identical (image, operation history) seen before: checked once
  uint64_t recovery_states_checked = 0;  // crash states taken inside recovery and recovered again
  uint64_t failures = 0;
  uint64_t failure_kinds = 0;  // the failures' causes
  double seconds = 0.0;
  // Coverage.
  double state_space = 0.0;        // crash states of all points (capped at 1e300 per point)
  uint64_t exhaustive_points = 0;  // points whose every state was chosen
  uint64_t deviation_depth = 0;    // the shallowest complete whole-line deviation level of a point not
                                   // covered exhaustively (the most pending lines when all were)
  uint64_t max_pending_lines = 0;
  uint64_t dropped_values = 0;           // line values beyond the tracker's limit, not explored
  MutationEffects mutation_effects;      // what the calls the mutant changed did (run and recoveries)
  std::vector<Failure> details;          // the first failure of each of the first causes, by crash point and state
  std::map<SiteKey, std::string> sites;  // with record_sites: the call sites reached
};

Result<SimReport> simulate(const SubjectInfo& subject, const SimOptions& options);

// How many checker processes `jobs = 0` means here.
unsigned default_jobs();

}  // namespace pmlab::crash
