// pmlab crash: simulated power failures for every persistent design (or one), with results.json.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "pmlab/bench/context.hpp"
#include "pmlab/cli/commands.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/crash/simulator.hpp"

namespace pmlab::cli {
namespace {

struct CrashArgs {
  std::vector<std::string> designs;
  std::vector<std::string> domains;
  std::string granularity = "line,word";
  uint64_t budget = 0;
  uint64_t ops = 0;
  uint64_t seed = 1;
  double timeout = 5.0;
  uint64_t recovery_budget = 4;
  uint64_t recovery_every = 8;
  bool quick = false;
  bool include_broken = false;
  std::string out;
  std::string replay;
};

nlohmann::ordered_json metric(double value, const char* unit) {
  return {{"value", value}, {"unit", unit}, {"kind", "measured"}};
}

int run_crash(const CrashArgs& a) {
  using crash::SubjectRegistry;
  std::vector<const crash::SubjectInfo*> chosen;
  for (const auto& name : a.designs) {
    if (name == "all") {
      for (const auto& s : SubjectRegistry::instance().all())
        if (!s.deliberately_broken || a.include_broken) chosen.push_back(&s);
      continue;
    }
    bool matched = false;
    for (const auto& s : SubjectRegistry::instance().all()) {
      // A design, or a prefix naming a family ("selftest", "log").
      if (s.name == name || s.name.rfind(name + ".", 0) == 0) {
        if (s.deliberately_broken && s.name != name && !a.include_broken) continue;
        chosen.push_back(&s);
        matched = true;
      }
    }
    if (!matched) return report_error(error(Errc::invalid_argument, "no crash-testable design '" + name + "' (see pmlab crash --list)"));
  }
  std::vector<crash::Granularity> granularities;
  for (const std::string g : {"line", "word"})
    if (a.granularity.find(g) != std::string::npos) granularities.push_back(g == "line" ? crash::Granularity::line : crash::Granularity::word);
  if (granularities.empty()) return report_error(error(Errc::invalid_argument, "--granularity takes line, word or line,word"));
  std::optional<std::vector<persist::Domain>> forced_domains;
  if (!a.domains.empty()) {
    forced_domains.emplace();
    for (const auto& d : a.domains) {
      auto parsed = persist::parse_domain(d);
      if (!parsed) return report_error(parsed.status());
      if (*parsed == persist::Domain::none)
        return report_error(error(Errc::invalid_argument, "--domain none keeps nothing durable: there is nothing to crash-test"));
      forced_domains->push_back(*parsed);
    }
  }
  crash::SimOptions base;
  base.budget = a.budget ? a.budget : (a.quick ? 400 : 5000);
  base.subject.ops = a.ops ? a.ops : (a.quick ? 16 : 64);
  base.subject.seed = a.seed;
  base.seed = a.seed;
  base.timeout_s = a.timeout;
  base.recovery_budget = a.recovery_budget;
  base.recovery_every = std::max<uint64_t>(1, a.recovery_every);
  if (!a.replay.empty()) {
    size_t colon = a.replay.find(':');
    auto p = parse_int(a.replay.substr(0, colon == std::string::npos ? 0 : colon));
    auto s = parse_int(colon == std::string::npos ? "" : a.replay.substr(colon + 1));
    if (!p || !s || *p < 1 || *s < 0) return report_error(error(Errc::invalid_argument, "--replay takes POINT:STATE, as a failure report prints it"));
    base.replay = std::make_pair(static_cast<uint64_t>(*p), static_cast<uint64_t>(*s));
  }

  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  uint64_t total_failures = 0;
  for (const crash::SubjectInfo* info : chosen) {
    const std::vector<persist::Domain> domains = forced_domains ? *forced_domains : info->domains;
    for (persist::Domain d : domains) {
      for (crash::Granularity g : granularities) {
        crash::SimOptions o = base;
        o.domain = d;
        o.granularity = g;
        const std::string name = "crash." + info->name + "/domain:" + persist::to_string(d) + "/granularity:" + crash::to_string(g);
        nlohmann::ordered_json run;
        run["name"] = name;
        run["suite"] = "crash";
        run["case"] = info->name;
        run["params"] = {{"domain", persist::to_string(d)}, {"granularity", crash::to_string(g)}};
        run["config_hash"] = hex64(fnv1a64(name.data(), name.size(), o.seed * 1000003 + o.budget * 31 + o.subject.ops));
        std::fprintf(stderr, "pmlab crash: %s ... ", name.c_str());
        auto r = crash::simulate(*info, o);
        if (!r) {
          std::fprintf(stderr, "error\n");
          run["status"] = "error";
          run["reason"] = r.status().message();
          run["metrics"] = nlohmann::ordered_json::object();
          ++total_failures;
          runs.push_back(run);
          continue;
        }
        total_failures += r->failures;
        std::fprintf(stderr, "%llu states, %llu failures\n", static_cast<unsigned long long>(r->states_checked),
                     static_cast<unsigned long long>(r->failures));
        run["status"] = r->failures ? "error" : "ok";
        run["reason"] = r->failures ? nlohmann::ordered_json(r->details.empty() ? "failures" : r->details[0].property)
                                    : nlohmann::ordered_json(nullptr);
        run["metrics"] = {{"operations", metric(static_cast<double>(r->operations), "count")},
                          {"crash_points", metric(static_cast<double>(r->crash_points), "count")},
                          {"crash_points_checked", metric(static_cast<double>(r->crash_points_checked), "count")},
                          {"states_enumerated", metric(static_cast<double>(r->states_enumerated), "count")},
                          {"states_explored", metric(static_cast<double>(r->states_checked), "count")},
                          {"duplicate_states", metric(static_cast<double>(r->duplicate_states), "count")},
                          {"recovery_states_explored", metric(static_cast<double>(r->recovery_states_checked), "count")},
                          {"failures", metric(static_cast<double>(r->failures), "count")},
                          {"seconds", metric(r->seconds, "s")},
                          {"states_per_second", metric(r->seconds > 0 ? static_cast<double>(r->states_checked) / r->seconds : 0.0, "states/s")}};
        nlohmann::ordered_json failures = nlohmann::ordered_json::array();
        for (const auto& f : r->details) {
          failures.push_back({{"crash_point", f.crash_point}, {"state", f.state}, {"replay", f.replay()},
                              {"operation", f.at.op_label}, {"ops_completed", f.at.ops_completed},
                              {"op_in_flight", f.at.op_in_flight}, {"fence", f.at.fence_index}, {"at_exit", f.at.at_exit},
                              {"site", f.site}, {"strategy", f.strategy}, {"persisted", f.persisted},
                              {"property", f.property}});
          std::fprintf(stderr, "  FAILED at crash point %s (fence %llu%s, %s%s), site %s\n    persisted: %s\n    broken: %s\n"
                       "    replay: pmlab crash %s --domain %s --granularity %s --seed %llu --ops %llu --budget %llu --replay %s\n",
                       f.replay().c_str(), static_cast<unsigned long long>(f.at.fence_index), f.at.at_exit ? ", at exit" : "",
                       f.at.op_in_flight ? "in flight: " : "after: ", f.at.op_label.c_str(), f.site.c_str(), f.persisted.c_str(),
                       f.property.c_str(), info->name.c_str(), persist::to_string(d), crash::to_string(g),
                       static_cast<unsigned long long>(o.seed), static_cast<unsigned long long>(o.subject.ops),
                       static_cast<unsigned long long>(o.budget), f.replay().c_str());
        }
        run["failures"] = failures;
        runs.push_back(run);
      }
    }
  }

  nlohmann::ordered_json doc;
  doc["schema_version"] = bench::kSchemaVersion;
  doc["pmlab_version"] = bench::kPmlabVersion;
  nlohmann::ordered_json ctx;
  const std::string run_id = bench::run_id_now();
  ctx["run_id"] = run_id;
  ctx["date"] = bench::iso8601_now();
  ctx["command_line"] = command_line();
  ctx["quick"] = a.quick;
  const nlohmann::ordered_json machine = bench::machine_context();
  for (const auto& [k, v] : machine.items()) ctx[k] = v;
  ctx["pool"] = nullptr;  // the simulator runs on private images, not on a pool file
  // The run-wide default (each run names its own domain in params): ADR unless one was forced.
  ctx["durability_domain"] = forced_domains ? persist::to_string(forced_domains->front()) : "adr";
  ctx["flush_instruction"] = persist::to_string(persist::best_line_flush(platform::CpuFeatures::host()));
  ctx["crash"] = {{"budget", base.budget}, {"ops", base.subject.ops}, {"seed", base.seed}, {"timeout_s", base.timeout_s},
                  {"recovery_budget", base.recovery_budget}, {"recovery_every", base.recovery_every},
                  {"model", "ADR: a line is durable once written back and fenced; eADR: every store before a fence. "
                            "Lines written since are each durable or not (any subset; torn mode splits lines into 8-byte words)."}};
  const std::string shaping = ctx["crash"].dump() + ctx["cpu"]["model"].get<std::string>();
  ctx["config_hash"] = hex64(fnv1a64(shaping.data(), shaping.size()));
  ctx["skipped"] = nlohmann::ordered_json::array();
  doc["context"] = ctx;
  doc["runs"] = runs;

  namespace fs = std::filesystem;
  fs::path out = a.out.empty() ? fs::path("results") / ("crash-" + run_id) : fs::path(a.out);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return report_error(error(Errc::io_error, "cannot create " + out.string() + ": " + ec.message()));
  std::ofstream file(out / "results.json");
  file << doc.dump(1) << "\n";
  if (!file) return report_error(error(Errc::io_error, "cannot write " + (out / "results.json").string()));
  std::printf("%zu runs, %llu failures\nresults: %s\n", runs.size(), static_cast<unsigned long long>(total_failures),
              (out / "results.json").c_str());
  return total_failures ? 1 : 0;
}

int list_designs() {
  for (const auto& s : crash::SubjectRegistry::instance().all()) {
    std::string domains;
    for (auto d : s.domains) domains += (domains.empty() ? "" : ",") + std::string(persist::to_string(d));
    std::printf("%-36s %-10s %s%s\n", s.name.c_str(), domains.c_str(), s.deliberately_broken ? "[broken on purpose] " : "",
                s.description.c_str());
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
  cmd->add_option("--domain", a->domains, "adr and/or eadr (default: every domain the design claims)");
  cmd->add_option("--granularity", a->granularity, "line, word (torn 8-byte words) or line,word (default)");
  cmd->add_option("--budget", a->budget, "crash states checked per design, domain and granularity (default 5000; 400 with --quick)");
  cmd->add_option("--ops", a->ops, "operations in each design's stream (default 64; 16 with --quick)");
  cmd->add_option("--seed", a->seed, "seed of the operation stream and of random crash states");
  cmd->add_option("--timeout", a->timeout, "seconds a recovery may take before it counts as hung (default 5)");
  cmd->add_option("--recovery-budget", a->recovery_budget,
                  "crash states taken at each fence of a recovery and recovered again (default 4; 0: recovery is not crash-tested)");
  cmd->add_option("--recovery-every", a->recovery_every,
                  "crash-test the recovery of every Nth state checked (default 8)");
  cmd->add_flag("--quick", a->quick, "small budget and streams");
  cmd->add_flag("--include-broken", a->include_broken, "with all or a family: also the deliberately broken variants");
  cmd->add_option("--out", a->out, "run directory for results.json (default results/crash-<run-id>)");
  cmd->add_option("--replay", a->replay, "check only POINT:STATE, as printed by a failure");
  cmd->callback([&exit_code, a, list] {
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
