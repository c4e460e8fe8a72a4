#include "pmlab/crash/mutation.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "pmlab/platform/clock.hpp"

namespace pmlab::crash {
namespace {

// Where a mutant can be noticed at all: under eADR nothing is written back, so a dropped flush or a
// non-temporal store made a cached one changes nothing durable. (A split store shows at every granularity:
// its half-written word is one of the values the line held.)
bool can_matter(persist::Call call, persist::Domain domain) {
  if (call == persist::Call::flush || call == persist::Call::nt_store) return domain == persist::Domain::adr;
  return true;
}

std::string run_name(persist::Domain d, Granularity g) {
  return std::string(persist::to_string(d)) + "/" + to_string(g);
}

}  // namespace

Inert MutantResult::main_reason() const noexcept {
  size_t most = 0;
  for (size_t i = 1; i < kInertKinds; ++i)
    if (inert[i] > inert[most]) most = i;
  return static_cast<Inert>(most);
}

uint64_t MutationReport::redundant_calls() const {
  return static_cast<uint64_t>(
      std::count_if(mutants.begin(), mutants.end(), [](const MutantResult& r) { return r.redundant_call(); }));
}

namespace {

// The sites each domain reaches, found with the unmutated design (which must pass), and how many
// schedules each run takes: more than one once the design turns out to run threads.
struct Discovery {
  std::map<SiteKey, std::string> functions;
  std::map<SiteKey, std::set<persist::Domain>> reached_in;
  unsigned schedules = 1;
};

Result<Discovery> discover(const SubjectInfo& info, const MutationOptions& options, MutationReport& report) {
  Discovery found;
  for (persist::Domain d : options.domains) {
    for (unsigned schedule = 0; schedule < found.schedules; ++schedule) {
      SimOptions o = options.base;
      o.domain = d;
      o.granularity = options.granularities.front();
      o.seed = options.base.seed + schedule;
      o.record_sites = true;
      o.mutant.reset();
      auto r = simulate(info, o);
      if (!r) return r.status();
      report.states_checked += r->states_checked;
      if (r->failures > 0)
        return error(Errc::failed, info.name + " fails its crash test unmutated (" + run_name(d, o.granularity) +
                                       (schedule ? ", seed " + std::to_string(o.seed) : std::string()) + ": " +
                                       (r->details.empty() ? "failures" : r->details[0].property) +
                                       "): mutation testing needs a passing design");
      for (const auto& [key, function] : r->sites) {
        found.functions.emplace(key, function);
        found.reached_in[key].insert(d);
      }
      if (r->concurrent) found.schedules = std::max(1u, options.schedules);
    }
  }
  return found;
}

// Runs the mutant in domain d at granularity g until one run kills it: random schedules, then (concurrent
// designs, at the first granularity: a race does not need a torn word to show) targeted ones at each
// parking depth, then with the call's thread running alone.
Status try_to_kill(const SubjectInfo& info, const MutationOptions& options, unsigned schedules, persist::Domain d,
                   Granularity g, MutantResult& result, MutationEffects& effects, MutationReport& report) {
  const auto parked = static_cast<unsigned>(options.park_depths.size());
  const unsigned targeted = schedules > 1 && g == options.granularities.front()
                                ? parked + static_cast<unsigned>(options.alone_holds.size())
                                : 0;
  for (unsigned schedule = 0; schedule < schedules + targeted && !result.killed; ++schedule) {
    SimOptions o = options.base;
    o.domain = d;
    o.granularity = g;
    o.seed = options.base.seed + (schedule < schedules ? schedule : 0);
    const unsigned k = schedule - schedules;  // the targeted schedule's index
    o.park_depth = schedule >= schedules && k < parked ? options.park_depths[k] : 0;
    o.alone_hold = schedule >= schedules && k >= parked ? options.alone_holds[k - parked] : 0;
    o.mutant = result.mutant;
    o.stop_at_first_failure = true;
    o.max_failure_details = 1;
    auto r = simulate(info, o);
    if (!r) return error(r.status().code(), result.mutant.describe() + ": " + r.status().message());
    report.states_checked += r->states_checked;
    effects += r->mutation_effects;
    if (r->failures > 0) {
      result.killed = true;
      result.killed_in = run_name(d, g) + (o.park_depth   ? " (parked at depth " + std::to_string(o.park_depth) + ")"
                                           : o.alone_hold ? " (alone for " + std::to_string(o.alone_hold) + ")"
                                           : schedule     ? " (seed " + std::to_string(o.seed) + ")"
                                                          : "");
      result.evidence = r->details.empty() ? "" : r->details[0].property;
    }
  }
  if (!result.killed) result.tried.push_back(run_name(d, g));
  return Status::success();
}

// A mutant no run could notice (e.g. a split store with only line granularity asked for), or one that only
// ever changed how a word declared volatile was written (no crash state holds it), is no mutant: it says
// nothing about the design or the simulator.
bool is_a_mutant(const MutantResult& result, const MutationEffects& effects) {
  const uint64_t volatile_only = effects.inert[static_cast<size_t>(Inert::volatile_word)];
  const bool only_volatile =
      volatile_only > 0 && std::accumulate(effects.inert.begin(), effects.inert.end(), uint64_t{0}) == volatile_only;
  return result.killed || !(result.tried.empty() || (effects.effective == 0 && only_volatile));
}

}  // namespace

Result<MutationReport> mutate(const SubjectInfo& info, const MutationOptions& options) {
  if (options.domains.empty() || options.granularities.empty())
    return error(Errc::invalid_argument, "mutation testing needs a domain and a granularity");
  const uint64_t t0 = platform::Clock::monotonic_ns();
  MutationReport report;
  report.subject = info.name;
  auto found = discover(info, options, report);
  if (!found) return found.status();
  report.sites = found->functions.size();
  for (const auto& [key, function] : found->functions) {
    for (persist::Mutation m : mutations_of(key.call)) {
      MutantResult result;
      result.mutant = Mutant{key, m, function};
      MutationEffects effects;
      for (persist::Domain d : options.domains) {
        if (!found->reached_in[key].contains(d)) continue;
        for (Granularity g : options.granularities) {
          if (result.killed || !can_matter(key.call, d)) continue;
          if (Status s = try_to_kill(info, options, found->schedules, d, g, result, effects, report); !s) return s;
        }
      }
      if (!is_a_mutant(result, effects)) continue;
      result.equivalent = !result.killed && effects.effective == 0;
      result.inert = effects.inert;
      if (result.killed) ++report.killed;
      if (result.equivalent) ++report.equivalent;
      report.mutants.push_back(std::move(result));
    }
  }
  report.seconds = static_cast<double>(platform::Clock::monotonic_ns() - t0) / 1e9;
  return report;
}

}  // namespace pmlab::crash
