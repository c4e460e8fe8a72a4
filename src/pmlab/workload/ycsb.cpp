#include "pmlab/workload/ycsb.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/workload/hotspot.hpp"
#include "pmlab/workload/latest.hpp"
#include "pmlab/workload/random.hpp"
#include "pmlab/workload/scrambled_zipfian.hpp"
#include "pmlab/workload/uniform.hpp"

namespace pmlab::workload {

namespace {
constexpr auto kOpTypes = enum_names<OpType>("operation", {{OpType::read, "read"},
                                                           {OpType::update, "update"},
                                                           {OpType::insert, "insert"},
                                                           {OpType::scan, "scan"},
                                                           {OpType::read_modify_write, "read-modify-write"}});
constexpr auto kDistributions = enum_names<Distribution>("request distribution", {{Distribution::uniform, "uniform"},
                                                                                  {Distribution::zipfian, "zipfian"},
                                                                                  {Distribution::latest, "latest"},
                                                                                  {Distribution::hotspot, "hotspot"}});
}  // namespace

const char* to_string(OpType t) noexcept { return kOpTypes.name(t); }
const char* to_string(Distribution d) noexcept { return kDistributions.name(d); }
Result<Distribution> parse_distribution(std::string_view text) { return kDistributions.parse(text); }

namespace {

WorkloadSpec mix(std::string name, double r, double u, double i, double s, double m, Distribution d) {
  WorkloadSpec w;
  w.name = std::move(name);
  w.read = r;
  w.update = u;
  w.insert = i;
  w.scan = s;
  w.read_modify_write = m;
  w.distribution = d;
  return w;
}

std::optional<double> parse_percent(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !(v >= 0 && v <= 100)) return std::nullopt;
  return v / 100.0;
}

}  // namespace

Result<WorkloadSpec> workload_named(std::string_view name) {
  using D = Distribution;
  // YCSB 0.17's workloads/workloada .. workloadf.
  if (name == "a") return mix("a", 0.5, 0.5, 0, 0, 0, D::zipfian);
  if (name == "b") return mix("b", 0.95, 0.05, 0, 0, 0, D::zipfian);
  if (name == "c") return mix("c", 1.0, 0, 0, 0, 0, D::zipfian);
  if (name == "d") return mix("d", 0.95, 0, 0.05, 0, 0, D::latest);
  if (name == "e") return mix("e", 0, 0, 0.05, 0.95, 0, D::zipfian);
  if (name == "f") return mix("f", 0.5, 0, 0, 0, 0.5, D::zipfian);
  if (name == "write-only") return mix("write-only", 0, 1.0, 0, 0, 0, D::zipfian);
  if (name.starts_with("mix:")) {
    double p[5];
    std::string_view rest = name.substr(4);
    for (int k = 0; k < 5; ++k) {
      const size_t slash = rest.find('/');
      if ((k < 4) != (slash != std::string_view::npos)) break;
      const auto v = parse_percent(rest.substr(0, slash));
      if (!v) break;
      p[k] = *v;
      if (k == 4) {
        WorkloadSpec w = mix(std::string(name), p[0], p[1], p[2], p[3], p[4], D::zipfian);
        if (Status s = validate(w); !s) return s;
        return w;
      }
      rest = rest.substr(slash + 1);
    }
    return error(Errc::invalid_argument, "custom workload '" + std::string(name) +
                                             "' must be mix:R/U/I/S/M, five percentages of "
                                             "read/update/insert/scan/read-modify-write");
  }
  return error(Errc::invalid_argument,
               "unknown workload '" + std::string(name) + "' (a|b|c|d|e|f|write-only|mix:R/U/I/S/M)");
}

Status validate(const WorkloadSpec& w) {
  const double total = w.read + w.update + w.insert + w.scan + w.read_modify_write;
  for (double p : {w.read, w.update, w.insert, w.scan, w.read_modify_write})
    if (!(p >= 0)) return error(Errc::invalid_argument, "workload " + w.name + ": proportions must be >= 0");
  if (!(total > 0))
    return error(Errc::invalid_argument, "workload " + w.name + ": no operations (proportions sum to 0)");
  if (w.scan > 0 && w.max_scan_length == 0)
    return error(Errc::invalid_argument, "workload " + w.name + ": scans need max_scan_length >= 1");
  if (!(w.hotspot_data_fraction >= 0 && w.hotspot_data_fraction <= 1 && w.hotspot_op_fraction >= 0 &&
        w.hotspot_op_fraction <= 1))
    return error(Errc::invalid_argument, "workload " + w.name + ": hotspot fractions must lie in [0, 1]");
  return Status::success();
}

uint64_t KeySpace::key_of(uint64_t record) const noexcept { return hashed ? fnv_hash64(record) : record; }

std::vector<Op> load_ops(const KeySpace& keys, int thread, int threads) {
  std::vector<Op> ops;
  const auto t = static_cast<uint64_t>(thread), n = static_cast<uint64_t>(threads);
  ops.reserve(keys.records / n + 1);
  for (uint64_t r = t; r < keys.records; r += n) ops.push_back(Op{OpType::insert, 0, r, keys.key_of(r)});
  return ops;
}

uint64_t expected_new_keys(const WorkloadSpec& w, uint64_t count, int threads) {
  return static_cast<uint64_t>(w.insert * static_cast<double>(count * static_cast<uint64_t>(threads)) * 2.0);
}

uint64_t records_after_run(const WorkloadSpec& w, const KeySpace& keys, uint64_t count, int threads) {
  if (w.insert <= 0) return keys.records;
  return keys.records + count * static_cast<uint64_t>(threads);
}

std::vector<Op> run_ops(const WorkloadSpec& w, const KeySpace& keys, uint64_t count, uint64_t seed, int thread,
                        int threads) {
  uint64_t mixed = seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<uint64_t>(thread) + 1));
  Random rng(splitmix64(mixed));
  const double total = w.read + w.update + w.insert + w.scan + w.read_modify_write;
  const double cut_read = w.read / total, cut_update = cut_read + w.update / total,
               cut_insert = cut_update + w.insert / total, cut_scan = cut_insert + w.scan / total;

  const uint64_t records = std::max<uint64_t>(keys.records, 1);
  const UniformGenerator uniform(0, records - 1);
  const HotspotGenerator hotspot(0, records - 1, w.hotspot_data_fraction, w.hotspot_op_fraction);
  // CoreWorkload's bounds: insertstart .. insertstart + insertcount + expectednewkeys, both inclusive.
  const ScrambledZipfianGenerator zipfian(0, records + expected_new_keys(w, count, threads));
  LatestGenerator latest(records - 1);
  const UniformGenerator scan_length(1, std::max<uint32_t>(w.max_scan_length, 1));

  uint64_t next_insert = keys.records + static_cast<uint64_t>(thread);
  uint64_t last_visible = records - 1;  // the newest record this thread knows exists
  auto choose = [&]() -> uint64_t {
    switch (w.distribution) {
      case Distribution::uniform: return uniform.next(rng);
      case Distribution::hotspot: return hotspot.next(rng);
      case Distribution::latest: return latest.next(rng, last_visible);
      case Distribution::zipfian:
        // As YCSB: a draw beyond the records inserted so far is drawn again.
        for (;;)
          if (const uint64_t r = zipfian.next(rng); r <= last_visible) return r;
    }
    return 0;
  };

  std::vector<Op> ops;
  ops.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const double u = rng.next_double();
    Op op{};
    if (u < cut_read) {
      op.type = OpType::read;
    } else if (u < cut_update) {
      op.type = OpType::update;
    } else if (u < cut_insert) {
      op.type = OpType::insert;
    } else if (u < cut_scan) {
      op.type = OpType::scan;
    } else {
      op.type = OpType::read_modify_write;
    }
    if (op.type == OpType::insert) {
      op.record = next_insert;
      last_visible = next_insert;
      next_insert += static_cast<uint64_t>(threads);
    } else {
      op.record = choose();
      if (op.type == OpType::scan) op.scan_length = static_cast<uint32_t>(scan_length.next(rng));
    }
    op.key = keys.key_of(op.record);
    ops.push_back(op);
  }
  return ops;
}

int operation_types(const WorkloadSpec& s) noexcept {
  return (s.read > 0) + (s.update > 0) + (s.insert > 0) + (s.scan > 0) + (s.read_modify_write > 0);
}

std::vector<Op> with_types_spread(const std::vector<Op>& ops) {
  constexpr size_t kTypes = static_cast<size_t>(OpType::read_modify_write) + 1;
  std::array<std::vector<const Op*>, kTypes> by_type;
  for (const Op& op : ops) by_type[static_cast<size_t>(op.type)].push_back(&op);
  std::array<size_t, kTypes> placed{};
  const uint64_t n = ops.size();
  if (n >= (1ULL << 31)) return ops;  // beyond the exact range: left as generated
  std::vector<Op> spread;
  spread.reserve(ops.size());
  for (uint64_t k = 0; k < n; ++k) {
    // The type furthest behind its share of the first k + 1 places (in units of 1/n): deficit
    // (k + 1) * count - n * placed, exact in 64-bit integers for streams under 2^31 operations; ties go to
    // the lower type.
    size_t best = kTypes;
    int64_t best_deficit = 0;
    for (size_t t = 0; t < kTypes; ++t) {
      if (placed[t] == by_type[t].size()) continue;
      const int64_t deficit = static_cast<int64_t>((k + 1) * by_type[t].size()) - static_cast<int64_t>(n * placed[t]);
      if (best == kTypes || deficit > best_deficit) {
        best = t;
        best_deficit = deficit;
      }
    }
    spread.push_back(*by_type[best][placed[best]++]);
  }
  return spread;
}

}  // namespace pmlab::workload
