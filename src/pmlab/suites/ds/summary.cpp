// The ds suite's derived rows (bench::SuiteSummary), computed from the measured runs of the same
// invocation, so they are measured too:
//   ds.target/structure:S/peer:P/workload:W   our persist-mode S against PMDK's P (the target: our
//       B+-tree vs PMDK's btree and our hashtable vs PMDK's hashmap_tx, >= 2x on every workload), with both
//       sides' flushes and fences per operation (why a target is missed);
//   ds.scaling/structure:S/mode:M/workload:W/threads:N   throughput at N threads / at 1 thread (ds.threads,
//       or ds.ycsb runs at several thread counts), paired by repetition; the persist B+-tree and hashtable
//       carry the target of 1.6x at 2 threads on B and C;
//   ds.harness/workload:W                      the null structure's time per operation (the harness's own)
//       against the fastest structure's in DRAM mode, with the bound on that share (judged without the
//       operation mix's branch mispredictions, which are reported beside it);
//   ds.overhead/structure:S/workload:W        the overheads of [StoredsBench] as throughput ratios
//       (medium cost dram / pmem-volatile, persistence overhead pmem-volatile / persist, transaction
//       overhead persist / tx) and the decomposition of [PMDKOverheads] in ns per operation: for each
//       durable mode, the time a breakdown run saves by switching flushing, fencing or logging off. The
//       parts are not additive in general (a fence waits for the flushes before it); `rest` is what no
//       switch removes (stores, log bookkeeping, transaction begin/commit);
//   ds.tier/structure:S/mode:M/workload:W/tier:numa:N   a structure on NUMA node N's memory against the same
//       structure on its mode's own memory (DRAM mode: local DRAM; persist mode: the pool), same workload
//       and setting: both throughputs and their ratio. The other rows compare runs on the modes' own memory.
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pmlab/bench/checks.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/record/query.hpp"
#include "pmlab/suites/ds/summary.hpp"
#include "pmlab/workload/ycsb.hpp"

namespace pmlab::suites::ds {
namespace {

using record::Metric;
using record::MetricKind;
using record::param_text;
using record::RunRecord;
using record::RunStatus;

// A run on a NUMA node's memory (medium numa:N): only the tier rows compare it.
bool on_node(const RunRecord& r) { return media::names_a_node(param_text(r, "medium")); }

std::optional<double> value_of(const RunRecord* r, const char* metric) {
  if (r == nullptr) return std::nullopt;
  return record::metric_value(*r, metric);
}

// The parameters the rows do not compare: a row compares runs of one setting.
struct Setting {
  std::string threads, records, value, distribution;
  auto operator<=>(const Setting&) const = default;
};
Setting setting_of(const RunRecord& r) {
  return {param_text(r, "threads"), param_text(r, "records"), param_text(r, "value"), param_text(r, "distribution")};
}

// What a row compares within one setting.
struct Point {
  std::string structure, mode, breakdown, workload;
  auto operator<=>(const Point&) const = default;
};

// The ds.ycsb runs of one setting.
struct Group {
  std::map<Point, const RunRecord*> runs;
  const RunRecord* find(const std::string& s, const std::string& m, const std::string& w,
                        const std::string& b = "none") const {
    auto it = runs.find({s, m, b, w});
    return it == runs.end() ? nullptr : it->second;
  }
};

// The point of a side-by-side run (ds.vs_pmdk, ds.vs_one_thread), which runs the default distribution.
struct SidePoint {
  std::string structure, workload;
  Setting setting;
  auto operator<=>(const SidePoint&) const = default;
};
SidePoint side_point_of(const RunRecord& r) {
  Setting setting = setting_of(r);
  setting.distribution = "default";
  return {param_text(r, "structure"), param_text(r, "workload"), std::move(setting)};
}

void put(RunRecord& row, const char* name, std::optional<double> v, const char* unit) {
  if (v) row.set(Metric{name, *v, unit, MetricKind::measured, {}});
}

std::optional<double> ns_of(std::optional<double> throughput) {
  if (!throughput || *throughput <= 0) return std::nullopt;
  return 1e9 / *throughput;
}
std::optional<double> ns_per_op(const RunRecord* r) { return ns_of(value_of(r, "throughput")); }

std::optional<double> saved(const RunRecord* full, const RunRecord* without) {
  auto a = ns_per_op(full), b = ns_per_op(without);
  if (!a || !b) return std::nullopt;
  return *a - *b;
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

// ds.harness: the null structure's time per operation against the fastest structure's (DRAM mode) on the
// same workload, and the bound on that share. On a workload that mixes operation types, part of the null
// structure's time is the mispredicted branch on each operation's type, which comes with the workload (its
// types are independent draws) and which every structure pays alike: the null structure on the same
// operations with their types spread evenly measures the harness without it, and the bound applies to that.
// Both, and their difference, are reported.
std::optional<RunRecord> harness_row(const Group& g, const std::string& w) {
  const RunRecord* null_run = g.find(kNullStructure, "dram", w);
  const auto harness = ns_per_op(null_run);
  if (!harness) return std::nullopt;
  const RunRecord* predictable_run = g.find(kNullPredictableStructure, "dram", w);
  const auto predictable = ns_per_op(predictable_run);
  std::string fastest;
  std::optional<double> fastest_ns;
  const RunRecord* fastest_run = nullptr;
  for (const auto& [at, r] : g.runs) {
    if (at.workload != w || at.mode != "dram" || at.breakdown != "none" || is_null_structure(at.structure)) continue;
    if (const auto ns = ns_per_op(r); ns && (!fastest_ns || *ns < *fastest_ns)) {
      fastest_ns = ns;
      fastest = at.structure;
      fastest_run = r;
    }
  }
  if (!fastest_ns) return std::nullopt;
  RunRecord row;
  row.case_name = "harness";
  row.params["workload"] = w;
  put(row, "harness_ns", harness, "ns");
  put(row, "fastest_ns", fastest_ns, "ns");
  // Paired by repetition where both sides repeated (times per operation: the fastest's throughput over the
  // null structure's), so the verdict has an interval.
  const auto share_of = [&](const char* name, const RunRecord* harness_run, double harness_ns) {
    if (auto share = record::ratio_of(name, fastest_run->find("throughput"), harness_run->find("throughput")))
      row.set(*share);
    else put(row, name, harness_ns / *fastest_ns, "ratio");
  };
  share_of("harness_share_with_mix", null_run, *harness);
  const char* judged = "harness_share_with_mix";
  if (predictable) {
    put(row, "harness_predictable_ns", predictable, "ns");
    // On a workload of one operation type both null runs execute the same stream: their difference is
    // noise (the cross-check null-structures-agree-on-one-type holds them together), not a cost.
    if (const auto spec = workload::workload_named(w); spec && operation_types(*spec) > 1)
      put(row, "op_mix_ns", *harness - *predictable, "ns");
    share_of("harness_share", predictable_run, *predictable);
    judged = "harness_share";
  }
  row.add_target({judged,
                  predictable
                      ? "the harness's time per operation (operation types predictable) / the fastest structure's"
                      : "the harness's time per operation / the fastest structure's",
                  kHarnessShareTarget,
                  record::TargetDirection::at_most,
                  {}});
  row.notes.emplace_back("fastest", fastest + " (dram mode)");
  return row;
}

constexpr double kScalingTarget = 1.6;

// The targeted rows (persist B+-tree and hashtable at 2 threads, B and C).
std::optional<bench::ScalingTarget> scaling_target(const std::string& structure, const std::string& mode,
                                                   const std::string& workload, int64_t threads) {
  if (mode == "persist" && is_targeted(structure) && (workload == "b" || workload == "c") && threads == 2)
    return bench::ScalingTarget{structure + " (persist) at 2 threads / at 1 thread, YCSB " + workload, kScalingTarget};
  return std::nullopt;
}

// A ds.ycsb or ds.threads point the scaling rows pair runs of: every parameter but the thread count.
struct ScalingPoint {
  std::string case_name, structure, mode, workload, distribution, records, value;
  auto operator<=>(const ScalingPoint&) const = default;
};

// ds.scaling's rows: from ds.vs_one_thread's side-by-side run of a point when the invocation has one, else
// from the pair of ds.threads (or ds.ycsb) runs at 1 and N threads.
void append_scaling(const std::vector<RunRecord>& runs, std::vector<RunRecord>& rows) {
  std::map<SidePoint, const RunRecord*> side;
  for (const RunRecord& r : runs)
    if (r.case_name == "vs_one_thread" && r.status == RunStatus::ok) side[side_point_of(r)] = &r;
  std::set<const RunRecord*> used;
  const auto side_row = [&](RunRecord& row, const RunRecord& run, int64_t threads,
                            const std::optional<bench::ScalingTarget>& target) {
    put(row, "throughput", value_of(&run, "throughput"), "ops/s");
    put(row, "throughput_one_thread", value_of(&run, "throughput_one_thread"), "ops/s");
    bench::fill_scaling_row(row, bench::scaling_of_side_by_side(run), run, threads,
                            "side by side: alternating phases of one ds.vs_one_thread run", target);
    used.insert(&run);
  };

  const auto pairs = bench::scaling_pairs<ScalingPoint>(runs, [](const RunRecord& r) -> std::optional<ScalingPoint> {
    if ((r.case_name != "ycsb" && r.case_name != "threads") || on_node(r)) return std::nullopt;
    const std::string breakdown = param_text(r, "breakdown");
    if (!breakdown.empty() && breakdown != "none") return std::nullopt;
    return ScalingPoint{r.case_name,
                        param_text(r, "structure"),
                        param_text(r, "mode"),
                        param_text(r, "workload"),
                        param_text(r, "distribution"),
                        param_text(r, "records"),
                        param_text(r, "value")};
  });
  for (const auto& p : pairs) {
    const ScalingPoint& at = p.point;
    RunRecord row;
    row.case_name = "scaling";
    row.params = {{"structure", at.structure}, {"mode", at.mode}, {"workload", at.workload}};
    for (const char* k : {"distribution", "records", "value"})
      if (auto it = p.many->params.find(k); it != p.many->params.end()) row.params[k] = *it;
    row.params["threads"] = p.threads;
    row.name = record::name_in("ds", row);
    const auto target = scaling_target(at.structure, at.mode, at.workload, p.threads);
    const auto it =
        at.mode == "persist" && (at.distribution.empty() || at.distribution == "default")
            ? side.find({at.structure, at.workload, {std::to_string(p.threads), at.records, at.value, "default"}})
            : side.end();
    if (it != side.end()) {
      side_row(row, *it->second, p.threads, target);
    } else {
      put(row, "throughput", value_of(p.many, "throughput"), "ops/s");
      put(row, "throughput_one_thread", value_of(p.one, "throughput"), "ops/s");
      bench::fill_scaling_row(row, p, "ds." + at.case_name, target);
    }
    rows.push_back(std::move(row));
  }
  // Side-by-side runs without ds.threads runs of their point (`pmlab run ds.vs_one_thread`): their rows alone.
  for (const auto& [at, run] : side) {
    if (used.contains(run)) continue;
    RunRecord row;
    row.case_name = "scaling";
    row.params = {{"structure", at.structure}, {"mode", "persist"}, {"workload", at.workload}};
    for (const char* k : {"records", "value"})
      if (auto p = run->params.find(k); p != run->params.end()) row.params[k] = *p;
    const int64_t threads = std::stoll(at.setting.threads);
    row.params["threads"] = threads;
    row.name = record::name_in("ds", row);
    side_row(row, *run, threads, scaling_target(at.structure, "persist", at.workload, threads));
    rows.push_back(std::move(row));
  }
}

// ds.target for one (ours, peer, workload): from ds.vs_pmdk's side-by-side run when there is one, else from
// the two ds.ycsb runs paired by repetition. Net of the harness: the same ratio once the null structure's
// time per operation (`harness`) is taken off both. Empty when neither source is there.
RunRecord target_row(const std::string& ours, const std::string& peer, const std::string& w, const RunRecord* a,
                     const RunRecord* b, const RunRecord* side, std::optional<double> harness) {
  RunRecord row;
  if (side == nullptr && (a == nullptr || b == nullptr)) return row;
  row.case_name = "target";
  row.params["structure"] = ours;
  row.params["peer"] = peer;
  row.params["workload"] = w;
  // Each metric of ours and of the peer, by its name in the row; side by side the peer's carry "peer_".
  auto ours_metric = [&](const std::string& m) -> const Metric* { return side ? side->find(m) : a->find(m); };
  auto peer_metric = [&](const std::string& m) -> const Metric* { return side ? side->find("peer_" + m) : b->find(m); };
  auto put_metric = [&](const std::string& name, const Metric* m) {
    if (m != nullptr && std::isfinite(m->value)) row.set(Metric{name, m->value, m->unit, MetricKind::measured, {}});
  };
  put_metric("throughput", ours_metric("throughput"));
  put_metric("peer_throughput", peer_metric("throughput"));
  std::optional<Metric> ratio;
  if (side == nullptr) ratio = record::ratio_of("ratio", a->find("throughput"), b->find("throughput"));
  else if (const Metric* m = side->find("ratio")) ratio = *m;
  if (ratio) row.set(*ratio);
  const std::optional<double> r = value_of(&row, "ratio");
  const std::optional<double> na = ns_per_op(&row), nb = ns_of(value_of(&row, "peer_throughput"));
  if (harness && na && nb && *na > *harness && *nb > *harness)
    put(row, "ratio_net_of_harness", (*nb - *harness) / (*na - *harness), "ratio");
  if (r)
    row.add_target({"ratio", ours + " (persist) vs PMDK's " + peer, kTargetRatio, record::TargetDirection::at_least});
  for (const char* m : {"flushes_per_op", "fences_per_op", "nt_bytes_per_op", "latency_p50", "latency_p99"}) {
    put_metric(m, ours_metric(m));
    put_metric("peer_" + std::string(m), peer_metric(m));
  }
  row.notes.emplace_back("source", side ? "side by side: alternating phases of one ds.vs_pmdk run"
                                        : "two ds.ycsb runs, paired by repetition");
  if (r) {
    std::string why = "ours " + fixed(*r, 3) + "x the peer (target " + fixed(kTargetRatio, 1) + "x); per op: ours " +
                      fixed(value_of(&row, "flushes_per_op").value_or(NAN), 2) + " flushes, " +
                      fixed(value_of(&row, "fences_per_op").value_or(NAN), 2) + " fences; " + peer + " " +
                      fixed(value_of(&row, "peer_flushes_per_op").value_or(NAN), 2) + " flushes, " +
                      fixed(value_of(&row, "peer_fences_per_op").value_or(NAN), 2) +
                      " fences (PMDK's counted at libpmem's entry points)";
    row.notes.emplace_back("verdict", record::to_string(row.targets.back().verdict));
    row.notes.emplace_back("reasoning", why);
  }
  return row;
}

// Structure s on workload w, mode by mode: what the medium, persistence and transactions cost, and what
// each breakdown switch saved.
RunRecord overhead_row(const Group& g, const std::string& s, const std::string& w) {
  RunRecord row;
  row.case_name = "overhead";
  row.params["structure"] = s;
  row.params["workload"] = w;
  const RunRecord* dram = g.find(s, "dram", w);
  const RunRecord* vol = g.find(s, "pmem-volatile", w);
  const RunRecord* per = g.find(s, "persist", w);
  const RunRecord* tx = g.find(s, "tx", w);
  const RunRecord* pmdk = g.find(s, "pmdk", w);
  put(row, "ns_dram", ns_per_op(dram), "ns");
  put(row, "ns_pmem_volatile", ns_per_op(vol), "ns");
  put(row, "ns_persist", ns_per_op(per), "ns");
  put(row, "ns_tx", ns_per_op(tx), "ns");
  put(row, "ns_pmdk", ns_per_op(pmdk), "ns");
  put(row, "medium_cost", ratio(value_of(dram, "throughput"), value_of(vol, "throughput")), "ratio");
  put(row, "persistence_overhead", ratio(value_of(vol, "throughput"), value_of(per, "throughput")), "ratio");
  put(row, "transaction_overhead", ratio(value_of(per, "throughput"), value_of(tx, "throughput")), "ratio");
  for (const auto& [mode, run] :
       {std::pair{std::string("persist"), per}, {std::string("tx"), tx}, {std::string("pmdk"), pmdk}}) {
    if (run == nullptr) continue;
    const auto flush = saved(run, g.find(s, mode, w, "no-flush"));
    const auto fence = saved(run, g.find(s, mode, w, "no-fence"));
    const auto log = saved(run, g.find(s, mode, w, "no-log"));
    put(row, (mode + "_flush_ns").c_str(), flush, "ns");
    put(row, (mode + "_fence_ns").c_str(), fence, "ns");
    put(row, (mode + "_log_ns").c_str(), log, "ns");
    // What no switch removes, above the volatile run on the same medium.
    if (auto total = ns_per_op(run); total && flush && fence) {
      const double base = ns_per_op(vol).value_or(0.0);
      put(row, (mode + "_rest_ns").c_str(), *total - base - *flush - *fence - log.value_or(0.0), "ns");
    }
  }
  return row;
}

// A ds.ycsb point but for its medium.
struct TierPoint {
  Setting setting;
  std::string structure, mode, workload;
  auto operator<=>(const TierPoint&) const = default;
};

// ds.tier's rows: each structure run on a node's memory against its run on the mode's own memory.
void append_tiers(const std::vector<RunRecord>& runs, std::vector<RunRecord>& rows) {
  std::map<TierPoint, const RunRecord*> own_memory;
  std::vector<std::pair<TierPoint, const RunRecord*>> on_nodes;
  for (const RunRecord& r : runs) {
    const std::string breakdown = param_text(r, "breakdown");
    if (r.case_name != "ycsb" || r.status != RunStatus::ok || (!breakdown.empty() && breakdown != "none")) continue;
    const TierPoint at{setting_of(r), param_text(r, "structure"), param_text(r, "mode"), param_text(r, "workload")};
    if (on_node(r)) on_nodes.emplace_back(at, &r);
    else own_memory[at] = &r;
  }
  for (const auto& [at, run] : on_nodes) {
    const auto own = own_memory.find(at);
    RunRecord row;
    row.case_name = "tier";
    row.params = {{"structure", at.structure},
                  {"mode", at.mode},
                  {"workload", at.workload},
                  {"tier", param_text(*run, "medium")}};
    for (const char* k : {"threads", "records", "value", "distribution"})
      if (auto it = run->params.find(k); it != run->params.end()) row.params[k] = *it;
    row.name = record::name_in("ds", row);
    const RunRecord* baseline = own == own_memory.end() ? nullptr : own->second;
    put(row, "throughput", value_of(run, "throughput"), "ops/s");
    put(row, "throughput_own_memory", value_of(baseline, "throughput"), "ops/s");
    put(row, "throughput_ratio", ratio(value_of(run, "throughput"), value_of(baseline, "throughput")), "ratio");
    row.notes.emplace_back("own_memory", baseline ? param_text(*baseline, "medium") : "not measured in this run");
    rows.push_back(std::move(row));
  }
}

}  // namespace

std::vector<RunRecord> summarize(const std::vector<RunRecord>& runs, const nlohmann::ordered_json&) {
  std::map<Setting, Group> groups;
  for (const RunRecord& r : runs) {
    if (r.case_name != "ycsb" || r.status != RunStatus::ok || on_node(r)) continue;
    const std::string breakdown = param_text(r, "breakdown");
    groups[setting_of(r)].runs[{param_text(r, "structure"), param_text(r, "mode"),
                                breakdown.empty() ? "none" : breakdown, param_text(r, "workload")}] = &r;
  }
  std::map<SidePoint, const RunRecord*> side_by_side;
  for (const RunRecord& r : runs)
    if (r.case_name == "vs_pmdk" && r.status == RunStatus::ok) side_by_side[side_point_of(r)] = &r;
  std::vector<RunRecord> rows;
  for (const auto& [setting, g] : groups) {
    const RunRecord* any = g.runs.begin()->second;
    auto base_params = [&](RunRecord& row) {
      for (const char* k : {"threads", "records", "value", "distribution"})
        if (auto it = any->params.find(k); it != any->params.end()) row.params[k] = *it;
    };
    std::map<std::string, bool> workloads;
    for (const auto& [at, r] : g.runs) workloads[at.workload] = true;

    for (const auto& [w, _] : workloads) {
      for (const auto& [ours, peer] : kTargetPairs) {
        const RunRecord* side = nullptr;
        if (auto it = side_by_side.find({ours, w, setting}); it != side_by_side.end()) {
          side = it->second;
          side_by_side.erase(it);
        }
        RunRecord row = target_row(ours, peer, w, g.find(ours, "persist", w), g.find(peer, "pmdk", w), side,
                                   ns_per_op(g.find(kNullStructure, "dram", w)));
        if (row.metrics.empty()) continue;
        base_params(row);
        row.name = record::name_in("ds", row);
        rows.push_back(std::move(row));
      }

      if (std::optional<RunRecord> row = harness_row(g, w)) {
        base_params(*row);
        row->name = record::name_in("ds", *row);
        rows.push_back(std::move(*row));
      }

      std::map<std::string, bool> structures;
      for (const auto& [at, r] : g.runs)
        if (at.workload == w && contender_kind(at.structure) == ContenderKind::structure)
          structures[at.structure] = true;
      for (const auto& [s, __] : structures) {
        RunRecord row = overhead_row(g, s, w);
        base_params(row);
        row.name = record::name_in("ds", row);
        if (row.metrics.size() > 2) rows.push_back(std::move(row));
      }
    }
  }
  // Side-by-side runs without ds.ycsb runs of their point (`pmlab run ds.vs_pmdk`): their rows alone.
  for (const auto& [at, side] : side_by_side) {
    const std::optional<std::string> peer = pmdk_peer_of(at.structure);
    if (!peer) continue;
    RunRecord row = target_row(at.structure, *peer, at.workload, nullptr, nullptr, side, std::nullopt);
    for (const char* k : {"threads", "records", "value"})
      if (auto it = side->params.find(k); it != side->params.end()) row.params[k] = *it;
    row.name = record::name_in("ds", row);
    rows.push_back(std::move(row));
  }
  append_scaling(runs, rows);
  append_tiers(runs, rows);
  return rows;
}

namespace {
const bench::SuiteSummaryRegistration summary{bench::SuiteSummary{
    "ds",
    summarize,
    {{"target",
      "our persist structure against PMDK's map on the same stream: ratio, net of the harness, target "
      "and verdict"},
     {"scaling", "throughput at N threads over one thread's, per structure, mode and read-mostly workload"},
     {"harness", "the harness's own time per operation (the null structure) against the fastest structure's"},
     {"overhead", "where a persistent operation's time goes: DRAM, PMEM-volatile, persist, tx, PMDK side by side"},
     {"tier", "a structure on a NUMA node's memory against the same on its mode's own memory (DRAM or the pool)"}}}};
}  // namespace

}  // namespace pmlab::suites::ds
