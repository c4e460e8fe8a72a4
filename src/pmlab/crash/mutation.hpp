// Mutation testing of a design's persistence: does the crash simulator notice when one call site is
// removed or weakened?
//
// A discovery run collects every persistence call site the design's run and recoveries reach, per domain.
// Each site then yields its mutants (call_sites.hpp): a flush or fence dropped, non-temporal stores made
// cached stores that are never written back, an 8-byte atomic store split in two. Each mutant runs under
// the simulator until a failure kills it, in the domains and granularities where it can matter (a
// dropped flush or non-temporal store only under ADR, a split store only where words can tear). A
// survivor is a blind spot of the simulator, or a call the design does not need: a performance finding.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/simulator.hpp"

namespace pmlab::crash {

struct MutantResult {
  Mutant mutant;
  bool killed = false;
  std::string killed_in;           // "adr/word": the first run that failed
  std::string evidence;            // what that run's first failure said
  std::vector<std::string> tried;  // the domain/granularity runs it survived
  // It never changed what a crash could leave (every split store had a half that did not change, every
  // dropped call had nothing pending): equivalent to the design on this stream, so no checker could kill
  // it. Not counted in the score; counted, as not killed, in the strict score.
  bool equivalent = false;
  // Why the calls it changed made no difference, by reason (call_sites.hpp), over every run it survived.
  std::array<uint64_t, kInertKinds> inert{};
  // The reason most of its changed calls had; for an equivalent mutant, why it is one.
  Inert main_reason() const noexcept;
  // Equivalent because the design's call had nothing to do: a performance finding, not a blind spot.
  bool redundant_call() const noexcept { return equivalent && is_redundant_call(main_reason()); }
};

struct MutationReport {
  std::string subject;
  uint64_t sites = 0;  // persistence call sites reached
  std::vector<MutantResult> mutants;
  uint64_t killed = 0;
  uint64_t equivalent = 0;
  uint64_t states_checked = 0;
  double seconds = 0.0;
  uint64_t counted() const { return mutants.size() - equivalent; }
  uint64_t survivors() const { return counted() - killed; }
  double score() const { return counted() == 0 ? 1.0 : static_cast<double>(killed) / static_cast<double>(counted()); }
  // Killed of all mutants: an equivalent mutant counts as one not killed, so a stream too tame to tear a
  // word, or a call with nothing to do, shows here.
  // Equivalent mutants that are redundant calls of the design (performance findings).
  uint64_t redundant_calls() const;
  double strict_score() const {
    return mutants.empty() ? 1.0 : static_cast<double>(killed) / static_cast<double>(mutants.size());
  }
};

struct MutationOptions {
  SimOptions base;  // budget, ops, seed, recovery crash-testing; domain and granularity are set per run
  std::vector<persist::Domain> domains;
  std::vector<Granularity> granularities;
  // A concurrent design's mutant is tried under this many interleavings (seeds base.seed, base.seed+1,
  // ...) before it counts as a survivor: one schedule reaches a given race only sometimes.
  unsigned schedules = 4;
  // Then under targeted schedules: the thread that makes the mutated call parked at each of these depths
  // (its handover points after the call) while the others run (SimOptions::park_depth).
  std::vector<unsigned> park_depths = {1, 2, 3, 5, 8};
  // And the thread that makes it run alone for each of these many handover points after it, while the
  // others stay where the call found them (SimOptions::alone_hold).
  std::vector<unsigned> alone_holds = {48};
};

Result<MutationReport> mutate(const SubjectInfo& subject, const MutationOptions& options);

}  // namespace pmlab::crash
