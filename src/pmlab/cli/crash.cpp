// pmlab crash: simulated power failures for every persistent design (or one), mutation testing of their
// persistence, and the merge of sharded runs; results.json either way.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "pmlab/bench/context.hpp"
#include "pmlab/bench/results.hpp"
#include "pmlab/cli/commands.hpp"
#include "pmlab/cli/crash_common.hpp"
#include "pmlab/cli/options.hpp"
#include "pmlab/common/files.hpp"
#include "pmlab/common/hash.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/crash/campaign.hpp"
#include "pmlab/crash/loaded_subjects.hpp"
#include "pmlab/crash/shards.hpp"

namespace pmlab::cli {
namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

struct CrashArgs {
  std::vector<std::string> load;  // shared objects with subjects of their own (pmlab/crash.hpp)
  std::vector<std::string> designs;
  std::vector<std::string> domains;
  std::string granularity = "line,word,byte";
  uint64_t budget = 0, ops = 0, seed = 1, recovery_budget = 4, recovery_every = 0, jobs = 0;  // 0: the default
  double timeout = 5.0;
  std::string shard;
  bool quick = false;
  bool include_broken = false;
  bool mutate = false;
  std::string out;
  std::string replay;
};

std::string sim_run_name(const std::string& design, persist::Domain d, crash::Granularity g) {
  return "crash." + design + "/domain:" + persist::to_string(d) + "/granularity:" + crash::to_string(g);
}

record::RunRecord run_record(const crash::SimReport& r, const std::string& design, uint64_t context_hash) {
  record::RunRecord run = crash_run_record(
      sim_run_name(design, r.domain, r.granularity), design, r, [](const auto& f) { return f.property; }, context_hash);
  const double coverage = r.state_space > 0 ? static_cast<double>(r.states_checked) / r.state_space : 1.0;
  const auto count = [](uint64_t v) { return static_cast<double>(v); };
  measured(run, "operations", count(r.operations), "count");
  measure_states(run, r);
  measured(run, "recovery_states_checked", count(r.recovery_states_checked), "count");
  measure_outcome(run, r);
  measured(run, "coverage", std::min(1.0, coverage), "ratio");
  measured(run, "exhaustive_points", count(r.exhaustive_points), "count");
  measured(run, "deviation_depth", count(r.deviation_depth), "count");
  measured(run, "max_pending_lines", count(r.max_pending_lines), "count");
  measured(run, "dropped_values", count(r.dropped_values), "count");
  json failures = json::array();
  for (const auto& f : r.details)
    failures.push_back(with_alike({{"crash_point", f.crash_point},
                                   {"state", f.state},
                                   {"replay", f.replay()},
                                   {"operation", f.at.op_label},
                                   {"ops_completed", f.at.ops_completed},
                                   {"op_in_flight", f.at.op_in_flight},
                                   {"fence", f.at.fence_index},
                                   {"at_exit", f.at.at_exit},
                                   {"site", f.site},
                                   {"strategy", f.strategy},
                                   {"persisted", f.persisted},
                                   {"property", f.property}},
                                  f.alike));
  run.details["failures"] = failures;
  return run;
}

// {"below_2_32": 40}: the calls the mutant changed that made no difference, by reason.
json inert_calls(const crash::MutantResult& r) {
  json out = json::object();
  for (size_t i = 0; i < crash::kInertKinds; ++i)
    if (r.inert[i] > 0) out[crash::to_string(static_cast<crash::Inert>(i))] = r.inert[i];
  return out;
}

record::RunRecord mutation_record(const crash::MutationReport& m, const std::string& domains,
                                  const std::string& granularities, uint64_t context_hash) {
  record::RunRecord run = crash_record(
      "crash." + m.subject + "/test:mutation/domains:" + domains + "/granularities:" + granularities, m.subject,
      {{"test", "mutation"}, {"domains", domains}, {"granularities", granularities}}, context_hash);
  const auto count = [](uint64_t v) { return static_cast<double>(v); };
  measured(run, "sites", count(m.sites), "count");
  measured(run, "mutants", count(m.mutants.size()), "count");
  measured(run, "killed", count(m.killed), "count");
  measured(run, "survivors", count(m.survivors()), "count");
  measured(run, "equivalent", count(m.equivalent), "count");
  measured(run, "mutation_score", m.score(), "ratio");
  measured(run, "strict_mutation_score", m.strict_score(), "ratio");
  measured(run, "equivalent_redundant_calls", count(m.redundant_calls()), "count");
  measured(run, "states_checked", count(m.states_checked), "count");
  measured(run, "seconds", m.seconds, "s");
  json mutants = json::array();
  for (const auto& r : m.mutants) {
    mutants.push_back({{"site", crash::site_position(r.mutant.site.file, r.mutant.site.line, r.mutant.site.column)},
                       {"function", r.mutant.function},
                       {"call", persist::to_string(r.mutant.site.call)},
                       {"mutation", persist::to_string(r.mutant.mutation)},
                       {"killed", r.killed},
                       {"equivalent", r.equivalent},
                       {"equivalent_because", r.equivalent ? json(crash::to_string(r.main_reason())) : json(nullptr)},
                       {"inert_calls", inert_calls(r)},
                       {"killed_in", r.killed ? json(r.killed_in) : json(nullptr)},
                       {"evidence", r.killed ? json(r.evidence) : json(nullptr)},
                       {"survived_in", r.tried}});
  }
  run.details["mutants"] = mutants;
  return run;
}

template <class T>
std::string names_of(const std::vector<T>& items) {
  std::string out;
  for (const T& item : items) {
    if (!out.empty()) out += ",";
    if constexpr (std::is_same_v<T, persist::Domain>) out += persist::to_string(item);
    else out += crash::to_string(item);
  }
  return out;
}

// `loads`: the --load options a replay needs (empty, or ending in a space).
void print_failures(const crash::SimReport& r, const crash::SimOptions& o, const std::string& design,
                    const std::string& loads) {
  for (const auto& f : r.details) {
    std::fprintf(stderr,
                 "  FAILED at crash point %s (fence %llu%s, %s%s), site %s\n    persisted: %s\n    broken: %s\n",
                 f.replay().c_str(), static_cast<unsigned long long>(f.at.fence_index), f.at.at_exit ? ", at exit" : "",
                 f.at.op_in_flight ? "in flight: " : "after: ", f.at.op_label.c_str(), f.site.c_str(),
                 f.persisted.c_str(), f.property.c_str());
    print_alike(f.alike);
    std::fprintf(stderr,
                 "    replay: pmlab crash %s%s --domain %s --granularity %s --seed %llu --ops %llu --budget %llu "
                 "--replay %s\n",
                 loads.c_str(), shell_word(design).c_str(), persist::to_string(r.domain),
                 crash::to_string(r.granularity), static_cast<unsigned long long>(o.seed),
                 static_cast<unsigned long long>(o.subject.ops), static_cast<unsigned long long>(o.budget),
                 f.replay().c_str());
  }
}

// The campaign's options from the command line: every value was checked as typed (options.hpp); what is
// decided here are the defaults.
Result<crash::CampaignOptions> campaign_options(const CrashArgs& a) {
  crash::CampaignOptions c;
  auto granularities = parse_granularities(a.granularity);
  if (!granularities) return granularities.status();
  c.granularities = *granularities;
  if (!a.domains.empty()) {
    auto parsed = parse_domains(a.domains);
    if (!parsed) return parsed.status();
    c.domains = *parsed;
  }
  c.mutate = a.mutate;
  crash::SimOptions& base = c.base;
  // A mutant is one particular bug that may need one particular state: mutation testing keeps the full
  // budget per crash point even with --quick (which then shortens the streams only).
  base.budget = a.budget ? a.budget : (a.quick && !a.mutate ? 400 : 5000);
  base.subject.ops = a.ops ? a.ops : (a.quick ? 16 : 64);
  base.subject.seed = a.seed;
  base.seed = a.seed;
  base.timeout_s = a.timeout;
  base.recovery_budget = a.recovery_budget;
  // A mutant inside recovery shows only where recovery is crashed: mutation testing crashes every one
  // (a killed mutant stops at its first failure, so this costs little).
  base.recovery_every = a.recovery_every ? a.recovery_every : (a.mutate ? 1 : 4);
  base.jobs = static_cast<unsigned>(a.jobs);
  PMLAB_TRY(read_shard_and_replay(a.shard, a.replay, base));
  return c;
}

json campaign_settings(const crash::CampaignOptions& c) {
  const crash::SimOptions& base = c.base;
  return {{"budget", base.budget},
          {"ops", base.subject.ops},
          {"seed", base.seed},
          {"timeout_s", base.timeout_s},
          {"recovery_budget", base.recovery_budget},
          {"recovery_every", base.recovery_every},
          {"shard", {{"index", base.shard + 1}, {"of", base.shards}}},
          {"mutation", c.mutate},
          {"model",
           "ADR: a line is durable once written back and fenced; eADR: every store before a fence. A line "
           "changed since may persist with any content it held at a persistence call since; line, word "
           "and byte granularity split it into pieces that persist independently (docs/crash-simulator.md)."}};
}

// The mutants of every design in a campaign, for its last line.
struct MutationTally {
  uint64_t designs = 0, mutants = 0, killed = 0, equivalent = 0, redundant_calls = 0;
};

// Prints each run as it goes and records it in `results`.
crash::CampaignObserver printing_observer(bench::ResultsDocument& results, uint64_t hash, const std::string& loads,
                                          MutationTally& tally) {
  crash::CampaignObserver o;
  o.simulating = [](const crash::SubjectInfo& design, const crash::SimOptions& run) {
    std::fprintf(stderr, "pmlab crash: %s ... ", sim_run_name(design.name, run.domain, run.granularity).c_str());
  };
  o.simulated = [&results, hash, loads](const crash::SubjectInfo& design, const crash::SimOptions& run,
                                        const Result<crash::SimReport>& r) {
    if (!r) {
      std::fprintf(stderr, "error: %s\n", r.status().message().c_str());
      record::RunRecord failed = crash_record(
          sim_run_name(design.name, run.domain, run.granularity), design.name,
          {{"domain", persist::to_string(run.domain)}, {"granularity", crash::to_string(run.granularity)}}, hash);
      failed.status = record::RunStatus::error;
      failed.reason = r.status().message();
      failed.details["failures"] = json::array();
      results.add(failed);
      return;
    }
    std::fprintf(stderr, "%llu states, %llu failures%s\n", static_cast<unsigned long long>(r->states_checked),
                 static_cast<unsigned long long>(r->failures), failures_of_kinds(r->failure_kinds).c_str());
    print_failures(*r, run, design.name, loads);
    results.add(run_record(*r, design.name, hash));
  };
  o.mutating = [](const crash::SubjectInfo& design) {
    std::fprintf(stderr, "pmlab crash: %s, mutation testing ... ", design.name.c_str());
  };
  o.mutated = [&results, hash, &tally](const crash::SubjectInfo& design, const crash::MutationOptions& mo,
                                       const Result<crash::MutationReport>& m) {
    const std::string domains = names_of(mo.domains), granularities = names_of(mo.granularities);
    if (!m) {
      std::fprintf(stderr, "error: %s\n", m.status().message().c_str());
      crash::MutationReport none;
      none.subject = design.name;
      record::RunRecord run = mutation_record(none, domains, granularities, hash);
      run.status = record::RunStatus::error;
      run.reason = m.status().message();
      run.metrics.clear();
      results.add(run);
      return;
    }
    std::fprintf(stderr, "%llu of %llu mutants killed, %llu equivalent (%llu sites); strict %llu of %llu\n",
                 static_cast<unsigned long long>(m->killed), static_cast<unsigned long long>(m->counted()),
                 static_cast<unsigned long long>(m->equivalent), static_cast<unsigned long long>(m->sites),
                 static_cast<unsigned long long>(m->killed), static_cast<unsigned long long>(m->mutants.size()));
    for (const auto& r : m->mutants) {
      if (!r.killed && !r.equivalent) std::fprintf(stderr, "  survived: %s\n", r.mutant.describe().c_str());
      if (r.equivalent)
        std::fprintf(stderr, "  %s: %s (%s)\n", r.redundant_call() ? "redundant call" : "equivalent on this stream",
                     r.mutant.describe().c_str(), crash::describe(r.main_reason()));
    }
    ++tally.designs;
    tally.mutants += m->mutants.size();
    tally.killed += m->killed;
    tally.equivalent += m->equivalent;
    tally.redundant_calls += m->redundant_calls();
    results.add(mutation_record(*m, domains, granularities, hash));
  };
  return o;
}

void print_tally(const MutationTally& t) {
  const auto pct = [](uint64_t n, uint64_t of) {
    return of == 0 ? 100.0 : 100.0 * static_cast<double>(n) / static_cast<double>(of);
  };
  const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf(
      "mutation: %llu of %llu mutants killed (strict score %.1f%%); %.1f%% of the %llu not equivalent\n"
      "equivalent: %llu, of which %llu redundant calls of the designs and %llu on these streams\n",
      u(t.killed), u(t.mutants), pct(t.killed, t.mutants), pct(t.killed, t.mutants - t.equivalent),
      u(t.mutants - t.equivalent), u(t.equivalent), u(t.redundant_calls), u(t.equivalent - t.redundant_calls));
}

int run_crash(const CrashArgs& a) {
  auto designs = crash::choose_designs(a.designs, a.include_broken);
  if (!designs) return report_error(designs.status());
  auto options = campaign_options(a);
  if (!options) return report_error(options.status());
  uint64_t hash = 0;
  const std::string domain = options->domains ? persist::to_string(options->domains->front()) : "adr";
  bench::ResultsDocument results(crash_context(campaign_settings(*options), domain, a.quick, &hash));
  std::string loads;
  for (const std::string& file : a.load) loads += "--load " + shell_word(fs::absolute(file).string()) + " ";
  MutationTally tally;
  auto summary = crash::run_campaign(*designs, *options, printing_observer(results, hash, loads, tally));
  if (!summary) {
    std::fprintf(stderr, "\n");
    return report_error(summary.status());
  }
  auto written = results.write(out_dir(a.out, "crash-" + results.context()["run_id"].get<std::string>()));
  if (!written) return report_error(written.status());
  if (tally.designs > 1) print_tally(tally);
  std::printf("%zu runs, %llu failures\nresults: %s\n", results.size(),
              static_cast<unsigned long long>(summary->failures), written->c_str());
  return summary->failures ? 1 : 0;
}

// pmlab crash merge: the shards of one sharded run, added up into the run it stands for.
int merge_shards(const std::vector<std::string>& dirs, const std::string& out) {
  std::vector<crash::ShardDocument> shards;
  for (const auto& dir : dirs) {
    const fs::path file = fs::path(dir) / "results.json";
    auto text = read_regular_file(file.string(), "results file");
    if (!text) return report_error(text.status());
    json doc = json::parse(*text, nullptr, false);
    if (doc.is_discarded())
      return report_error(error(Errc::corrupted, file.string() + " is not the results of a sharded pmlab crash run"));
    shards.push_back({dir, std::move(doc)});
  }
  auto merged = crash::merge_shards(shards);
  if (!merged) return report_error(merged.status());
  bench::ResultsDocument document(merged->context);
  document.context()["command_line"] = command_line();
  for (json& run : merged->runs) document.add_json(std::move(run));
  auto written = document.write(out_dir(out, "crash-merged-" + bench::run_id_now()));
  if (!written) return report_error(written.status());
  std::printf("%zu shards, %zu runs, %llu failures\nresults: %s\n", shards.size(), document.size(),
              static_cast<unsigned long long>(merged->failures), written->c_str());
  return merged->failures ? 1 : 0;
}

int list_designs() {
  for (const auto& s : crash::SubjectRegistry::instance().all()) {
    std::string domains;
    for (auto d : s.domains) domains += (domains.empty() ? "" : ",") + std::string(persist::to_string(d));
    std::printf("%-40s %-10s %s%s\n", s.name.c_str(), domains.c_str(),
                s.deliberately_broken ? "[broken on purpose] " : "", s.description.c_str());
  }
  return 0;
}

}  // namespace

void add_crash(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("crash", "Crash-test persistent designs with simulated power failures");
  auto a = std::make_shared<CrashArgs>();
  auto list = std::make_shared<bool>(false);
  cmd->add_option("design", a->designs, "designs (e.g. selftest.commit-record), families (selftest) or all");
  cmd->add_flag("--list", *list, "list crash-testable designs and the domains they claim");
  cmd->add_option("--load", a->load,
                  "a shared object whose designs (pmlab/crash.hpp, PMLAB_CRASH_SUBJECT) join pmlab's own; repeatable")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(non_empty_value());
  cmd->add_option("--domain", a->domains, "adr and/or eadr (default: every domain the design claims)")
      ->check(non_empty_value());
  cmd->add_option(
         "--granularity", a->granularity,
         "line, word (torn 8-byte words), byte (plain stores torn byte by byte), comma-separated (default all three)")
      ->check(non_empty_value());
  cmd->add_option(
         "--budget", a->budget,
         "crash states checked per design, domain and granularity (default 5000; 400 with --quick, unless --mutate)")
      ->check(count_value(1, 1ULL << 40));
  cmd->add_option("--ops", a->ops, "operations in each design's stream (default 64; 16 with --quick)")
      ->check(count_value(1, 1u << 20));
  cmd->add_option("--seed", a->seed, "seed of the operation stream and of random crash states (default 1)")
      ->check(count_value(0));
  cmd->add_option("--timeout", a->timeout, "seconds a recovery may take before it counts as hung (default 5)")
      ->check(real_value(0.001, 86400));
  cmd->add_option(
         "--recovery-budget", a->recovery_budget,
         "crash states taken at each fence and at the end of a recovery, and recovered again (default 4; 0: off)")
      ->check(count_value(0, 1u << 20));
  cmd->add_option(
         "--recovery-every", a->recovery_every,
         "crash-test the recovery of one state in N, picked by a seeded hash of the state (default 4; 1 with --mutate)")
      ->check(count_value(1));
  cmd->add_option("--jobs", a->jobs, "checker processes (default: one per CPU this process may use)")
      ->check(count_value(0, 16));
  cmd->add_option("--shard", a->shard,
                  "check only shard K of N (K/N) of the crash states; `pmlab crash merge` adds them up")
      ->check(non_empty_value());
  cmd->add_flag("--mutate", a->mutate,
                "mutation testing: remove or weaken each persistence call site in turn; report the score");
  cmd->add_flag("--quick", a->quick, "small budget and streams");
  cmd->add_flag("--include-broken", a->include_broken, "with all or a family: also the deliberately broken variants");
  cmd->add_option("--out", a->out, "run directory for results.json (default results/crash-<run-id>)")
      ->check(non_empty_value());
  cmd->add_option("--replay", a->replay, "check only POINT:STATE of one design, as printed by a failure")
      ->check(non_empty_value());

  auto* merge = cmd->add_subcommand("merge", "Add up the results of a sharded run (pmlab crash … --shard K/N)");
  auto merge_dirs = std::make_shared<std::vector<std::string>>();
  auto merge_out = std::make_shared<std::string>();
  merge->add_option("dirs", *merge_dirs, "the shards' run directories")->required();
  merge->add_option("--out", *merge_out, "run directory for the merged results.json")->check(non_empty_value());
  merge->callback([&exit_code, merge_dirs, merge_out] { exit_code = merge_shards(*merge_dirs, *merge_out); });

  add_crash_exec(*cmd, exit_code);

  cmd->callback([&exit_code, a, list, cmd] {
    if (cmd->got_subcommand("merge") || cmd->got_subcommand("exec")) return;
    for (const std::string& file : a->load) {
      auto loaded = crash::load_subjects(file);
      if (!loaded) {
        exit_code = report_error(loaded.status());
        return;
      }
    }
    if (*list) {
      exit_code = list_designs();
      return;
    }
    if (a->designs.empty()) {
      exit_code = report_error(error(Errc::invalid_argument, "name a design, a family or all (pmlab crash --list)"));
      return;
    }
    exit_code = run_crash(*a);
  });
}

}  // namespace pmlab::cli
