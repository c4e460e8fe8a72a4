#include "pmlab/suites/primitives/common.hpp"

#include <cmath>

#include "pmlab/common/random.hpp"
#include "pmlab/common/statistics.hpp"
#include "pmlab/pmdk/environment.hpp"
#include "pmlab/pmdk/log_blk.hpp"

namespace pmlab::suites::primitives {

bench::ParamSpec medium_param() {
  bench::ParamSpec p = bench::std_params::medium({"dram", "pool"});
  p.quick = {"pool"};
  return p;
}

bench::ParamSpec writer_param(std::vector<std::string> quick) {
  return bench::std_params::choice("writer",
                                   "log writer: classic (footer), header (size field), header-dancing (round-robin "
                                   "size fields), zero (popcount, one barrier), or pmemlog (PMDK's libpmemlog)",
                                   {"classic", "header", "header-dancing", "zero", kPmemLog},
                                   {"classic", "header", "header-dancing", "zero", kPmemLog}, std::move(quick));
}

bench::ParamSpec flusher_param(std::vector<std::string> quick) {
  return bench::std_params::choice("flusher",
                                   "page flusher: cow (copy-on-write), ulog (micro-log), hybrid (cost model), or "
                                   "pmemblk (PMDK's libpmemblk block write)",
                                   {"cow", "ulog", "hybrid", kPmemBlk}, {"cow", "ulog", "hybrid", kPmemBlk},
                                   std::move(quick));
}

bench::ParamSpec page_param() {
  return bench::std_params::size("page", "page size (a power of two)", {"4K", "16K", "64K"}, {"4K", "16K"},
                                 ppage::kMinPageBytes, ppage::kMaxPageBytes);
}

bench::ParamSpec dirty_param(std::vector<std::string> defaults, std::vector<std::string> quick) {
  return bench::std_params::integer("dirty",
                                    "dirty cache lines per flushed page (points beyond the page's lines are left out)",
                                    std::move(defaults), std::move(quick), 1, ppage::kMaxLinesPerPage);
}

bench::ParamSpec padding_param(std::vector<std::string> defaults, std::vector<std::string> quick) {
  return bench::std_params::choice("padding",
                                   "none: entries packed 8-byte aligned; line: each entry on its own cache lines "
                                   "([PMemIO] Figure 6 right)",
                                   {"none", "line"}, std::move(defaults), std::move(quick));
}

bench::ParamSpec stores_param() {
  return bench::std_params::choice("stores",
                                   "cached: entries stored through the cache and flushed; streaming: whole lines "
                                   "with non-temporal stores ([PMemIO] §2)",
                                   {"cached", "streaming"}, {"cached", "streaming"}, {});
}

std::optional<std::string> pmemlog_options_are_redundant(const bench::Params& p) {
  if (p.text("writer") != kPmemLog) return std::nullopt;
  if (p.text("padding") != "none") return "libpmemlog has no padding option";
  if (p.text("stores") != "cached") return "libpmemlog chooses its stores itself (non-temporal from 256 B)";
  return std::nullopt;
}

plog::Options log_options(const bench::Params& p, uint32_t lanes) {
  plog::Options o;
  o.kind = plog::parse_kind(p.text("writer")).value();
  o.padded = p.text("padding") == "line";
  o.stores = plog::parse_stores(p.text("stores")).value();
  o.lanes = lanes;
  return o;
}

std::string peer_directory(bench::RunContext& ctx, const char* peer) {
  if (ctx.region().kind != media::Kind::pool)
    ctx.skip(std::string(peer) + " needs a pool file; it runs on medium=pool only");
  auto dir = pmdk::directory_of_mapping(ctx.region().base);
  if (!dir) ctx.skip(std::string(peer) + ": " + dir.status().message());
  return *dir;
}

void record_peer_counters(bench::RunContext& ctx, double published_fences_per_op) {
  const double unknown = std::nan("");
  ctx.metric("flushes_per_op", unknown, "count");
  ctx.metric("flushed_bytes_per_op", unknown, "B");
  ctx.metric("nt_bytes_per_op", unknown, "B");
  ctx.metric("fences_per_op", published_fences_per_op, "count", record::MetricKind::published,
             pmdk::kPmdkBarrierSource);
  ctx.metric("pmem_is_pmem_force", pmdk::force_pmem_is_pmem(), "flag");
}

void note_record_kernel(bench::RunContext& ctx) {
  const std::string kernel = ctx.persister().nt_record_kernel_name();
  ctx.note("record_kernel", kernel + (kernel == "avx512bw" ? ": streamed lines composed in registers"
                                                           : ": streamed lines composed on the stack"));
}

void record_hybrid_choices(bench::RunContext& ctx, const ppage::HybridFlusher& hybrid, uint32_t dirty,
                           uint32_t threads) {
  const ppage::FlushCostModel& model = hybrid.model();
  ctx.metric("hybrid_crossover", model.crossover(threads), "lines");
  ctx.metric("hybrid_model_uses_ulog", model.choose(dirty, threads) == ppage::Policy::ulog ? 1 : 0, "bool");
  uint64_t ulog = 0, all = 0, explored = 0;
  std::vector<double> learned;
  for (uint32_t lane = 0; const ppage::PolicyLearner* learner = hybrid.learner(lane); ++lane) {
    ulog += learner->flushes(ppage::Policy::ulog);
    all += learner->flushes(ppage::Policy::ulog) + learner->flushes(ppage::Policy::cow);
    explored += learner->explored();
    if (const double r = learner->ulog_vs_cow(dirty, threads); r > 0) learned.push_back(r);
  }
  if (all == 0) return;  // no online refinement
  ctx.metric("hybrid_ulog_share", static_cast<double>(ulog) / static_cast<double>(all), "ratio");
  ctx.metric("hybrid_explored_share", static_cast<double>(explored) / static_cast<double>(all), "ratio");
  if (!learned.empty()) ctx.metric("hybrid_learned_ulog_vs_cow", median(learned), "ratio");
}

void prefault(std::byte* base, size_t bytes) {
  for (size_t offset = 0; offset < bytes; offset += 4096) {
    volatile std::byte* b = base + offset;
    *b = *b;
  }
}

std::vector<std::byte> random_bytes(size_t size, uint64_t seed) {
  std::vector<std::byte> out(size);
  for (size_t k = 0; k < size; ++k) out[k] = static_cast<std::byte>(splitmix64(seed));
  return out;
}

std::optional<std::string> dirty_beyond_page(const bench::Params& p) {
  if (p.integer("dirty") > static_cast<int64_t>(p.size("page") / ppage::kLineBytes))
    return "more dirty lines than the page has";
  return std::nullopt;
}

pmdk::ScopedPersistence peer_persistence_seen_by_model(bench::RunContext& ctx) {
  pmdk::Persistence p = pmdk::persistence();
  p.observer = ctx.model();
  return pmdk::ScopedPersistence(p);
}

}  // namespace pmlab::suites::primitives
