// A crash-test campaign: which designs to test, then every design in each of its domains and
// granularities (or, with mutation testing, each of its persistence call sites removed or weakened in
// turn). `pmlab crash` parses its options into CampaignOptions, calls run_campaign, and prints and
// records what the observer hears; a test or a user's own driver calls the same functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/mutation.hpp"
#include "pmlab/crash/simulator.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash {

// The registered designs that `names` select, each once, in the registry's order within a name: a
// design by its name, a family by the part before a dot ("selftest", "log"), or "all". A deliberately
// broken variant is chosen only by its own name, or with include_broken. A name that selects nothing is
// an error naming it.
Result<std::vector<const SubjectInfo*>> choose_designs(const std::vector<std::string>& names, bool include_broken);

struct CampaignOptions {
  SimOptions base;  // budget, stream, seeds, recovery crash-testing, shard, replay; domain and granularity per run
  std::optional<std::vector<persist::Domain>> domains;  // default: the domains each design claims
  std::vector<Granularity> granularities{Granularity::line, Granularity::word, Granularity::byte};
  bool mutate = false;  // mutation testing instead of one simulation per domain and granularity
};

// What a campaign reports as it goes. Every callback is optional.
struct CampaignObserver {
  // A simulation is about to run: the design, and the options with its domain and granularity set.
  std::function<void(const SubjectInfo&, const SimOptions&)> simulating;
  // Its outcome: a report, or why the simulation could not run (the design's own run failed, ...).
  std::function<void(const SubjectInfo&, const SimOptions&, const Result<SimReport>&)> simulated;
  std::function<void(const SubjectInfo&)> mutating;
  std::function<void(const SubjectInfo&, const MutationOptions&, const Result<MutationReport>&)> mutated;
};

struct CampaignSummary {
  uint64_t runs = 0;      // simulations and mutation runs
  uint64_t failures = 0;  // crash states that broke a contract, and runs that could not run
};

// Runs the campaign over `designs` (from choose_designs). A --replay names one state of one design: with
// more designs, with mutation testing, or when the state does not exist, the campaign is an error (a
// replay that checks nothing must not pass as a clean one).
Result<CampaignSummary> run_campaign(const std::vector<const SubjectInfo*>& designs, const CampaignOptions& options,
                                     const CampaignObserver& observer);

}  // namespace pmlab::crash
