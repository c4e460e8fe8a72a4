#include "pmlab/bench/run_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "pmlab/bench/placement.hpp"
#include "pmlab/bench/repetitions.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/platform/memory_tiers.hpp"
#include "pmlab/platform/topology.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab::bench {
namespace {

constexpr uint64_t kMinBenchPool = 64ULL << 20;

// Replaces domain=auto / flush=auto with the run's default so names and records say what ran.
void resolve_auto(Params& p, const persist::Config& defaults) {
  if (p.has("domain") && p.text("domain") == "auto") p.set("domain", persist::to_string(defaults.domain));
  if (p.has("flush") && p.text("flush") == "auto") p.set("flush", persist::to_string(defaults.flush));
}

const ParamSpec* param_named(const CaseDef& c, const std::string& name) {
  auto it = std::find_if(c.params.begin(), c.params.end(), [&](const ParamSpec& p) { return p.name == name; });
  return it == c.params.end() ? nullptr : &*it;
}

// The --set values `c` takes, each refused one noted in `left_out`; nothing when a parameter of `c` is
// left with no value (the case is then left out whole).
std::optional<Overrides> overrides_taken(const CaseDef& c, const Overrides& overrides, LeftOut& left_out) {
  Overrides taken;
  for (const auto& [name, values] : overrides) {
    const ParamSpec* spec = param_named(c, name);
    if (spec == nullptr) continue;
    std::vector<std::string>& kept = taken[name];
    std::string refusals;
    for (const std::string& value : values) {
      if (Status s = spec->check_value(value); s) kept.push_back(value);
      else refusals += (refusals.empty() ? "" : "; ") + s.message();
    }
    if (kept.empty()) {
      left_out.refused.emplace_back(c.full_name(), "not run: it takes no value of --set " + name + " (" + refusals +
                                                       "; " + name + ": " + spec->doc + ")");
      return std::nullopt;
    }
    if (!refusals.empty()) left_out.refused.emplace_back(c.full_name(), "run without some values: " + refusals);
  }
  return taken;
}

// A --set value that no selected case takes, refused in the words of the case whose parameter takes the
// most choices (a typo of medium=pool is told dram|pool|numa, not a pool-only case's one choice).
Status check_values_taken(const Overrides& overrides, const std::vector<const CaseDef*>& selected) {
  for (const auto& [name, values] : overrides)
    for (const std::string& value : values) {
      Status refusal;
      size_t refusal_choices = 0;
      bool taken = false;
      for (const CaseDef* c : selected)
        if (const ParamSpec* spec = param_named(*c, name); spec != nullptr && !taken) {
          Status s = spec->check_value(value);
          taken = s.ok();
          if (!taken && (refusal.ok() || spec->choices.size() > refusal_choices)) {
            refusal = error(s.code(), c->full_name() + ": " + s.message());
            refusal_choices = spec->choices.size();
          }
        }
      if (!taken && !refusal.ok()) return refusal;
    }
  return Status::success();
}

}  // namespace

bool uses_pool(const PlannedRun& r) { return r.params.has("medium") && r.params.text("medium") == "pool"; }

uint64_t region_bytes(const PlannedRun& r) { return r.def->region_bytes ? r.def->region_bytes(r.params) : 0; }

uint64_t pool_bytes_for(const std::vector<PlannedRun>& plan, bool quick, std::optional<int> repetitions) {
  uint64_t need = kMinBenchPool;
  for (const auto& r : plan) {
    if (!uses_pool(r)) continue;
    const int placements = std::min(3, repetitions_for(*r.def, r.params, quick, repetitions));
    need = std::max(need, region_bytes(r) + pool::kHeaderSize + static_cast<uint64_t>(placements - 1) * kPlacementStep);
  }
  return (need + (2ULL << 20) - 1) & ~((2ULL << 20) - 1);
}

Result<std::vector<PlannedRun>> plan_runs(const std::vector<const CaseDef*>& selected, const Overrides& overrides,
                                          bool quick, LeftOut& left_out) {
  std::vector<PlannedRun> plan;
  for (const CaseDef* c : selected) {
    std::optional<Overrides> taken = overrides_taken(*c, overrides, left_out);
    if (!taken) continue;
    auto points = expand(c->params, *taken, quick);
    if (!points) return error(Errc::invalid_argument, c->full_name() + ": " + points.status().message());
    for (auto& p : *points) {
      if (const std::optional<std::string> why = c->redundant ? c->redundant(p) : std::nullopt) {
        if (left_out.redundant++ == 0) left_out.first_redundant = c->full_name() + ": " + *why;
        continue;
      }
      plan.push_back({c, std::move(p), {}});
    }
  }
  return plan;
}

Result<std::optional<RunPattern>> check_options(const RunOptions& options,
                                                const std::vector<const CaseDef*>& selected) {
  for (const auto& [name, values] : options.overrides) {
    bool known = false;
    for (const CaseDef* c : selected)
      for (const auto& spec : c->params) known = known || spec.name == name;
    if (!known)
      return error(Errc::invalid_argument, "--set " + name + ": no selected case has a parameter '" + name + "'");
  }
  PMLAB_TRY(check_values_taken(options.overrides, selected));
  std::optional<RunPattern> filter;
  if (!options.filter.empty()) {
    auto pattern = RunPattern::compile(options.filter);
    if (!pattern) return error(Errc::invalid_argument, "--filter " + pattern.status().message());
    filter = std::move(*pattern);
  }
  if (const std::optional<int> node = options.cpu_node) {
    const platform::MemoryTopology topology = platform::read_memory_topology();
    const std::vector<int> allowed = platform::allowed_cpus();
    if (allowed_cpus_on(topology, allowed, *node).empty()) {
      std::string usable;
      for (const platform::MemoryNode& n : topology.nodes)
        if (!allowed_cpus_on(topology, allowed, n.id).empty())
          usable += (usable.empty() ? "" : ", ") + std::to_string(n.id);
      return error(Errc::invalid_argument, "--cpu-node " + std::to_string(*node) + ": node " + std::to_string(*node) +
                                               " has no CPU this process may use (nodes with CPUs it may use: " +
                                               (usable.empty() ? "none found" : usable) + ")");
    }
  }
  if (options.flush) PMLAB_TRY(persist::check_supported(*options.flush, platform::CpuFeatures::host()));
  if (auto it = options.overrides.find("flush"); it != options.overrides.end()) {
    for (const std::string& value : it->second) {
      if (value == "auto") continue;
      auto flush = persist::parse_flush(value);
      if (!flush) return flush.status();
      if (Status s = persist::check_supported(*flush, platform::CpuFeatures::host()); !s)
        return error(s.code(), "--set flush=" + value + ": " + s.message());
    }
  }
  if (options.duration_s && *options.duration_s <= 0)
    return error(Errc::invalid_argument, "--duration must be positive");
  if (options.ops && *options.ops == 0) return error(Errc::invalid_argument, "--ops must be positive");
  if (options.stability && options.repetitions)
    return error(Errc::invalid_argument,
                 "--stability runs every point once after each suite: --repetitions does not apply");
  return filter;
}

Result<persist::Config> run_defaults(const RunOptions& options, const pool::Pool* bench_pool) {
  persist::Config defaults;
  if (bench_pool) {
    defaults = bench_pool->persister().config();
  } else {
    auto d = persist::default_config(persist::Domain::adr, platform::CpuFeatures::host());
    if (!d) return d.status();
    defaults = *d;
  }
  if (options.domain) defaults.domain = *options.domain;
  if (options.flush) defaults.flush = *options.flush;
  return defaults;
}

std::vector<PlannedRun> name_and_filter(std::vector<PlannedRun>& plan, const persist::Config& defaults,
                                        const std::optional<RunPattern>& filter) {
  std::set<std::string> seen;
  std::vector<PlannedRun> runs;
  for (auto& r : plan) {
    resolve_auto(r.params, defaults);
    r.name = r.def->full_name() + r.params.name_suffix();
    if (filter && !filter->found_in(r.name)) continue;
    if (!seen.insert(r.name).second) continue;
    runs.push_back(std::move(r));
  }
  return runs;
}

RunControl run_control(const RunOptions& options) {
  RunControl control;
  control.duration_s = options.duration_s.value_or(options.quick ? 0.05 : 0.5);
  control.warmup_s = std::min(0.1, control.duration_s / 5);
  control.ops = options.ops.value_or(0);
  return control;
}

void say_refused(const LeftOut& left_out) {
  for (const auto& [name, why] : left_out.refused)
    std::fprintf(stderr, "pmlab: %s %s\n", printable(name).c_str(), printable(why).c_str());
}

Status nothing_to_run(const LeftOut& left_out) {
  const std::string why = left_out.redundant == 0
                              ? std::string()
                              : " (" + std::to_string(left_out.redundant) +
                                    " sweep points left out as redundant, the first " + left_out.first_redundant + ")";
  return error(Errc::invalid_argument, "nothing to run: the selection and --filter match no run" + why);
}

}  // namespace pmlab::bench
