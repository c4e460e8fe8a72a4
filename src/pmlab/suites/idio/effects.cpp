#include "pmlab/suites/idio/effects.hpp"

#include <cmath>
#include <map>

#include "pmlab/record/query.hpp"
#include "pmlab/suites/idio/selection.hpp"

namespace pmlab::suites::idio {

using record::Metric;
using record::metric_value;
using record::MetricKind;
using record::param_text;
using record::RunRecord;

namespace {

// The media an effect is measured on: the tier judged (the pool, or a NUMA node) and local DRAM beside it.
std::vector<std::string> media_of(const Classification& c) { return {c.tier, "dram"}; }

// A medium as the end of a metric's name: "pool", "dram", "numa_2".
std::string metric_suffix(std::string medium) {
  for (char& ch : medium)
    if (ch == ':') ch = '_';
  return medium;
}

// The cells of [PMIdioBench]'s artifact (data/reference/pmidiobench/pmem-idiosyncrasies.txt) the published
// effects are read from, by sheet.

// I1, row 13: median latency at LLC hit ratio 1 with 8 threads.
struct LoadAndPstoreCells {
  const char* load;
  const char* pstore;
};
constexpr LoadAndPstoreCells kI1PmemLatency{.load = "B13", .pstore = "C13"};
constexpr LoadAndPstoreCells kI1DramLatency{.load = "D13", .pstore = "E13"};

// I2: bandwidth over the access sizes in columns D-J; a load row, then the p-store rows (store+clwb,
// nt-store).
struct LoadAndPstoreRows {
  int load;
  int first_pstore, last_pstore;
};
constexpr LoadAndPstoreRows kI2PmemBandwidth{.load = 4, .first_pstore = 5, .last_pstore = 6};
constexpr LoadAndPstoreRows kI2DramBandwidth{.load = 7, .first_pstore = 8, .last_pstore = 9};
constexpr char kI2FirstSizeColumn = 'D', kI2LastSizeColumn = 'J';

// I3: PMEM write bandwidth of 64 B accesses at 16 threads, and the EWR of the random ones.
constexpr const char* kI3SequentialWrite64 = "B4";
constexpr const char* kI3RandomWrite64 = "B5";
constexpr const char* kI3RandomWrite64Ewr = "B11";

// I4 and I5: bandwidth grids (MiB/s), rows by thread count, columns by access size, PMEM from column B and
// DRAM from column L. The grid of the ratio's numerator (I4 local, I5 store+clwb) starts at row 28, its
// denominator's (I4 remote, I5 store) at row 49.
const std::vector<int> kGridThreads = {1, 2, 4, 8, 16, 28};
const std::vector<int> kGridSizes = {64, 128, 256, 512, 1024, 2048, 4096};
constexpr char kGridPmemColumn = 'B', kGridDramColumn = 'L';
constexpr int kGridNumeratorRow = 28, kGridDenominatorRow = 49;

// I6: read bandwidth at 16 threads over the sizes 64 B-4 KiB in columns B-H.
struct SequentialAndRandomRows {
  int sequential, random;
};
constexpr SequentialAndRandomRows kI6PmemRead{.sequential = 4, .random = 5};
constexpr SequentialAndRandomRows kI6DramRead{.sequential = 6, .random = 7};
constexpr char kI6FirstSizeColumn = 'B', kI6LastSizeColumn = 'H';

// I7: EWR and RWR of repeated nt-stores to one XPLine.
constexpr const char* kI7Ewr = "B13";
constexpr const char* kI7Rwr = "B14";

std::string cell(char column, int row) { return std::string(1, column) + std::to_string(row); }

// The largest number in rows [first_row, last_row] x columns [first_column, last_column] of `sheet`.
std::optional<double> published_max(const PublishedSheets& pub, const std::string& sheet, int first_row, int last_row,
                                    char first_column, char last_column) {
  std::optional<double> best;
  for (int row = first_row; row <= last_row; ++row)
    for (char column = first_column; column <= last_column; ++column)
      best = max_of(best, pub.number(sheet, cell(column, row)));
  return best;
}

// The grid point nearest ours from below (the paper ran up to 28 threads and 4 KiB).
size_t grid_index(const std::vector<int>& grid, double ours) {
  size_t idx = 0;
  for (size_t i = 0; i < grid.size(); ++i)
    if (grid[i] <= ours) idx = i;
  return idx;
}

std::optional<double> grid_value(const PublishedSheets& pub, const std::string& sheet, int first_row, bool pmem,
                                 size_t thread_idx, size_t size_idx) {
  const char column = static_cast<char>((pmem ? kGridPmemColumn : kGridDramColumn) + size_idx);
  return pub.number(sheet, cell(column, first_row + static_cast<int>(thread_idx)));
}

// EBR ([PMIdioBench] §3): achieved bandwidth / the peak bandwidth of the same medium and direction, the peak
// being the best any run of this suite reached. Technology-independent, and measured.
enum class Direction { reads, writes };
std::optional<double> peak_bandwidth(const std::vector<RunRecord>& runs, const std::string& medium,
                                     Direction direction) {
  std::optional<double> best;
  for (const auto& r : runs) {
    if (r.status != record::RunStatus::ok || param_text(r, "medium") != medium) continue;
    const std::string op = param_text(r, "op");
    const bool reads = r.case_name == "i6_read" || (r.case_name == "i2_bandwidth" && op == "load");
    const bool writes = r.case_name == "i3_small_writes" || r.case_name == "i4_numa" ||
                        r.case_name == "i5_store_vs_pstore" || (r.case_name == "i2_bandwidth" && op != "load");
    if (direction == Direction::writes ? writes : reads) best = max_of(best, metric_value(r, "bandwidth"));
  }
  return best;
}

void add_ebr(Classification& c, const std::vector<RunRecord>& runs, const std::string& name, const std::string& medium,
             Direction direction, std::optional<double> achieved) {
  if (auto ebr = ratio(achieved, peak_bandwidth(runs, medium, direction)))
    c.extra.push_back(measured("ebr_" + name + "_" + metric_suffix(medium), *ebr));
}

// Records the effect measured on one medium and the model behind it (empty when measured).
void set_effect(Classification& c, const std::string& medium, std::optional<double> effect, std::string model) {
  (medium == c.tier ? c.pool : c.dram) = effect;
  (medium == c.tier ? c.pool_model : c.dram_model) = std::move(model);
}

// I4 and I5 compare two values of one parameter (`key` = `numerator` over `denominator`) for sequential
// p-stores at the most threads and the largest size, on each medium, and against the published grid cell
// nearest that point.
struct PairedPoint {
  std::optional<double> threads, size;
  std::map<std::string, std::optional<double>> denominator;  // bandwidth, by medium, for EBR
};

PairedPoint paired_bandwidth(Classification& c, const std::vector<RunRecord>& runs, const std::string& case_name,
                             const std::string& key, const std::string& numerator, const std::string& denominator) {
  PairedPoint point;
  for (const std::string& medium : media_of(c)) {
    auto rs = ok_runs(runs, case_name, both(on_medium(medium), param_is("pattern", "seq")));
    auto threads = max_param(rs, "threads");
    auto size = max_param(rs, "size");
    if (!threads || !size) continue;
    point.threads = threads;
    point.size = size;
    const RunFilter at = both(number_is("threads", *threads), number_is("size", *size));
    const auto below = max_metric(rs, "bandwidth", both(at, param_is(key, denominator)));
    const auto above = max_metric(rs, "bandwidth", both(at, param_is(key, numerator)));
    set_effect(c, medium, ratio(above, below), model_of(rs, "bandwidth"));
    point.denominator[medium] = below;
  }
  return point;
}

// The published numerator / denominator grid ratio of `sheet` at the grid point nearest ours from below
// (`default_threads` when no run gave a thread count).
void published_grid_ratio(Classification& c, const PublishedSheets& pub, const std::string& sheet,
                          const PairedPoint& at, int default_threads, const std::string& what) {
  const size_t ti = grid_index(kGridThreads, at.threads.value_or(default_threads));
  const size_t si = grid_index(kGridSizes, at.size.value_or(kGridSizes.back()));
  auto grid_ratio = [&](bool pmem) {
    return ratio(grid_value(pub, sheet, kGridNumeratorRow, pmem, ti, si),
                 grid_value(pub, sheet, kGridDenominatorRow, pmem, ti, si));
  };
  c.published_pmem = grid_ratio(true);
  c.published_dram = grid_ratio(false);
  c.published_source = published_source(
      sheet, what + " at " + std::to_string(kGridThreads[ti]) + " threads, " + std::to_string(kGridSizes[si]) + " B");
}

Metric published_metric(std::string name, double value, const std::string& sheet, const std::string& what) {
  return Metric{std::move(name), value, "ratio", MetricKind::published, published_source(sheet, what)};
}

}  // namespace

void measure_latency_asymmetry(Classification& c, const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  for (const std::string& medium : media_of(c)) {
    auto rs = ok_runs(runs, "i1_latency", on_medium(medium));
    auto most_hits = max_param(rs, "hit_ratio");
    auto threads = min_param(rs, "threads");
    if (!most_hits || !threads) continue;
    const RunFilter loads = both(number_is("threads", *threads), param_is("op", "load"));
    const RunFilter pstores = both(number_is("threads", *threads), param_is("op", "pstore"));
    const RunFilter at = number_is("hit_ratio", *most_hits);
    auto load = min_metric(rs, "latency_p50", both(at, loads));
    auto pstore = min_metric(rs, "latency_p50", both(at, pstores));  // the cheapest flush
    set_effect(c, medium, ratio(pstore, load), model_of(rs, "latency_p50"));
    if (auto fewest_hits = min_param(rs, "hit_ratio"); fewest_hits && *fewest_hits < *most_hits)
      if (auto r = ratio(min_metric(rs, "latency_p50", both(number_is("hit_ratio", *fewest_hits), loads)), load))
        c.extra.push_back(measured("load_miss_over_hit_" + metric_suffix(medium), *r));
    if (auto h = min_metric(rs, "hit_ratio_measured", both(at, loads)))
      c.extra.push_back(measured("hit_ratio_measured_at_max_f_" + metric_suffix(medium), *h));
  }
  c.published_pmem = ratio(pub.number("I1", kI1PmemLatency.pstore), pub.number("I1", kI1PmemLatency.load));
  c.published_dram = ratio(pub.number("I1", kI1DramLatency.pstore), pub.number("I1", kI1DramLatency.load));
  c.published_source = published_source("I1", "p-store / load latency at hit ratio 1, 8 threads");
}

void measure_bandwidth_asymmetry(Classification& c, const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  for (const std::string& medium : media_of(c)) {
    auto rs = ok_runs(runs, "i2_bandwidth", on_medium(medium));
    auto load = max_metric(rs, "bandwidth", param_is("op", "load"));
    auto pstore = max_metric(rs, "bandwidth", param_is("op", "pstore"));
    set_effect(c, medium, ratio(load, pstore), model_of(rs, "bandwidth"));
    if (load) c.extra.push_back(measured("peak_load_bandwidth_" + metric_suffix(medium), *load, "MiB/s"));
    if (pstore) c.extra.push_back(measured("peak_pstore_bandwidth_" + metric_suffix(medium), *pstore, "MiB/s"));
  }
  auto peak = [&](int first_row, int last_row) {
    return published_max(pub, "I2", first_row, last_row, kI2FirstSizeColumn, kI2LastSizeColumn);
  };
  auto load_over_pstore = [&](const LoadAndPstoreRows& rows) {
    return ratio(peak(rows.load, rows.load), peak(rows.first_pstore, rows.last_pstore));
  };
  c.published_pmem = load_over_pstore(kI2PmemBandwidth);
  c.published_dram = load_over_pstore(kI2DramBandwidth);
  c.published_source =
      published_source("I2", "peak load / peak p-store (store+clwb or nt-store) bandwidth, fio libpmem");
}

void measure_small_random_writes(Classification& c, const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  for (const std::string& medium : media_of(c)) {
    auto rs = ok_runs(runs, "i3_small_writes", on_medium(medium));
    auto size = min_param(rs, "size");
    auto threads = max_param(rs, "threads");
    if (!size || !threads) continue;
    const RunFilter at = both(number_is("size", *size), number_is("threads", *threads));
    const RunFilter random = both(at, param_is("pattern", "rand"));
    auto sequential_bandwidth = max_metric(rs, "bandwidth", both(at, param_is("pattern", "seq")));
    auto random_bandwidth = max_metric(rs, "bandwidth", random);
    set_effect(c, medium, ratio(sequential_bandwidth, random_bandwidth), model_of(rs, "bandwidth"));
    add_ebr(c, runs, "random_smallest", medium, Direction::writes, random_bandwidth);
    for (const auto* r : rs)
      if (const Metric* ewr = r->find("ewr"); random(*r) && ewr != nullptr && ewr->kind == MetricKind::modelled)
        c.extra.push_back(Metric{"ewr_random_smallest_" + metric_suffix(medium), ewr->value, "ratio",
                                 MetricKind::modelled, ewr->origin});
  }
  c.published_pmem = ratio(pub.number("I3", kI3SequentialWrite64), pub.number("I3", kI3RandomWrite64));
  if (auto ewr = pub.number("I3", kI3RandomWrite64Ewr))
    c.extra.push_back(published_metric("ewr_random_64_published", *ewr, "I3", "EWR of 64 B random writes, 16 threads"));
  c.published_source = published_source("I3", "64 B sequential / random write bandwidth, 16 threads");
}

void measure_remote_numa(Classification& c, const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  const PairedPoint at = paired_bandwidth(c, runs, "i4_numa", "locality", "local", "remote");
  if (!c.pool) {
    if (auto why = skip_reason(runs, "i4_numa")) {
      c.not_applicable = NotApplicable::runs_skipped;
      c.skip_reason = *why;
    } else {
      c.not_applicable = NotApplicable::no_paired_runs;
    }
  }
  published_grid_ratio(c, pub, "I4", at, 28, "local / remote sequential store+clwb bandwidth");
}

void measure_store_vs_pstore(Classification& c, const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  const PairedPoint at = paired_bandwidth(c, runs, "i5_store_vs_pstore", "op", "pstore", "store");
  for (const auto& [medium, store] : at.denominator) add_ebr(c, runs, "store", medium, Direction::writes, store);
  published_grid_ratio(c, pub, "I5", at, 8, "sequential store+clwb / store bandwidth");
}

void measure_seq_vs_random_read(Classification& c, const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  for (const std::string& medium : media_of(c)) {
    auto rs = ok_runs(runs, "i6_read", on_medium(medium));
    auto threads = max_param(rs, "threads");
    if (!threads) continue;
    struct Bandwidths {
      std::optional<double> sequential, random;
    };
    std::map<double, Bandwidths> by_size;
    for (const auto* r : rs) {
      if (!number_is("threads", *threads)(*r)) continue;
      auto& at_size = by_size[record::param_number(*r, "size").value_or(0)];
      (param_text(*r, "pattern") == "seq" ? at_size.sequential : at_size.random) = metric_value(*r, "bandwidth");
    }
    std::optional<double> worst, worst_random;
    for (const auto& [size, bandwidth] : by_size)
      if (auto q = ratio(bandwidth.sequential, bandwidth.random); q && (!worst || *q > *worst)) {
        worst = q;
        worst_random = bandwidth.random;
      }
    set_effect(c, medium, worst, model_of(rs, "bandwidth"));
    add_ebr(c, runs, "random_worst", medium, Direction::reads, worst_random);
  }
  auto worst_published = [&](const SequentialAndRandomRows& rows) {
    std::optional<double> worst;
    for (char column = kI6FirstSizeColumn; column <= kI6LastSizeColumn; ++column)
      worst = max_of(
          worst, ratio(pub.number("I6", cell(column, rows.sequential)), pub.number("I6", cell(column, rows.random))));
    return worst;
  };
  c.published_pmem = worst_published(kI6PmemRead);
  c.published_dram = worst_published(kI6DramRead);
  c.published_source = published_source("I6", "sequential / random read bandwidth, worst of 64 B-4 KiB, 16 threads");
}

void measure_read_modify_write(Classification& c, const std::vector<RunRecord>& runs, const PublishedSheets& pub) {
  bool modelled = false;
  for (const std::string& medium : media_of(c)) {
    const bool ntstore = !ok_runs(runs, "i7_rewrite", both(on_medium(medium), param_is("flush", "ntstore"))).empty();
    auto target = [&](const std::string& where) {
      return ntstore ? both(param_is("target", where), param_is("flush", "ntstore")) : param_is("target", where);
    };
    const RunFilter same = target("same");
    auto rs = ok_runs(runs, "i7_rewrite", on_medium(medium));
    if (auto q = ratio(min_metric(rs, "latency_p50", same), min_metric(rs, "latency_p50", target("spread"))))
      c.extra.push_back(measured("latency_same_over_spread_" + metric_suffix(medium), *q));
    for (const auto* r : rs) {
      if (!same(*r)) continue;
      const Metric* rwr = r->find("rwr");
      const Metric* ewr = r->find("ewr");
      if (rwr != nullptr && rwr->kind == MetricKind::modelled && std::isfinite(rwr->value)) {
        modelled = true;
        // RWR near 1 means a media read for every media write: read-modify-write. The effect is
        // 1 + RWR so that "no reads" sits at 1x and "a read per write" at 2x.
        set_effect(c, medium, 1.0 + rwr->value, rwr->origin);
        c.extra.push_back(
            Metric{"rwr_same_" + metric_suffix(medium), rwr->value, "ratio", MetricKind::modelled, rwr->origin});
      }
      if (ewr != nullptr && ewr->kind == MetricKind::modelled)
        c.extra.push_back(
            Metric{"ewr_same_" + metric_suffix(medium), ewr->value, "ratio", MetricKind::modelled, ewr->origin});
    }
  }
  // A read-modify-write inside the device shows only in media counters (EWR, RWR), which only a device
  // model gives here; latency_same_over_spread is recorded for reference.
  if (modelled) {
    c.effect = "1 + RWR of repeated full-block p-stores (modelled: 2x = a media read per media write)";
  } else {
    c.not_applicable = NotApplicable::no_media_counters;
  }
  if (auto ewr = pub.number("I7", kI7Ewr))
    c.extra.push_back(published_metric("ewr_published", *ewr, "I7", "EWR of repeated nt-stores to one XPLine"));
  if (auto rwr = pub.number("I7", kI7Rwr)) {
    c.extra.push_back(published_metric("rwr_published", *rwr, "I7", "RWR of repeated nt-stores to one XPLine"));
    c.published_pmem = 1.0 + *rwr;
  }
  c.published_source = published_source("I7", "1 + RWR of repeated nt-stores to one XPLine");
}

void measure_dirty_cache_load(Classification& c, const std::vector<RunRecord>& runs, const PublishedSheets&) {
  for (const std::string& medium : media_of(c)) {
    auto rs = ok_runs(runs, "i8_dirty_load", on_medium(medium));
    set_effect(c, medium,
               ratio(min_metric(rs, "latency_p50", param_is("domain", "eadr")),
                     min_metric(rs, "latency_p50", param_is("domain", "adr"))),
               model_of(rs, "latency_p50"));
  }
}

namespace {
// What a recommendation that chooses parameter `chosen` well gains: the best bandwidth of `rs` with `fixed`
// at `at`, over the bandwidth there with `chosen` left at `left`.
std::optional<double> bandwidth_gain(const RunSet& rs, const std::string& fixed, std::optional<double> at,
                                     const std::string& chosen, std::optional<double> left) {
  if (!at || !left) return std::nullopt;
  return ratio(max_metric(rs, "bandwidth", number_is(fixed, *at)),
               max_metric(rs, "bandwidth", both(number_is(fixed, *at), number_is(chosen, *left))));
}
}  // namespace

std::optional<double> thread_limit_gain(const std::vector<RunRecord>& runs, const std::string& medium) {
  auto rs = ok_runs(runs, "i2_bandwidth", both(on_medium(medium), param_is("op", "pstore")));
  return bandwidth_gain(rs, "size", max_param(rs, "size"), "threads", max_param(rs, "threads"));
}

std::optional<double> larger_write_gain(const std::vector<RunRecord>& runs, const std::string& medium) {
  auto rs = ok_runs(runs, "i3_small_writes", both(on_medium(medium), param_is("pattern", "rand")));
  return bandwidth_gain(rs, "threads", max_param(rs, "threads"), "size", min_param(rs, "size"));
}

}  // namespace pmlab::suites::idio
