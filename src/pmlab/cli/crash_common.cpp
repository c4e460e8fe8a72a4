#include "pmlab/cli/crash_common.hpp"

#include <algorithm>
#include <cstdio>

#include "pmlab/bench/context.hpp"
#include "pmlab/bench/results.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/cli/commands.hpp"
#include "pmlab/common/hash.hpp"
#include "pmlab/persist/persister.hpp"
#include "pmlab/platform/cpu.hpp"

namespace pmlab::cli {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {
// Part of an option's value (K of --shard K/N): a whole number in [min, max], or a usage error naming it.
Result<uint64_t> count_option(const char* name, const std::string& text, uint64_t min, uint64_t max = UINT64_MAX) {
  auto v = parse_count(text, min, max);
  if (!v) return error(Errc::invalid_argument, std::string(name) + ": " + v.status().message());
  return v;
}
}  // namespace

Result<std::vector<crash::Granularity>> parse_granularities(const std::string& text) {
  std::vector<crash::Granularity> out;
  for (const std::string& name : split_commas(text)) {
    auto g = crash::parse_granularity(name);
    if (!g)
      return error(Errc::invalid_argument,
                   "--granularity takes line, word and byte, comma-separated, not '" + text + "'");
    if (std::find(out.begin(), out.end(), *g) == out.end()) out.push_back(*g);
  }
  return out;
}

Result<std::vector<persist::Domain>> parse_domains(const std::vector<std::string>& names) {
  std::vector<persist::Domain> out;
  for (const auto& d : names) {
    auto parsed = persist::parse_domain(d);
    if (!parsed) return parsed.status();
    if (*parsed == persist::Domain::none)
      return error(Errc::invalid_argument, "--domain none keeps nothing durable: there is nothing to crash-test");
    if (std::find(out.begin(), out.end(), *parsed) == out.end()) out.push_back(*parsed);
  }
  return out;
}

Result<std::pair<uint64_t, uint64_t>> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  auto k = count_option("--shard K/N: K", slash == std::string::npos ? text : text.substr(0, slash), 1);
  auto n = count_option("--shard K/N: N", slash == std::string::npos ? "" : text.substr(slash + 1), 1, 1u << 20);
  if (!k || !n || *k > *n)
    return error(Errc::invalid_argument, "--shard takes K/N with 1 <= K <= N (e.g. 3/8), not '" + text + "'");
  return std::make_pair(*k - 1, *n);
}

Result<std::pair<uint64_t, uint64_t>> parse_replay(const std::string& text) {
  const size_t colon = text.find(':');
  auto p = count_option("--replay POINT", colon == std::string::npos ? "" : text.substr(0, colon), 1);
  auto s = count_option("--replay STATE", colon == std::string::npos ? "" : text.substr(colon + 1), 0);
  if (!p || !s) return error(Errc::invalid_argument, "--replay takes POINT:STATE, as a failure report prints it");
  return std::make_pair(*p, *s);
}

void measured(record::RunRecord& rec, const char* name, double value, const char* unit) {
  rec.metrics.push_back({name, value, unit, record::MetricKind::measured, ""});
}

json with_alike(json failure, const crash::Alike& alike) {
  char cause[17];
  std::snprintf(cause, sizeof cause, "%016llx", static_cast<unsigned long long>(alike.cause));
  failure["cause"] = cause;
  failure["alike"] = alike.others;
  failure["alike_replays"] = alike.replays;
  return failure;
}

void print_alike(const crash::Alike& alike) {
  if (alike.others == 0) return;
  std::string listed;
  for (const auto& r : alike.replays) listed += (listed.empty() ? "" : ", ") + r;
  std::fprintf(stderr, "    and %llu more like it (%s%s)\n", static_cast<unsigned long long>(alike.others),
               listed.c_str(), alike.others > alike.replays.size() ? ", ..." : "");
}

std::string failures_of_kinds(uint64_t kinds) {
  return kinds == 0 ? "" : " of " + std::to_string(kinds) + (kinds == 1 ? " kind" : " kinds");
}

record::RunRecord crash_record(const std::string& name, const std::string& design, json params, uint64_t context_hash) {
  record::RunRecord rec;
  rec.name = name;
  rec.suite = "crash";
  rec.case_name = design;
  rec.params = std::move(params);
  rec.config_hash = bench::run_hash(name, context_hash);
  return rec;
}

json crash_context(const json& crash_settings, const std::string& domain, bool quick, uint64_t* hash) {
  json ctx = bench::base_context(bench::run_id_now(), command_line(), quick);
  ctx["pool"] = nullptr;
  ctx["durability_domain"] = domain;
  ctx["flush_instruction"] = persist::to_string(persist::best_line_flush(platform::CpuFeatures::host()));
  ctx["crash"] = crash_settings;
  *hash = bench::context_hash({{"crash", crash_settings}, {"cpu", ctx["cpu"]["model"]}});
  ctx["config_hash"] = hex64(*hash);
  ctx["skipped"] = json::array();
  return ctx;
}

fs::path out_dir(const std::string& dir, const std::string& default_name) {
  if (!dir.empty()) return dir;
  auto made = bench::make_default_run_directory(default_name);
  return made ? *made : fs::path("results") / default_name;  // then writing there says what is wrong
}

}  // namespace pmlab::cli
