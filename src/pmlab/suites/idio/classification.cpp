#include "pmlab/suites/idio/classification.hpp"

#include "pmlab/record/query.hpp"
#include "pmlab/suites/idio/common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

namespace pmlab::suites::idio {

using record::Metric;
using record::MetricKind;
using record::RunRecord;
using record::RunStatus;

const char* to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::present: return "present";
    case Verdict::absent: return "absent";
    case Verdict::not_applicable: return "not applicable here";
  }
  return "?";
}

Decision decide(std::optional<double> pool, std::optional<double> dram) {
  Decision d;
  if (!pool) return d;
  if (*pool < kPresentAt) {
    d.verdict = Verdict::absent;
    return d;
  }
  d.verdict = Verdict::present;
  if (dram && *dram > 0) d.pmem_specific = *pool / *dram >= kSpecificAt;
  return d;
}

std::string impact_class(std::optional<double> impact) {
  if (!impact) return "not measured here";
  if (*impact < 1.1) return "none";
  if (*impact < 1.5) return "low";
  if (*impact <= 3.0) return "moderate";
  return "high";
}

namespace {

using record::metric_value;
using record::param_number;
using record::param_text;

using Pred = std::function<bool(const RunRecord&)>;

std::vector<const RunRecord*> ok_runs(const std::vector<RunRecord>& runs, const std::string& case_name,
                                      const Pred& pred = {}) {
  std::vector<const RunRecord*> out;
  for (const auto& r : runs)
    if (r.case_name == case_name && r.status == RunStatus::ok && (!pred || pred(r))) out.push_back(&r);
  return out;
}

std::optional<std::string> skip_reason(const std::vector<RunRecord>& runs, const std::string& case_name) {
  for (const auto& r : runs)
    if (r.case_name == case_name && r.status != RunStatus::ok && !r.reason.empty()) return r.reason;
  return std::nullopt;
}

Pred on(const std::string& medium) {
  return [medium](const RunRecord& r) { return param_text(r, "medium") == medium; };
}

std::optional<double> max_param(const std::vector<const RunRecord*>& rs, const std::string& key) {
  std::optional<double> best;
  for (const auto* r : rs)
    if (auto v = param_number(*r, key); v && (!best || *v > *best)) best = v;
  return best;
}

std::optional<double> min_param(const std::vector<const RunRecord*>& rs, const std::string& key) {
  std::optional<double> best;
  for (const auto* r : rs)
    if (auto v = param_number(*r, key); v && (!best || *v < *best)) best = v;
  return best;
}

// The best (max or min) value of a metric over the runs matching `pred`.
std::optional<double> extreme(const std::vector<const RunRecord*>& rs, const std::string& metric, bool want_max,
                              const Pred& pred = {}) {
  std::optional<double> best;
  for (const auto* r : rs) {
    if (pred && !pred(*r)) continue;
    if (auto v = metric_value(*r, metric); v && (!best || (want_max ? *v > *best : *v < *best))) best = v;
  }
  return best;
}

// The model behind `metric` in any of the runs, when one of them reports it as modelled.
std::string model_of(const std::vector<const RunRecord*>& rs, const std::string& metric) {
  for (const auto* r : rs)
    if (const Metric* m = r->find(metric); m != nullptr && m->kind == MetricKind::modelled) return m->origin;
  return "";
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

Pred param_is(const std::string& key, const std::string& value) {
  return [key, value](const RunRecord& r) { return param_text(r, key) == value; };
}

Pred num_is(const std::string& key, double value) {
  return [key, value](const RunRecord& r) {
    auto v = param_number(r, key);
    return v && std::fabs(*v - value) < 1e-9;
  };
}

Pred both(Pred a, Pred b) {
  return [a, b](const RunRecord& r) { return a(r) && b(r); };
}

std::string x(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", v);
  return buf;
}

std::string x(std::optional<double> v) { return v ? x(*v) : std::string("n/a"); }

Metric measured(std::string name, double value, std::string unit = "ratio") {
  return Metric{std::move(name), value, std::move(unit), MetricKind::measured, {}};
}

// Published grids of sheets I4/I5 (store + clwb and store bandwidth, MiB/s): rows by thread count, columns by
// access size; PMEM in columns B–H, DRAM in L–R.
const std::vector<int> kPublishedThreads = {1, 2, 4, 8, 16, 28};
const std::vector<int> kPublishedSizes = {64, 128, 256, 512, 1024, 2048, 4096};

// The published point nearest ours from below (the paper ran up to 28 threads and 4 KiB).
size_t published_index(const std::vector<int>& grid, double ours) {
  size_t idx = 0;
  for (size_t i = 0; i < grid.size(); ++i)
    if (grid[i] <= ours) idx = i;
  return idx;
}

std::string cell(char column, int row) { return std::string(1, column) + std::to_string(row); }

std::optional<double> grid_value(const PublishedSheets& p, const std::string& sheet, int first_row, bool pmem,
                                 size_t thread_idx, size_t size_idx) {
  const char column = static_cast<char>((pmem ? 'B' : 'L') + size_idx);
  return p.number(sheet, cell(column, first_row + static_cast<int>(thread_idx)));
}

// EBR ([PMIdioBench] §3): achieved bandwidth / the peak bandwidth of the same medium and direction, the peak
// being the best any run of this suite reached. Technology-independent, and measured.
std::optional<double> peak_bandwidth(const std::vector<RunRecord>& runs, const std::string& medium, bool write) {
  std::optional<double> best;
  for (const auto& r : runs) {
    if (r.status != RunStatus::ok || param_text(r, "medium") != medium) continue;
    const std::string op = param_text(r, "op");
    const bool reads = r.case_name == "i6_read" || (r.case_name == "i2_bandwidth" && op == "load");
    const bool writes = r.case_name == "i3_small_writes" || r.case_name == "i4_numa" ||
                        r.case_name == "i5_store_vs_pstore" || (r.case_name == "i2_bandwidth" && op != "load");
    if (write ? !writes : !reads) continue;
    if (auto v = metric_value(r, "bandwidth"); v && (!best || *v > *best)) best = v;
  }
  return best;
}

void add_ebr(Classification& c, const std::vector<RunRecord>& runs, const std::string& name, const std::string& medium,
             bool write, std::optional<double> achieved) {
  if (auto ebr = ratio(achieved, peak_bandwidth(runs, medium, write)))
    c.extra.push_back(Metric{"ebr_" + name + "_" + medium, *ebr, "ratio", MetricKind::measured, {}});
}

// Records the effect measured on one medium and the model behind it (empty when measured).
void set_effect(Classification& c, const std::string& medium, std::optional<double> effect, std::string model) {
  (medium == "pool" ? c.pool : c.dram) = effect;
  (medium == "pool" ? c.pool_model : c.dram_model) = std::move(model);
}

// --------------------------------------------------------------------------------------- the reasoning

std::string reason_text(const Classification& c) {
  std::string s = c.effect + ": pool " + x(c.pool) + ", DRAM " + x(c.dram) + ". ";
  switch (c.decision.verdict) {
    case Verdict::present:
      if (c.pool_emulated && c.dram) {
        s += "Present, but the pool is emulated (DRAM pages behind a file), so nothing here is PMEM-specific: the "
             "pool/DRAM difference (" +
             x(*c.pool / *c.dram) +
             ") comes from the mapping or from noise ([PMIdioBench] "
             "names " +
             c.root_cause + "; classes " + c.applicability + ").";
      } else if (c.decision.pmem_specific.value_or(false)) {
        s += "Present and PMEM-specific here: the pool shows it " + x(*c.pool / *c.dram) +
             " as strongly as DRAM, which points at the memory device ([PMIdioBench]: " + c.root_cause + ", classes " +
             c.applicability + ").";
      } else if (c.decision.pmem_specific) {
        s += "Present, but DRAM shows it as well, so here it is not PMEM-specific: the cause lies outside the "
             "memory device ([PMIdioBench] names " +
             c.root_cause + "; classes " + c.applicability + ").";
      } else {
        s += "Present on the pool; without a DRAM effect to compare, PMEM-specificity is unknown ([PMIdioBench]: " +
             c.root_cause + ", classes " + c.applicability + ").";
      }
      break;
    case Verdict::absent:
      s += "Absent: below the " + x(kPresentAt) + " threshold on the pool. [PMIdioBench] attributes it to " +
           c.root_cause + " (classes " + c.applicability + "); memory without that component does not show it.";
      break;
    case Verdict::not_applicable:
      s = "Not applicable here: " + c.not_applicable_reason + " [PMIdioBench] attributes it to " + c.root_cause +
          " (classes " + c.applicability + ").";
      break;
  }
  if (c.effect.find("(modelled") != std::string::npos && c.decision.verdict != Verdict::not_applicable)
    s += " The effect is modelled (device model), not measured.";
  if (c.published_pmem || c.published_dram)
    s += " Published on DCPMM: " + x(c.published_pmem) + " (DRAM " + x(c.published_dram) + ").";
  return s;
}

void finish(Classification& c) {
  if (c.not_applicable_reason.empty()) {
    c.decision = decide(c.pool, c.dram);
    if (c.pool_emulated && c.decision.verdict == Verdict::present) c.decision.pmem_specific = false;
    if (c.decision.verdict == Verdict::not_applicable)
      c.not_applicable_reason = "no successful run measured the effect on the pool.";
  } else {
    c.decision = Decision{};
  }
  c.reasoning = reason_text(c);
}

// ------------------------------------------------------------------------------------ the eight effects

Classification i1(const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  Classification c{"I1",
                   "Asymmetric load/p-store latency",
                   "the CPU cache",
                   "C1-C4",
                   "median p-store / median load latency at the highest LLC hit ratio",
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {}};
  for (const std::string medium : {"pool", "dram"}) {
    auto rs = ok_runs(runs, "i1_latency", on(medium));
    auto f = max_param(rs, "hit_ratio");
    auto t = min_param(rs, "threads");
    if (!f || !t) continue;
    const Pred at = both(num_is("hit_ratio", *f), num_is("threads", *t));
    auto load = extreme(rs, "latency_p50", false, both(at, param_is("op", "load")));
    auto pstore = extreme(rs, "latency_p50", false, both(at, param_is("op", "pstore")));  // the cheapest flush
    auto effect = ratio(pstore, load);
    set_effect(c, medium, effect, model_of(rs, "latency_p50"));
    auto f0 = min_param(rs, "hit_ratio");
    if (f0 && *f0 < *f) {
      auto load0 = extreme(rs, "latency_p50", false,
                           both(both(num_is("hit_ratio", *f0), num_is("threads", *t)), param_is("op", "load")));
      if (auto r = ratio(load0, load)) c.extra.push_back(measured("load_miss_over_hit_" + medium, *r));
    }
    if (auto h = extreme(rs, "hit_ratio_measured", false, both(at, param_is("op", "load"))))
      c.extra.push_back(measured("hit_ratio_measured_at_max_f_" + medium, *h));
  }
  c.published_pmem = ratio(pub.number("I1", "C13"), pub.number("I1", "B13"));
  c.published_dram = ratio(pub.number("I1", "E13"), pub.number("I1", "D13"));
  c.published_source = published_source("I1", "p-store / load latency at hit ratio 1, 8 threads");
  finish(c);
  return c;
}

Classification i2(const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  Classification c{"I2",
                   "Asymmetric load/p-store bandwidth",
                   "iMC contention and 3D-XPoint latency",
                   "C4+",
                   "peak load bandwidth / peak p-store bandwidth",
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {}};
  for (const std::string medium : {"pool", "dram"}) {
    auto rs = ok_runs(runs, "i2_bandwidth", on(medium));
    auto load = extreme(rs, "bandwidth", true, param_is("op", "load"));
    auto pstore = extreme(rs, "bandwidth", true, param_is("op", "pstore"));
    set_effect(c, medium, ratio(load, pstore), model_of(rs, "bandwidth"));
    if (load) c.extra.push_back(measured("peak_load_bandwidth_" + medium, *load, "MiB/s"));
    if (pstore) c.extra.push_back(measured("peak_pstore_bandwidth_" + medium, *pstore, "MiB/s"));
  }
  auto row_max = [&](std::initializer_list<int> rows) {
    std::optional<double> best;
    for (int row : rows)
      for (char col = 'D'; col <= 'J'; ++col)
        if (auto v = pub.number("I2", cell(col, row)); v && (!best || *v > *best)) best = v;
    return best;
  };
  c.published_pmem = ratio(row_max({4}), row_max({5, 6}));
  c.published_dram = ratio(row_max({7}), row_max({8, 9}));
  c.published_source =
      published_source("I2", "peak load / peak p-store (store+clwb or nt-store) bandwidth, fio libpmem");
  finish(c);
  return c;
}

Classification i3(const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  Classification c{"I3",
                   "Poor bandwidth for small-sized random IO",
                   "access granularity mismatch",
                   "C3, C4",
                   "sequential / random p-store bandwidth at the smallest size",
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {}};
  for (const std::string medium : {"pool", "dram"}) {
    auto rs = ok_runs(runs, "i3_small_writes", on(medium));
    auto size = min_param(rs, "size");
    auto t = max_param(rs, "threads");
    if (!size || !t) continue;
    const Pred at = both(num_is("size", *size), num_is("threads", *t));
    auto seq = extreme(rs, "bandwidth", true, both(at, param_is("pattern", "seq")));
    auto rnd = extreme(rs, "bandwidth", true, both(at, param_is("pattern", "rand")));
    set_effect(c, medium, ratio(seq, rnd), model_of(rs, "bandwidth"));
    add_ebr(c, runs, "random_smallest", medium, true, rnd);
    for (const auto* r : rs)
      if (at(*r) && param_text(*r, "pattern") == "rand")
        if (const Metric* ewr = r->find("ewr"); ewr != nullptr && ewr->kind == MetricKind::modelled)
          c.extra.push_back(
              Metric{"ewr_random_smallest_" + medium, ewr->value, "ratio", MetricKind::modelled, ewr->origin});
  }
  c.published_pmem = ratio(pub.number("I3", "B4"), pub.number("I3", "B5"));
  if (auto ewr = pub.number("I3", "B11"))
    c.extra.push_back(Metric{"ewr_random_64_published", *ewr, "ratio", MetricKind::published,
                             published_source("I3", "EWR of 64 B random writes, 16 threads")});
  c.published_source = published_source("I3", "64 B sequential / random write bandwidth, 16 threads");
  finish(c);
  return c;
}

// I4 and I5 compare two values of one parameter (`key` = `numerator` over `denominator`) for sequential
// p-stores at the most threads and the largest size, on each medium, and against the published grid cell
// nearest that point. Returns the bandwidth of the denominator on each medium, for EBR.
struct PairedPoint {
  std::optional<double> threads, size;
  std::map<std::string, std::optional<double>> denominator;  // by medium
};

PairedPoint paired_bandwidth(Classification& c, const std::vector<RunRecord>& runs, const std::string& case_name,
                             const std::string& key, const std::string& numerator, const std::string& denominator) {
  PairedPoint point;
  for (const std::string medium : {"pool", "dram"}) {
    auto rs = ok_runs(runs, case_name, both(on(medium), param_is("pattern", "seq")));
    auto t = max_param(rs, "threads");
    auto s = max_param(rs, "size");
    if (!t || !s) continue;
    point.threads = t;
    point.size = s;
    const Pred at = both(num_is("threads", *t), num_is("size", *s));
    const auto den = extreme(rs, "bandwidth", true, both(at, param_is(key, denominator)));
    set_effect(c, medium, ratio(extreme(rs, "bandwidth", true, both(at, param_is(key, numerator))), den),
               model_of(rs, "bandwidth"));
    point.denominator[medium] = den;
  }
  return point;
}

// The published ratio of rows `numerator_row` / `denominator_row` of a thread x size grid sheet, at the grid
// point nearest ours from below (`default_threads` when no run gave a thread count).
void published_grid_ratio(Classification& c, const PublishedSheets& pub, const std::string& sheet,
                          const PairedPoint& at, int default_threads, const std::string& what) {
  const size_t ti = published_index(kPublishedThreads, at.threads.value_or(default_threads));
  const size_t si = published_index(kPublishedSizes, at.size.value_or(4096));
  c.published_pmem = ratio(grid_value(pub, sheet, 28, true, ti, si), grid_value(pub, sheet, 49, true, ti, si));
  c.published_dram = ratio(grid_value(pub, sheet, 28, false, ti, si), grid_value(pub, sheet, 49, false, ti, si));
  c.published_source = published_source(sheet, what + " at " + std::to_string(kPublishedThreads[ti]) + " threads, " +
                                                   std::to_string(kPublishedSizes[si]) + " B");
}

Classification i4(const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  Classification c{"I4",
                   "Poor p-store bandwidth on remote NUMA PMEM",
                   "the mesh interconnect and the XPPrefetcher",
                   "C1, C2*, C3, C4*",
                   "local / remote p-store bandwidth (sequential, most threads, largest size)",
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {}};
  const PairedPoint at = paired_bandwidth(c, runs, "i4_numa", "locality", "local", "remote");
  if (!c.pool) {
    const auto why = skip_reason(runs, "i4_numa");
    c.not_applicable_reason = why ? *why + "." : "no local/remote pair of runs succeeded.";
  }
  published_grid_ratio(c, pub, "I4", at, 28, "local / remote sequential store+clwb bandwidth");
  finish(c);
  return c;
}

Classification i5(const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  Classification c{"I5",
                   "Store bandwidth lower than p-store bandwidth",
                   "the XPPrefetcher",
                   "C2, C4",
                   "p-store / store bandwidth (sequential, most threads, largest size)",
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {}};
  const PairedPoint at = paired_bandwidth(c, runs, "i5_store_vs_pstore", "op", "pstore", "store");
  for (const auto& [medium, store] : at.denominator) add_ebr(c, runs, "store", medium, true, store);
  published_grid_ratio(c, pub, "I5", at, 8, "sequential store+clwb / store bandwidth");
  finish(c);
  return c;
}

Classification i6(const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  Classification c{"I6",
                   "Sequential IO faster than random IO",
                   "the CPU and XP prefetchers",
                   "C1, C2*, C3, C4*",
                   "sequential / random read bandwidth, worst access size",
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {}};
  for (const std::string medium : {"pool", "dram"}) {
    auto rs = ok_runs(runs, "i6_read", on(medium));
    auto t = max_param(rs, "threads");
    if (!t) continue;
    std::optional<double> worst;
    std::map<double, std::pair<std::optional<double>, std::optional<double>>> by_size;
    for (const auto* r : rs) {
      if (!num_is("threads", *t)(*r)) continue;
      auto& slot = by_size[param_number(*r, "size").value_or(0)];
      (param_text(*r, "pattern") == "seq" ? slot.first : slot.second) = metric_value(*r, "bandwidth");
    }
    std::optional<double> worst_random;
    for (const auto& [sz, pair] : by_size)
      if (auto q = ratio(pair.first, pair.second); q && (!worst || *q > *worst)) {
        worst = q;
        worst_random = pair.second;
      }
    set_effect(c, medium, worst, model_of(rs, "bandwidth"));
    add_ebr(c, runs, "random_worst", medium, false, worst_random);
  }
  auto worst_published = [&](int seq_row, int rand_row) {
    std::optional<double> worst;
    for (char col = 'B'; col <= 'H'; ++col)
      if (auto q = ratio(pub.number("I6", cell(col, seq_row)), pub.number("I6", cell(col, rand_row)));
          q && (!worst || *q > *worst))
        worst = q;
    return worst;
  };
  c.published_pmem = worst_published(4, 5);
  c.published_dram = worst_published(6, 7);
  c.published_source = published_source("I6", "sequential / random read bandwidth, worst of 64 B-4 KiB, 16 threads");
  finish(c);
  return c;
}

Classification i7(const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  Classification c{"I7",
                   "P-stores are read-modify-write transactions",
                   "the XPBuffer design",
                   "C4",
                   "modelled RWR of repeated full-block p-stores (media reads per media write)",
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {}};
  bool modelled = false;
  for (const std::string medium : {"pool", "dram"}) {
    auto rs = ok_runs(runs, "i7_rewrite", on(medium));
    const std::string flush =
        !ok_runs(runs, "i7_rewrite", both(on(medium), param_is("flush", "ntstore"))).empty() ? "ntstore" : "";
    const Pred same =
        flush.empty() ? param_is("target", "same") : both(param_is("target", "same"), param_is("flush", flush));
    const Pred spread =
        flush.empty() ? param_is("target", "spread") : both(param_is("target", "spread"), param_is("flush", flush));
    if (auto q = ratio(extreme(rs, "latency_p50", false, same), extreme(rs, "latency_p50", false, spread)))
      c.extra.push_back(measured("latency_same_over_spread_" + medium, *q));
    for (const auto* r : rs) {
      if (!same(*r)) continue;
      const Metric* rwr = r->find("rwr");
      const Metric* ewr = r->find("ewr");
      if (rwr != nullptr && rwr->kind == MetricKind::modelled && std::isfinite(rwr->value)) {
        modelled = true;
        // RWR near 1 means a media read for every media write: read-modify-write. The effect is
        // 1 + RWR so that "no reads" sits at 1x and "a read per write" at 2x.
        (medium == "pool" ? c.pool : c.dram) = 1.0 + rwr->value;
        c.extra.push_back(Metric{"rwr_same_" + medium, rwr->value, "ratio", MetricKind::modelled, rwr->origin});
      }
      if (ewr != nullptr && ewr->kind == MetricKind::modelled)
        c.extra.push_back(Metric{"ewr_same_" + medium, ewr->value, "ratio", MetricKind::modelled, ewr->origin});
    }
  }
  if (modelled) {
    c.effect = "1 + RWR of repeated full-block p-stores (modelled: 2x = a media read per media write)";
  } else {
    c.not_applicable_reason =
        "a read-modify-write inside the device shows only in media counters (EWR, RWR); this platform exposes none "
        "and no device model was attached (latency_same_over_spread is printed for reference).";
  }
  if (auto ewr = pub.number("I7", "B13"))
    c.extra.push_back(Metric{"ewr_published", *ewr, "ratio", MetricKind::published,
                             published_source("I7", "EWR of repeated nt-stores to one XPLine")});
  if (auto rwr = pub.number("I7", "B14")) {
    c.extra.push_back(Metric{"rwr_published", *rwr, "ratio", MetricKind::published,
                             published_source("I7", "RWR of repeated nt-stores to one XPLine")});
    c.published_pmem = 1.0 + *rwr;
  }
  c.published_source = published_source("I7", "1 + RWR of repeated nt-stores to one XPLine");
  finish(c);
  return c;
}

Classification i8(const std::vector<RunRecord>& runs, const PublishedSheets&) {
  Classification c{"I8",
                   "Higher load latency after a dirty cache (no flush under eADR)",
                   "dirty-victim write-backs on cache misses",
                   "C1-C4 (eADR platforms)",
                   "median load latency with a dirty cache (eADR) / with a flushed one (ADR)",
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {},
                   {}};
  for (const std::string medium : {"pool", "dram"}) {
    auto rs = ok_runs(runs, "i8_dirty_load", on(medium));
    set_effect(c, medium,
               ratio(extreme(rs, "latency_p50", false, param_is("domain", "eadr")),
                     extreme(rs, "latency_p50", false, param_is("domain", "adr"))),
               model_of(rs, "latency_p50"));
  }
  c.published_source = "";
  finish(c);
  return c;
}

const Classification* find(const std::vector<Classification>& cs, const std::string& id) {
  for (const auto& c : cs)
    if (c.id == id) return &c;
  return nullptr;
}

std::optional<double> max_of(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

}  // namespace

std::vector<Classification> classify(const std::vector<RunRecord>& runs, const PublishedSheets& published,
                                     bool pool_emulated) {
  using Fn = Classification (*)(const std::vector<RunRecord>&, const PublishedSheets&);
  std::vector<Classification> out;
  for (Fn f : {i1, i2, i3, i4, i5, i6, i7, i8}) {
    Classification c = f(runs, published);
    if (pool_emulated) {
      c.pool_emulated = true;
      finish(c);
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Recommendation> recommend(const std::vector<RunRecord>& runs, const std::vector<Classification>& classes) {
  std::vector<Recommendation> out;
  auto effect = [&](const std::string& id, bool pool) -> std::optional<double> {
    const Classification* c = find(classes, id);
    if (c == nullptr) return std::nullopt;
    return pool ? c->pool : c->dram;
  };
  // A recommendation's impact is modelled when any idiosyncrasy or run it rests on is.
  auto models = [&](const std::vector<std::string>& ids, bool pool) {
    for (const auto& id : ids)
      if (const Classification* c = find(classes, id); c != nullptr && !(pool ? c->pool_model : c->dram_model).empty())
        return pool ? c->pool_model : c->dram_model;
    return std::string();
  };
  auto runs_model = [&](const std::string& case_name, const std::string& medium) {
    return model_of(ok_runs(runs, case_name, on(medium)), "bandwidth");
  };
  auto add = [&](std::string id, std::string rule, std::string rec, std::string from, std::string published,
                 std::optional<double> pool, std::optional<double> dram, std::string why) {
    Recommendation r{std::move(id),
                     std::move(rule),
                     std::move(rec),
                     std::move(from),
                     std::move(published),
                     pool,
                     dram,
                     "",
                     "",
                     "",
                     ""};
    if (r.id == "R2") {
      r.pool_model = runs_model("i2_bandwidth", "pool");
      r.dram_model = runs_model("i2_bandwidth", "dram");
    } else if (r.id == "R3") {
      r.pool_model = runs_model("i3_small_writes", "pool");
      r.dram_model = runs_model("i3_small_writes", "dram");
    } else {
      const std::vector<std::string> ids = r.id == "R1"   ? std::vector<std::string>{"I1"}
                                           : r.id == "R4" ? std::vector<std::string>{"I4"}
                                           : r.id == "R5" ? std::vector<std::string>{"I5", "I8"}
                                           : r.id == "R6" ? std::vector<std::string>{"I6", "I3"}
                                                          : std::vector<std::string>{};
      r.pool_model = models(ids, true);
      r.dram_model = models(ids, false);
    }
    r.impact_class = impact_class(pool);
    r.reasoning = std::move(why) + " Impact here: pool " + x(pool) + " (" + r.impact_class + "), DRAM " + x(dram) +
                  ". Published impact ([PMIdioBench] Table 4): " + r.published_impact + ".";
    out.push_back(std::move(r));
  };

  add("R1", "Avoid p-stores", "Eliminate unnecessary stores and/or cache stores in DRAM", "I1, I2", "High (C1-C4)",
      effect("I1", true), effect("I1", false), "A p-store costs this many loads (I1, cached data).");

  // R2: what using every thread for p-stores costs against the best thread count (largest size, pool).
  auto r2 = [&](const std::string& medium) -> std::optional<double> {
    auto rs = ok_runs(runs, "i2_bandwidth", both(on(medium), param_is("op", "pstore")));
    auto size = max_param(rs, "size");
    auto t = max_param(rs, "threads");
    if (!size || !t) return std::nullopt;
    auto best = extreme(rs, "bandwidth", true, num_is("size", *size));
    auto at_max = extreme(rs, "bandwidth", true, both(num_is("size", *size), num_is("threads", *t)));
    return ratio(best, at_max);
  };
  add("R2", "Avoid concurrent access to PMEM for p-stores", "Limit number of threads writing to PMEM", "I2",
      "High (C4), N/A (C1-C3)", r2("pool"), r2("dram"),
      "Best p-store bandwidth over any thread count / the bandwidth with every CPU writing (I2, largest access).");

  // R3: random p-store bandwidth of the largest small size over the smallest (I3).
  auto r3 = [&](const std::string& medium) -> std::optional<double> {
    auto rs = ok_runs(runs, "i3_small_writes", both(on(medium), param_is("pattern", "rand")));
    auto t = max_param(rs, "threads");
    auto smallest = min_param(rs, "size");
    if (!t || !smallest) return std::nullopt;
    return ratio(extreme(rs, "bandwidth", true, num_is("threads", *t)),
                 extreme(rs, "bandwidth", true, both(num_is("threads", *t), num_is("size", *smallest))));
  };
  add("R3", "Avoid small-sized IO", "Reduce small-sized IOs and use store+cache-flush, if unavoidable", "I3",
      "High (C3,C4), Moderate (C1,C2)", r3("pool"), r3("dram"),
      "Random p-store bandwidth at the best of 64-512 B / at the smallest (I3).");

  add("R4", "Limit NUMA access", "Put data structures with higher EBR on remote NUMA PMEM", "I4",
      "High (C2,C4), Moderate (C1,C3)", effect("I4", true), effect("I4", false),
      find(classes, "I4") && !find(classes, "I4")->pool ? "Not measured: " + find(classes, "I4")->not_applicable_reason
                                                        : "Local / remote p-store bandwidth (I4).");

  add("R5", "Use p-stores for non-critical data in eADR mode", "Flush data with low temporal locality from cache",
      "I5, I8", "High (C2,C4), Low (C1,C3)", max_of(effect("I5", true), effect("I8", true)),
      max_of(effect("I5", false), effect("I8", false)),
      "The larger of p-store / store bandwidth (I5) and dirty / flushed-cache load latency (I8).");

  add("R6", "Avoid random IO", "Use techniques like write buffering and log structuring", "I6, I3",
      "High (C2,C4), Moderate (C1,C3)", max_of(effect("I6", true), effect("I3", true)),
      max_of(effect("I6", false), effect("I3", false)),
      "The larger of sequential / random read (I6) and write (I3) bandwidth.");

  add("R7", "Avoid transactions", "Use techniques like per-thread logging or a dirty-bit design",
      "lock-free study ([PMIdioBench] §6)", "High (C1-C4)", std::nullopt, std::nullopt,
      "Not measured by this suite: R7 comes from the lock-free ring buffer and linked list study of "
      "[PMIdioBench], which the lockfree suite runs (pmlab run lockfree: TX versus TX-free rings, TLog versus "
      "SOFT and Link-free sets).");
  return out;
}

std::vector<RunRecord> classification_records(const std::vector<Classification>& classes) {
  std::vector<RunRecord> out;
  for (const auto& c : classes) {
    RunRecord r;
    r.case_name = "classification";
    r.name = std::string(kSuite) + ".classification/idiosyncrasy:" + c.id;
    r.params = {{"idiosyncrasy", c.id}};
    auto value = [](std::optional<double> v) { return v ? *v : std::nan(""); };
    r.set(c.pool_model.empty() ? measured("effect_pool", value(c.pool))
                               : Metric{"effect_pool", value(c.pool), "ratio", MetricKind::modelled, c.pool_model});
    r.set(c.dram_model.empty() ? measured("effect_dram", value(c.dram))
                               : Metric{"effect_dram", value(c.dram), "ratio", MetricKind::modelled, c.dram_model});
    // An effect that rests on a model's numbers is modelled, not measured.
    for (const auto& m : c.extra)
      if (m.kind == MetricKind::modelled && (m.name.rfind("rwr_same_", 0) == 0)) {
        const bool pool = m.name.ends_with("pool");
        r.set(Metric{pool ? "effect_pool" : "effect_dram", 1.0 + m.value, "ratio", MetricKind::modelled, m.origin});
      }
    if (c.published_pmem)
      r.set(Metric{"effect_published_pmem", *c.published_pmem, "ratio", MetricKind::published, c.published_source});
    if (c.published_dram)
      r.set(Metric{"effect_published_dram", *c.published_dram, "ratio", MetricKind::published, c.published_source});
    for (const auto& m : c.extra) r.set(m);
    r.notes = {{"idiosyncrasy", c.idiosyncrasy},
               {"effect", c.effect},
               {"verdict", to_string(c.decision.verdict)},
               {"pmem_specific", c.decision.pmem_specific ? (*c.decision.pmem_specific ? "yes" : "no") : "unknown"},
               {"root_cause", c.root_cause},
               {"applicability", c.applicability},
               {"reasoning", c.reasoning}};
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<RunRecord> recommendation_records(const std::vector<Recommendation>& recs) {
  std::vector<RunRecord> out;
  for (const auto& rec : recs) {
    RunRecord r;
    r.case_name = "recommendation";
    r.name = std::string(kSuite) + ".recommendation/rule:" + rec.id;
    r.params = {{"rule", rec.id}};
    const double pool = rec.impact_pool ? *rec.impact_pool : std::nan("");
    const double dram = rec.impact_dram ? *rec.impact_dram : std::nan("");
    r.set(rec.pool_model.empty() ? measured("impact_pool", pool)
                                 : Metric{"impact_pool", pool, "ratio", MetricKind::modelled, rec.pool_model});
    r.set(rec.dram_model.empty() ? measured("impact_dram", dram)
                                 : Metric{"impact_dram", dram, "ratio", MetricKind::modelled, rec.dram_model});
    r.notes = {{"rule", rec.rule},
               {"recommendation", rec.recommendation},
               {"follows_from", rec.follows_from},
               {"impact_class", rec.impact_class},
               {"published_impact", rec.published_impact},
               {"published_source", "[PMIdioBench] Table 4 (Gugnani et al., PVLDB 14(4) 2021)"},
               {"reasoning", rec.reasoning}};
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace pmlab::suites::idio
