// The speed targets, each measured side by side in one run and reported as a ratio. Contenders
// alternate in phases over many rounds (the order flips every round); a round's ratio compares phases
// adjacent in time, and the target uses the median of the rounds' ratios, so drift and a phase disturbed
// by another process move single rounds, not the estimate. The ratio of each contender's best round
// (its least disturbed speed) is reported beside it as `*_of_best_rounds`.
//
//   primitives.log_target    zero appends ≥ 3× libpmemlog's for 64–256 B entries (ADR, clwb). Beside
//                            them, the bound: one 64 B store + flush + fence per operation, the least any
//                            log durable on return pays (zero pays one barrier; libpmemlog two and a lock)
//   primitives.flush_target  hybrid within 5% of the better of cow and ulog at every dirty-line count;
//                            for 4 KiB pages the best flusher ≥ 2× libpmemblk with ≤ 8 dirty lines and
//                            no slower with all lines dirty
#include <algorithm>
#include <cmath>

#include "pmlab/primitives/page/flusher.hpp"
#include "pmlab/suites/primitives/common.hpp"
#include "pmlab/suites/primitives/page_streams.hpp"
#include "pmlab/suites/primitives/pausable_loop.hpp"
#include "pmlab/suites/primitives/pmdk_peers.hpp"

namespace pmlab::suites::primitives {
namespace {

using namespace bench;

constexpr double kZeroTarget = 3.0;
constexpr uint64_t kBarrierSpan = uint64_t{1} << 20;  // the bound's fresh lines, after the log's region
constexpr double kHybridTarget = 0.95;

int rounds(const RunContext& ctx) { return ctx.quick() ? 11 : 21; }
double phase_seconds(RunContext& ctx) { return std::max(0.01, ctx.control().duration_s / 10); }

double best(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// --------------------------------------------------------------------------- zero vs libpmemlog

void log_target(RunContext& ctx) {
  const Params& p = ctx.params();
  const uint64_t size = p.size("size");
  const int threads = ctx.threads();
  const std::vector<std::byte> payload = random_bytes(size, 0x10c5eed);
  const std::string dir = peer_directory(ctx, "libpmemlog");
  auto peer = peer_or_skip(ctx, [&] { return PmemLogPeer::create(dir, kLaneBytes * static_cast<uint64_t>(threads)); });
  peer->prefault();
  const auto model_sees_peer = peer_persistence_seen_by_model(ctx);

  plog::Options options;
  options.kind = plog::Kind::zero;
  options.padded = p.text("padding") == "line";
  options.lanes = static_cast<uint32_t>(threads);
  prefault(ctx.region().base, ctx.region().size);
  const uint64_t log_bytes = ctx.region().size - kBarrierSpan;
  auto log = plog::Log::format({ctx.region().base, log_bytes}, ctx.persister(), options);
  if (!log) ctx.fail(log.status().message());
  std::byte* barrier_lines = ctx.region().base + log_bytes;
  const uint64_t lines_per_thread = kBarrierSpan / 64 / static_cast<uint64_t>(threads);

  const std::vector<Contender> contenders{
      {"zero",
       [&](int lane, uint64_t) {
         auto lsn = (*log)->append(static_cast<uint32_t>(lane), payload.data(), size);
         if (!lsn && lsn.status().code() != Errc::pool_full) throw std::runtime_error(lsn.status().message());
         return lsn.ok();
       },
       [&] {
         if (Status s = (*log)->truncate(); !s) throw std::runtime_error(s.message());
       }},
      {kPmemLog, [&](int, uint64_t) { return peer->append(payload.data(), size); }, [&] { peer->rewind(); }},
      {"one_barrier",
       [&](int t, uint64_t i) {
         std::byte* line = barrier_lines + (static_cast<uint64_t>(t) * lines_per_thread + i % lines_per_thread) * 64;
         ctx.persister().copy_persist(line, payload.data(), 64);
         return true;
       }},
  };
  const auto tp = interleave(ctx, rounds(ctx), phase_seconds(ctx), contenders);
  std::vector<double> zero, pmem, barrier, ratio, bound;
  for (const auto& round : tp) {
    zero.push_back(round[0]);
    pmem.push_back(round[1]);
    barrier.push_back(round[2]);
    ratio.push_back(round[1] > 0 ? round[0] / round[1] : 0);
    bound.push_back(round[1] > 0 ? round[2] / round[1] : 0);
  }
  const double r = median(ratio);
  ctx.metric("zero_throughput", median(zero), "ops/s");
  ctx.metric("pmemlog_throughput", median(pmem), "ops/s");
  ctx.metric("zero_vs_pmemlog", r, "ratio");
  ctx.metric("zero_vs_pmemlog_of_best_rounds", best(pmem) > 0 ? best(zero) / best(pmem) : 0, "ratio");
  ctx.metric("target", kZeroTarget, "ratio");
  ctx.metric("target_met", r >= kZeroTarget ? 1 : 0, "bool");
  // No log durable on return beats one barrier per append: where this bound is below the target, the
  // target is out of reach on this machine for any design, not only for zero.
  ctx.metric("one_barrier_throughput", median(barrier), "ops/s");
  ctx.metric("one_barrier_vs_pmemlog", median(bound), "ratio");
  ctx.metric("zero_vs_one_barrier", median(barrier) > 0 ? median(zero) / median(barrier) : 0, "ratio");
  ctx.metric("rounds", static_cast<double>(tp.size()), "count");
  ctx.metric("pmem_is_pmem_force", force_pmem_for_pmdk(), "flag");
}

const CaseRegistration log_registration{CaseDef{
    .suite = "primitives",
    .name = "log_target",
    .summary = "zero log vs libpmemlog appends, side by side (target: zero >= 3x for 64-256 B, ADR, clwb)",
    .params = {std_params::choice("medium", "pool: the peer needs a pool file", {"pool"}, {"pool"}),
               std_params::choice("domain", "durability domain of the target (ADR)", {"adr"}, {"adr"}),
               std_params::choice("flush", "flush instruction of the target (clwb)", {"clwb"}, {"clwb"}),
               padding_param(),
               std_params::size("size", "payload bytes per entry", {"64", "128", "256"}, {}, 1, 1 << 20),
               std_params::threads({"1", "2"})},
    .region_bytes =
        [](const Params& p) {
          plog::Options o;
          o.kind = plog::Kind::zero;
          o.padded = p.text("padding") == "line";
          o.lanes = static_cast<uint32_t>(p.integer("threads"));
          return plog::Log::region_bytes(o, kLaneBytes) + kBarrierSpan;
        },
    .redundant = {},
    .body = log_target,
}};

// --------------------------------------------------------------------------- flushers vs each other and libpmemblk

double pmemblk_target(uint32_t page_size, uint32_t dirty) {
  if (page_size != 4096) return std::nan("");
  if (dirty <= 8) return 2.0;
  if (dirty == page_size / ppage::kLineBytes) return 1.0;
  return std::nan("");
}

void flush_target(RunContext& ctx) {
  const Params& p = ctx.params();
  const auto page_size = static_cast<uint32_t>(p.size("page"));
  const auto dirty = static_cast<uint32_t>(p.integer("dirty"));
  const int threads = ctx.threads();
  const std::string dir = peer_directory(ctx, "libpmemblk");
  auto peer = peer_or_skip(ctx, [&] { return PmemBlkPeer::create(dir, page_size, kStoreBytes); });
  peer->prefault();
  const auto model_sees_peer = peer_persistence_seen_by_model(ctx);

  const uint64_t pages = ppage::PageStore::pages_that_fit(ctx.region().size, page_size, static_cast<uint32_t>(threads));
  auto store = ppage::PageStore::format({ctx.region().base, ctx.region().size}, ctx.persister(),
                                        {page_size, pages, static_cast<uint32_t>(threads)});
  if (!store) ctx.fail(store.status().message());
  auto model = ppage::FlushCostModel::calibrate(**store, static_cast<uint32_t>(threads));
  if (!model) ctx.fail(model.status().message());
  ppage::CowFlusher cow(**store);
  ppage::MicroLogFlusher ulog(**store);
  ppage::HybridFlusher hybrid(**store, *model);

  std::vector<ppage::PageStore::Lane> lanes;
  std::vector<PageStreams> streams, blocks;
  std::vector<std::unique_ptr<ppage::DramPage>> frames;
  for (int t = 0; t < threads; ++t) {
    auto lane = (*store)->claim_lane();
    if (!lane) ctx.fail(lane.status().message());
    lanes.push_back(std::move(*lane));
    streams.emplace_back(pages, page_size, dirty, t, threads);
    blocks.emplace_back(peer->blocks(), page_size, dirty, t, threads);
    frames.push_back(std::make_unique<ppage::DramPage>(page_size));
  }
  auto ours = [&](ppage::PageFlusher& flusher) {
    return [&](int t, uint64_t i) {
      ppage::DramPage& frame = *frames[t];
      frame.pid = streams[t].touch(frame, i);
      if (Status s = flusher.flush(lanes[t], frame); !s) throw std::runtime_error(s.message());
      return true;
    };
  };
  const std::vector<Contender> contenders{
      {"cow", ours(cow)},
      {"ulog", ours(ulog)},
      {"hybrid", ours(hybrid)},
      {kPmemBlk,
       [&](int t, uint64_t i) {
         ppage::DramPage& frame = *frames[t];
         const uint64_t block = blocks[t].touch(frame, i);
         frame.clear_dirty();
         if (!peer->write(frame.data(), block)) throw std::runtime_error("pmemblk_write failed");
         return true;
       }},
  };
  const auto tp = interleave(ctx, rounds(ctx), phase_seconds(ctx), contenders);
  std::vector<double> per[4], hybrid_ratio, peer_ratio;
  for (const auto& round : tp)
    for (int c = 0; c < 4; ++c) per[c].push_back(round[c]);
  // "The better of cow and ulog" (and our best flusher) is decided over all rounds, by median, and each
  // round then compares with that one: taking the better of two per round would compare with the
  // maximum of two noisy numbers, which for two equal policies sits a few percent above either.
  const int better = median(per[1]) > median(per[0]) ? 1 : 0;
  const int best_flusher = median(per[2]) > median(per[better]) ? 2 : better;
  for (const auto& round : tp) {
    hybrid_ratio.push_back(round[2] / round[better]);
    peer_ratio.push_back(round[best_flusher] / round[3]);
  }
  const char* names[4] = {"cow_pages_per_s", "ulog_pages_per_s", "hybrid_pages_per_s", "pmemblk_pages_per_s"};
  for (int c = 0; c < 4; ++c) ctx.metric(names[c], median(per[c]), "pages/s");
  const double h = median(hybrid_ratio);
  ctx.metric("hybrid_vs_best", h, "ratio");
  ctx.metric("hybrid_vs_best_of_best_rounds", best(per[2]) / std::max(best(per[0]), best(per[1])), "ratio");
  ctx.metric("hybrid_target", kHybridTarget, "ratio");
  ctx.metric("hybrid_target_met", h >= kHybridTarget ? 1 : 0, "bool");
  ctx.metric("hybrid_uses_ulog", model->choose(dirty, static_cast<uint32_t>(threads)) == ppage::Policy::ulog ? 1 : 0,
             "bool");
  ctx.metric("hybrid_crossover", model->crossover(static_cast<uint32_t>(threads)), "lines");
  const double b = median(peer_ratio);
  ctx.metric("best_vs_pmemblk", b, "ratio");
  ctx.metric("best_vs_pmemblk_of_best_rounds", std::max({best(per[0]), best(per[1]), best(per[2])}) / best(per[3]),
             "ratio");
  const double target = pmemblk_target(page_size, dirty);
  if (!std::isnan(target)) {
    ctx.metric("pmemblk_target", target, "ratio");
    ctx.metric("pmemblk_target_met", b >= target ? 1 : 0, "bool");
  }
  ctx.metric("rounds", static_cast<double>(tp.size()), "count");
  ctx.metric("pmem_is_pmem_force", force_pmem_for_pmdk(), "flag");
}

const CaseRegistration flush_registration{CaseDef{
    .suite = "primitives",
    .name = "flush_target",
    .summary = "cow, ulog, hybrid and libpmemblk side by side (targets: hybrid within 5% of the best; 4 KiB: "
               ">= 2x libpmemblk up to 8 dirty lines, >= 1x all dirty)",
    .params = {std_params::choice("medium", "pool: the peer needs a pool file", {"pool"}, {"pool"}),
               std_params::domain(), std_params::flush(), page_param(),
               dirty_param({"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024"},
                           {"1", "4", "8", "16", "32", "64", "128", "256"}),
               std_params::threads({"1", "2"})},
    .region_bytes = [](const Params&) { return kStoreBytes; },
    .redundant = dirty_beyond_page,
    .body = flush_target,
}};

}  // namespace
}  // namespace pmlab::suites::primitives
