#include "pmlab/crash/campaign.hpp"

#include <set>

namespace pmlab::crash {
namespace {

// A design by its name, a family by its prefix, or all.
bool selects(const std::string& name, const SubjectInfo& design, bool include_broken) {
  const bool named = design.name == name;
  if (!named && name != "all" && design.name.rfind(name + ".", 0) != 0) return false;
  return named || !design.deliberately_broken || include_broken;
}

Status check_replay(const std::vector<const SubjectInfo*>& designs, const CampaignOptions& options) {
  if (!options.base.replay) return Status::success();
  if (designs.size() != 1)
    return error(Errc::invalid_argument, "--replay names a state of one design: name exactly one");
  if (options.mutate) return error(Errc::invalid_argument, "--replay and --mutate do not go together");
  return Status::success();
}

// One simulation per domain and granularity; the failing states are counted, and a simulation that could
// not run counts as one failure.
Status simulate_design(const SubjectInfo& design, const CampaignOptions& options, const CampaignObserver& observer,
                       CampaignSummary& summary) {
  const std::vector<persist::Domain>& domains = options.domains ? *options.domains : design.domains;
  for (persist::Domain domain : domains) {
    for (Granularity granularity : options.granularities) {
      SimOptions run = options.base;
      run.domain = domain;
      run.granularity = granularity;
      if (observer.simulating) observer.simulating(design, run);
      Result<SimReport> report = simulate(design, run);
      ++summary.runs;
      if (report && run.replay && report->states_checked == 0) {
        return error(Errc::invalid_argument, "--replay " + std::to_string(run.replay->first) + ":" +
                                                 std::to_string(run.replay->second) + " names no crash state of " +
                                                 design.name + " (" + std::to_string(report->crash_points) +
                                                 " crash points)");
      }
      summary.failures += report ? report->failures : 1;
      if (observer.simulated) observer.simulated(design, run, report);
    }
  }
  return Status::success();
}

void mutate_design(const SubjectInfo& design, const CampaignOptions& options, const CampaignObserver& observer,
                   CampaignSummary& summary) {
  MutationOptions mutation{options.base, options.domains ? *options.domains : design.domains, options.granularities};
  if (observer.mutating) observer.mutating(design);
  Result<MutationReport> report = mutate(design, mutation);
  ++summary.runs;
  // A surviving mutant is a finding about the test, not a broken design: the score says it.
  if (!report) ++summary.failures;
  if (observer.mutated) observer.mutated(design, mutation, report);
}

}  // namespace

Result<std::vector<const SubjectInfo*>> choose_designs(const std::vector<std::string>& names, bool include_broken) {
  std::vector<const SubjectInfo*> chosen;
  std::set<std::string> taken;
  for (const std::string& name : names) {
    bool matched = false;
    for (const SubjectInfo& design : SubjectRegistry::instance().all()) {
      if (!selects(name, design, include_broken)) continue;
      matched = true;
      if (taken.insert(design.name).second) chosen.push_back(&design);
    }
    if (!matched)
      return error(Errc::invalid_argument, "no crash-testable design '" + name + "' (see pmlab crash --list)");
  }
  return chosen;
}

Result<CampaignSummary> run_campaign(const std::vector<const SubjectInfo*>& designs, const CampaignOptions& options,
                                     const CampaignObserver& observer) {
  PMLAB_TRY(check_replay(designs, options));
  CampaignSummary summary;
  for (const SubjectInfo* design : designs) {
    if (options.mutate) mutate_design(*design, options, observer, summary);
    else PMLAB_TRY(simulate_design(*design, options, observer, summary));
  }
  return summary;
}

}  // namespace pmlab::crash
