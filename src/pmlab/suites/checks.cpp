// The plausibility rules and cross-checks run over every `pmlab run` (bench/checks.hpp), one entry each.
// docs/checks.md says what each one guards against and what a violation found on this project's machine
// turned out to be.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/checks.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/record/query.hpp"
#include "pmlab/workload/ycsb.hpp"

namespace pmlab::suites {
namespace {

using bench::CheckDef;
using bench::CheckKind;
using bench::CheckVerdict;
using bench::Finding;
using record::matches;
using record::Metric;
using record::metric_value;
using record::param_text;
using record::RunRecord;
using Runs = std::vector<RunRecord>;
using Params = std::vector<std::pair<std::string, std::string>>;

// "Beyond noise" where a pair has no intervals to compare (bench::exceeds).
constexpr double kNoise = 0.10;
// Two cases measuring one operation agree when neither is more than this far above the other.
constexpr double kAgreement = 0.25;

Finding judged(bool violated, std::vector<std::string> runs, std::string detail) {
  return {violated ? CheckVerdict::violated : CheckVerdict::ok, std::move(runs), std::move(detail)};
}

// The first ok run of `full_case` with `params`, or null.
const RunRecord* find_run(const Runs& runs, const std::string& full_case, const Params& params) {
  for (const RunRecord& r : runs)
    if (matches(r, full_case, params)) return &r;
  return nullptr;
}

// Every run's parameters but the listed ones, as (key, value) pairs: finds the twin that differs only there.
Params params_except(const RunRecord& r, std::initializer_list<const char*> skip) {
  Params out;
  for (const auto& [k, v] : r.params.items()) {
    bool skipped = false;
    for (const char* s : skip) skipped = skipped || k == s;
    if (!skipped) out.emplace_back(k, param_text(r, k));
  }
  return out;
}

// a and b measure one quantity: they agree within kAgreement (the larger over the smaller).
Finding agreement(const RunRecord& a, const std::string& ma, const RunRecord& b, const std::string& mb,
                  const std::string& what) {
  const auto x = metric_value(a, ma), y = metric_value(b, mb);
  if (!x || !y || *x <= 0 || *y <= 0) return {CheckVerdict::not_applicable, {}, {}};
  const double ratio = std::max(*x, *y) / std::min(*x, *y);
  return judged(ratio > 1.0 + kAgreement, {a.name, b.name},
                what + ": " + fixed(*x, 1) + " vs " + fixed(*y, 1) + " (" + fixed(100.0 * (ratio - 1.0), 0) +
                    "% apart, " + fixed(100.0 * kAgreement, 0) + "% allowed)");
}

std::vector<Finding> no_negative_share(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    if (r.status != record::RunStatus::ok) continue;
    for (const Metric& m : r.metrics) {
      if (!m.name.ends_with("share") || !std::isfinite(m.value)) continue;
      // Below zero beyond its interval (or, without one, at all): switching a cost off made it slower.
      const bool below = m.stats && m.stats->samples.size() >= 2 ? m.stats->ci_high < 0 : m.value < 0;
      // The redo PTM without its log writes its data back and fences at commit, where with the log it
      // defers them to the next commit: switching the log off can cost more than the log did.
      const bool deferred_write_back = matches(r, "ptm.share", {{"ptm", "redo"}, {"cost", "no-log"}});
      out.push_back(judged(below, {r.name},
                           m.name + " " + fixed(100.0 * m.value, 1) + "%" +
                               (m.stats ? " (95% interval " + fixed(100.0 * m.stats->ci_low, 1) + "% to " +
                                              fixed(100.0 * m.stats->ci_high, 1) + "%)"
                                        : std::string())));
      if (deferred_write_back) out.back().explained = "docs/ptm.md#the-redo-ptms-no-log-point";
    }
  }
  return out;
}

std::vector<Finding> pstore_not_faster_than_cache_hit(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    if (!matches(r, "idio.i1_latency", {{"op", "pstore"}})) continue;
    const RunRecord* load =
        find_run(runs, "idio.i1_latency", {{"medium", param_text(r, "medium")}, {"op", "load"}, {"hit_ratio", "1.0"}});
    if (load == nullptr) continue;
    const auto pstore = metric_value(r, "latency_p50"), hit = metric_value(*load, "latency_p50");
    if (!pstore || !hit || *hit < 0) continue;
    out.push_back(judged(*pstore < *hit, {r.name, load->name},
                         "p-store p50 " + fixed(*pstore, 1) + " ns, cache-hit load " + fixed(*hit, 1) + " ns"));
  }
  return out;
}

std::vector<Finding> persistent_not_faster_than_dram(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    const std::string full_case = r.suite + "." + r.case_name;
    if (full_case != "ds.ycsb" && full_case != "ds.update_ratio" && full_case != "ds.threads") continue;
    if (r.params.contains("breakdown") && param_text(r, "breakdown") != "none") continue;
    const std::string mode = param_text(r, "mode");
    if (r.status != record::RunStatus::ok || (mode != "persist" && mode != "tx")) continue;
    Params twin = params_except(r, {"mode", "medium"});
    twin.emplace_back("mode", "dram");
    // On a NUMA node's memory, DRAM mode on the same node's: a slower node must not make the pool look fast.
    if (const std::string medium = param_text(r, "medium"); media::names_a_node(medium))
      twin.emplace_back("medium", medium);
    else if (r.params.contains("medium")) twin.emplace_back("medium", "dram");
    const RunRecord* dram = find_run(runs, full_case, twin);
    if (dram == nullptr) continue;
    const Metric* p = r.find("throughput");
    const Metric* d = dram->find("throughput");
    if (p == nullptr || d == nullptr) continue;
    // Judged only from intervals: over 100 K records one run of a point moves by up to 2x on a VM that
    // shares its last-level cache (docs/ds.md#threads-dsthreads-dsscaling), beyond any margin one sample
    // each could be held to. ds.ycsb repeats both sides even under --quick.
    const bool intervals = p->stats && d->stats && p->stats->samples.size() >= 2 && d->stats->samples.size() >= 2;
    if (!intervals) {
      out.push_back({CheckVerdict::not_applicable,
                     {r.name, dram->name},
                     "one sample each, not compared (" + mode + " " + fixed(p->value / 1e6, 2) + " vs dram " +
                         fixed(d->value / 1e6, 2) + " M ops/s)"});
      continue;
    }
    out.push_back(
        judged(bench::exceeds(*p, *d, kNoise), {r.name, dram->name},
               mode + " " + fixed(p->value / 1e6, 2) + " M ops/s, dram " + fixed(d->value / 1e6, 2) + " M ops/s"));
    // A read-only point does no persistence work: both modes run the same loads, on the pool and on DRAM,
    // and which is faster changes from run to run with the shared last-level cache (measured spread in the docs).
    if (param_text(r, "updates") == "0" || param_text(r, "workload") == "c")
      out.back().explained = "docs/ds.md#threads-dsthreads-dsscaling";
  }
  return out;
}

std::vector<Finding> bandwidth_not_above_likwid(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    if (!matches(r, "idio.vs_likwid")) continue;
    if (auto ratio = metric_value(r, "ratio_vs_likwid"))
      out.push_back(judged(*ratio > 1.0 + kNoise, {r.name}, "ours / likwid-bench " + fixed(*ratio, 2)));
  }
  return out;
}

// A closed loop of `threads` threads, each with one operation in flight: throughput x latency = threads.
// Far below: the latency misses part of the loop's time (a timed region that ended early, work between
// operations). Far above: operations overlap within a thread.
std::vector<Finding> littles_law(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    if (r.status != record::RunStatus::ok || !r.params.contains("threads")) continue;
    const auto throughput = metric_value(r, "throughput"), latency = metric_value(r, "latency_avg");
    if (!throughput || !latency || *latency <= 0) continue;
    const double threads = r.params["threads"].is_number() ? r.params["threads"].get<double>() : 0;
    if (threads <= 0) continue;
    const double in_flight = *throughput * *latency * 1e-9 / threads;
    // A timed region (the latency times the operations it averages) under 5x the stamp cost subtracted from
    // it carries that calibration's error, a large share of an operation of a few ns: not judged.
    const double region = *latency * metric_value(r, "ops_per_latency_sample").value_or(1.0);
    if (const auto overhead = metric_value(r, "timer_overhead_ns"); overhead && region < 5.0 * *overhead) {
      out.push_back({CheckVerdict::not_applicable,
                     {r.name},
                     "not judged: a timed region of " + fixed(region, 0) + " ns against " + fixed(*overhead, 0) +
                         " ns of stamp cost subtracted (" + fixed(in_flight, 2) + " in flight)"});
      continue;
    }
    Finding f = judged(std::abs(in_flight - 1.0) > 0.30, {r.name},
                       "throughput x mean latency / threads = " + fixed(in_flight, 2));
    // More than one in flight: an operation's stores and write-backs still drain while the next one runs
    // (posted stores; a fence that orders write-backs without waiting for them), and the latency, taken when
    // they have drained, counts that time. Fewer than one in flight has no such explanation: the latency
    // misses time the loop spends (docs/checks.md).
    if (in_flight > 1.30) f.explained = "docs/checks.md#littles-law";
    out.push_back(std::move(f));
  }
  return out;
}

// Two measurements of one quantity: run a's metric and run b's.
struct Pair {
  const RunRecord* a;
  std::string metric_a;
  const RunRecord* b;
  std::string metric_b;
  std::string what;
};

// The agreement of every pair `pair_of` finds, one per run it pairs (std::nullopt: the run pairs with none).
std::vector<Finding> agreements(const Runs& runs, const std::function<std::optional<Pair>(const RunRecord&)>& pair_of) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    const std::optional<Pair> p = pair_of(r);
    if (!p || p->a == nullptr || p->b == nullptr) continue;
    Finding f = agreement(*p->a, p->metric_a, *p->b, p->metric_b, p->what);
    if (f.verdict != CheckVerdict::not_applicable) out.push_back(std::move(f));
  }
  return out;
}

// I1's 64 B p-store at hit ratio `f` against core.persist's 64 B random p-store with the same flush.
// core.persist's random lines are not cached before their store (its span exceeds the LLC), like I1's at
// f = 0: the pair at f = 0 is the measurement that explains a disagreement at f = 1.
std::vector<Finding> i1_pstore_vs_core_persist(const Runs& runs, const char* f, const std::string& what) {
  return agreements(runs, [&](const RunRecord& r) -> std::optional<Pair> {
    if (!matches(r, "idio.i1_latency", {{"op", "pstore"}, {"hit_ratio", f}, {"threads", "1"}})) return std::nullopt;
    const RunRecord* core = find_run(runs, "core.persist",
                                     {{"medium", param_text(r, "medium")},
                                      {"domain", "adr"},
                                      {"flush", param_text(r, "flush")},
                                      {"size", "64"},
                                      {"pattern", "rand"},
                                      {"threads", "1"}});
    return Pair{&r, "latency_p50", core, "latency_p50", what};
  });
}

// The likwid comparison reports its best round (other load only lowers a bandwidth), I2 the mean of one
// run: they measure the same loop, so I2 is held against the comparison's median round, over the rounds of
// its repetitions that ran with the two CPUs placed as I2's were (core_to_core_ns on the same side of
// kNearCoresNs). On the development VM a 2-thread 64 KiB load ran at 41-58 GB/s in windows probed near and
// at 86-114 GB/s in windows probed apart, on both tools alike (docs/checks.md#cores-available).
std::vector<Finding> i2_vs_likwid_peer(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    if (!matches(r, "idio.vs_likwid")) continue;
    const bool load = param_text(r, "kernel") == "load";
    Params q = {{"medium", param_text(r, "medium")}, {"size", "65536"}, {"threads", param_text(r, "threads")}};
    q.emplace_back("op", load ? "load" : "pstore");
    if (!load) q.emplace_back("flush", "ntstore");
    const RunRecord* i2 = find_run(runs, "idio.i2_bandwidth", q);
    if (i2 == nullptr) continue;
    // The repetitions of the comparison placed like I2's run (all of them when either has no probe).
    const Metric* mine = i2->find("core_to_core_ns");
    const Metric* theirs = r.find("core_to_core_ns");
    const auto near = [](double ns) { return ns < bench::kNearCoresNs; };
    auto placed_alike = [&](size_t rep) {
      if (mine == nullptr || theirs == nullptr) return true;
      const double t =
          theirs->stats && rep < theirs->stats->samples.size() ? theirs->stats->samples[rep] : theirs->value;
      return near(t) == near(mine->value);
    };
    std::vector<double> rounds;
    std::map<size_t, std::pair<double, double>> spread;  // repetition -> (least, most) round
    auto note = [&](size_t rep, double v) {
      rounds.push_back(v);
      auto [it, fresh] = spread.try_emplace(rep, v, v);
      if (!fresh) it->second = {std::min(it->second.first, v), std::max(it->second.second, v)};
    };
    for (const Metric& m : r.metrics) {
      if (!m.name.starts_with("bandwidth_round")) continue;
      if (!m.stats) {
        if (placed_alike(0)) note(0, m.value);
        continue;
      }
      for (size_t rep = 0; rep < m.stats->samples.size(); ++rep)
        if (placed_alike(rep)) note(rep, m.stats->samples[rep]);
    }
    // The probes bracket a repetition; the host may move the vCPUs within it. Rounds of one repetition
    // apart by more than 1.6x (the two placements' bandwidths differ by about 2x) show it moved.
    double widest = 1.0;
    for (const auto& [rep, lo_hi] : spread)
      if (lo_hi.first > 0) widest = std::max(widest, lo_hi.second / lo_hi.first);
    if (rounds.empty()) {
      out.push_back({CheckVerdict::not_applicable,
                     {i2->name, r.name},
                     "not compared: no repetition of the comparison had its CPUs placed as I2's run had them (" +
                         fixed(mine ? mine->value : 0.0, 0) + " ns line transfers)"});
      continue;
    }
    RunRecord typical;
    typical.name = r.name;
    typical.set(Metric{"bandwidth", median(rounds), "MiB/s", record::MetricKind::measured, {}});
    Finding f =
        agreement(*i2, "bandwidth", typical, "bandwidth",
                  "64 KiB " + param_text(r, "kernel") + " bandwidth (MiB/s), I2 vs the comparison's median of " +
                      std::to_string(rounds.size()) + " rounds placed alike");
    if (f.verdict == CheckVerdict::violated && widest > 1.6) {
      f.detail += "; the rounds of one repetition span " + fixed(widest, 1) + "x: the placement moved within it";
      f.explained = "docs/checks.md#cores-available";
    }
    if (f.verdict != CheckVerdict::not_applicable) out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> pmdk_fences_vs_its_sources(const Runs& runs) {
  return agreements(runs, [&](const RunRecord& r) -> std::optional<Pair> {
    if (!matches(r, "ptm.target")) return std::nullopt;
    return Pair{&r, "pmdk_fences_per_tx", &r, "pmdk_fences_per_tx_modelled",
                "PMDK drains per transaction, counted at libpmem vs 2 + 2 x ranges from its sources"};
  });
}

// primitives.ycsb_write appends one redo entry of 116 bytes per update (then updates a DRAM table) through
// the same log writers primitives.log_append measures alone (same writer, padding, stores, medium,
// durability and flush, one thread). So an update's fences and written-back bytes per operation lie
// between those of a 64-byte and a 256-byte append, and its time is not below the 64-byte append's by more
// than kAgreement (above the 256-byte one it may be: the table's update is a cache miss in 100 MB).
// ds.harness judges the harness on the null structure driven by the operations with their types spread
// evenly (workload::with_types_spread). On a workload of one operation type the spread stream is the
// generated one, so the two null structures run the same loop over the same operations and must agree: a
// gap there would be the reordering itself costing or saving time, not the mix's branches.
std::vector<Finding> null_structures_agree_on_one_type(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    if (r.status != record::RunStatus::ok || !matches(r, "ds.ycsb", {{"structure", "null"}})) continue;
    const auto spec = workload::workload_named(param_text(r, "workload"));
    if (!spec) continue;
    if (workload::operation_types(*spec) != 1) continue;
    Params twin = params_except(r, {"structure"});
    twin.emplace_back("structure", "null-predictable");
    const RunRecord* spread = find_run(runs, "ds.ycsb", twin);
    if (spread == nullptr || spread->status != record::RunStatus::ok) continue;
    const Metric* a = r.find("throughput");
    const Metric* b = spread->find("throughput");
    if (a == nullptr || b == nullptr || a->value <= 0 || b->value <= 0) continue;
    // Apart beyond kAgreement and beyond their intervals (1 ns loops spread ~20% run to run here).
    const bool apart = bench::exceeds(*a, *b, kAgreement) || bench::exceeds(*b, *a, kAgreement);
    const double ratio = std::max(a->value, b->value) / std::min(a->value, b->value);
    out.push_back(judged(apart && ratio > 1.0 + kAgreement, {r.name, spread->name},
                         "null structure on workload " + param_text(r, "workload") + ": " + fixed(1e9 / a->value, 2) +
                             " vs " + fixed(1e9 / b->value, 2) + " ns per operation with its types spread (" +
                             fixed(100.0 * (ratio - 1.0), 0) + "% apart)"));
  }
  return out;
}

std::vector<Finding> ycsb_write_vs_log_append(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    if (!matches(r, "primitives.ycsb_write") || param_text(r, "threads") != "1") continue;
    auto append_of = [&](const char* size) {
      Params q = params_except(r, {"records"});
      q.emplace_back("size", size);
      return find_run(runs, "primitives.log_append", q);
    };
    const RunRecord* small = append_of("64");
    const RunRecord* large = append_of("256");
    if (small == nullptr || large == nullptr) continue;
    const auto metric = [](const RunRecord& x, const char* name) { return metric_value(x, name).value_or(0.0); };
    const auto written = [&](const RunRecord& x) {
      return metric(x, "flushed_bytes_per_op") + metric(x, "nt_bytes_per_op");
    };
    const auto ns = [&](const RunRecord& x) {
      return metric(x, "throughput") > 0 ? 1e9 / metric(x, "throughput") : 0.0;
    };
    auto within = [](double v, double a, double b) {
      const double lo = std::min(a, b), hi = std::max(a, b);
      return v >= lo * (1.0 - 1e-6) - 1e-9 && v <= hi * (1.0 + 1e-6) + 1e-9;
    };
    const double fences = metric(r, "fences_per_op"), bytes = written(r);
    const bool fences_ok = within(fences, metric(*small, "fences_per_op"), metric(*large, "fences_per_op"));
    const bool bytes_ok = within(bytes, written(*small), written(*large));
    const bool time_ok = ns(r) * (1.0 + kAgreement) >= ns(*small);
    out.push_back(judged(!(fences_ok && bytes_ok && time_ok), {r.name, small->name, large->name},
                         "per update vs appends of 64 B / 256 B: fences " + fixed(fences, 2) + " vs " +
                             fixed(metric(*small, "fences_per_op"), 2) + " / " +
                             fixed(metric(*large, "fences_per_op"), 2) + ", bytes written back " + fixed(bytes, 0) +
                             " vs " + fixed(written(*small), 0) + " / " + fixed(written(*large), 0) + ", ns " +
                             fixed(ns(r), 1) + " vs " + fixed(ns(*small), 1) + " / " + fixed(ns(*large), 1)));
  }
  return out;
}

// `pmlab run --stability`'s verdicts (bench/stability.hpp): a sample point that moved beyond noise after
// another suite ran depends on the order of the runs.
std::vector<Finding> order_independent(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    if (!matches(r, "stability.summary")) continue;
    std::string verdict, reasoning;
    for (const auto& [k, v] : r.notes) {
      if (k == "verdict") verdict = v;
      if (k == "reasoning") reasoning = v;
    }
    out.push_back(judged(verdict != "stable", {r.name}, reasoning));
  }
  return out;
}

// A multi-thread run's probe (RunContext::run_threads) found the host running its CPUs on fewer cores than
// it has threads in some repetition: that repetition's throughput is the host's, and scaling rows leave it
// out.
std::vector<Finding> had_its_cores(const Runs& runs) {
  std::vector<Finding> out;
  for (const RunRecord& r : runs) {
    if (r.status != record::RunStatus::ok) continue;
    const Metric* available = r.find("cores_available");
    const auto probed = metric_value(r, "cores_probed");
    const auto expected = bench::cores_expected(r);
    if (available == nullptr || !probed || !expected) continue;
    const std::vector<bool> mask = bench::had_its_cores(r);
    const size_t short_of = static_cast<size_t>(std::count(mask.begin(), mask.end(), false));
    const double least = available->stats ? available->stats->min : available->value;
    const std::string of = *expected < *probed
                               ? fixed(*expected, 0) + " (" + fixed(*probed, 0) + " CPUs, SMT siblings counted once)"
                               : fixed(*probed, 0);
    out.push_back(judged(short_of > 0, {r.name},
                         "cores running at once: " + fixed(least, 2) + " of " + of + " at worst; " +
                             std::to_string(short_of) + " of " + std::to_string(mask.size()) + " repetitions below " +
                             fixed(100.0 * bench::kCoresAvailableShare, 0) + "%"));
  }
  return out;
}

const bench::CheckRegistration checks[] = {
    bench::CheckRegistration{{CheckKind::plausibility, "no-negative-share",
                              "no cost takes a negative share of an operation's time", "", no_negative_share}},
    bench::CheckRegistration{{CheckKind::plausibility, "pstore-not-below-cache-hit",
                              "a p-store is not faster than a cache-hit load on the same medium", "",
                              pstore_not_faster_than_cache_hit}},
    bench::CheckRegistration{
        {CheckKind::plausibility, "persistent-not-above-dram",
         "a persistent structure is not faster than its DRAM twin beyond noise (ds.ycsb, ds.update_ratio)", "",
         persistent_not_faster_than_dram}},
    bench::CheckRegistration{{CheckKind::plausibility, "bandwidth-not-above-likwid",
                              "bandwidth is not above likwid-bench's by more than 10%", "",
                              bandwidth_not_above_likwid}},
    bench::CheckRegistration{{CheckKind::plausibility, "littles-law",
                              "throughput x mean latency matches the thread count within 30% (Little's law)", "",
                              littles_law}},
    bench::CheckRegistration{{CheckKind::plausibility, "cores-available",
                              "a multi-thread run's CPUs ran at once (a probe before and after it)",
                              "docs/checks.md#cores-available", had_its_cores}},
    bench::CheckRegistration{
        {CheckKind::plausibility, "order-independent",
         "a sample point measures the same alone and after each other suite (pmlab run --stability)", "",
         order_independent}},
    bench::CheckRegistration{
        {CheckKind::cross_check, "i1-pstore-vs-core-persist",
         "I1's 64 B p-store at hit ratio 1 and core.persist's 64 B random p-store (same flush) agree",
         "docs/idio.md#timing-one-p-store-i1",
         [](const Runs& runs) { return i1_pstore_vs_core_persist(runs, "1.0", "p50 of a 64 B p-store (ns)"); }}},
    bench::CheckRegistration{
        {CheckKind::cross_check, "i1-uncached-pstore-vs-core-persist",
         "I1's 64 B p-store at hit ratio 0 and core.persist's 64 B random p-store (same flush) agree", "",
         [](const Runs& runs) {
           return i1_pstore_vs_core_persist(runs, "0.0", "p50 of a 64 B p-store to an uncached line (ns)");
         }}},
    bench::CheckRegistration{{CheckKind::cross_check, "i2-vs-likwid-peer",
                              "I2's 64 KiB bandwidth and the likwid comparison's own side (its median round) agree", "",
                              i2_vs_likwid_peer}},
    bench::CheckRegistration{{CheckKind::cross_check, "ycsb-write-vs-log-append",
                              "a logged YCSB update (116 B entry) fences and writes back between a 64 B and a 256 B "
                              "append of the same writer, and is not faster than the 64 B one",
                              "", ycsb_write_vs_log_append}},
    bench::CheckRegistration{{CheckKind::cross_check, "null-structures-agree-on-one-type",
                              "on a workload of one operation type the null structure measures the same with its "
                              "operation types spread (ds.harness)",
                              "", null_structures_agree_on_one_type}},
    bench::CheckRegistration{{CheckKind::cross_check, "pmdk-drains-vs-sources",
                              "PMDK's drains per transaction, counted, agree with the count its sources give",
                              "docs/ptm.md#targets", pmdk_fences_vs_its_sources}},
};

}  // namespace
}  // namespace pmlab::suites
