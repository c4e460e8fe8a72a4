// primitives.page_flush: failure-atomic page flushes per second against the number of dirty cache lines,
// per flusher, page size and threads, with PMDK's libpmemblk writing the same pages as blocks ([PMemIO]
// Figure 5). Each thread flushes random pages of its own share of the store; which pages and which lines
// are dirty is drawn before the timed loop.
#include "pmlab/common/random.hpp"
#include "pmlab/primitives/page/flusher.hpp"
#include "pmlab/suites/primitives/common.hpp"
#include "pmlab/suites/primitives/page_streams.hpp"
#include "pmlab/pmdk/log_blk.hpp"

namespace pmlab::suites::primitives {
namespace {

using namespace bench;

void run_pmemblk(RunContext& ctx, uint32_t page_size, uint32_t dirty) {
  auto peer = prefaulted_peer(
      ctx, "libpmemblk", [&](const std::string& dir) { return pmdk::PmemBlk::create(dir, page_size, kStoreBytes); });
  const auto model_sees_peer = peer_persistence_seen_by_model(ctx);
  ctx.run_threads([&](ThreadState& t) {
    const PageStreams streams(peer->blocks(), page_size, dirty, t.index(), t.count());
    ppage::DramPage frame(page_size);
    t.measure([&](uint64_t i) {
      const uint64_t block = streams.touch(frame, i);
      frame.clear_dirty();  // the peer writes whole blocks
      if (!peer->write(frame.data(), block)) throw std::runtime_error("pmemblk_write failed");
    });
  });
  record_peer_counters(ctx, pmdk::kPmemBlkFencesPerWrite);
}

void body(RunContext& ctx) {
  const Params& p = ctx.params();
  const auto page_size = static_cast<uint32_t>(p.size("page"));
  const auto dirty = static_cast<uint32_t>(p.integer("dirty"));
  const auto threads = static_cast<uint32_t>(ctx.threads());
  ctx.set_bytes_per_op(static_cast<double>(dirty) * ppage::kLineBytes);
  if (p.text("flusher") == kPmemBlk) return run_pmemblk(ctx, page_size, dirty);

  const uint64_t pages = ppage::PageStore::pages_that_fit(ctx.region().size, page_size, threads);
  auto store =
      ppage::PageStore::format({ctx.region().base, ctx.region().size}, ctx.persister(), {page_size, pages, threads});
  if (!store) ctx.fail(store.status().message());
  const ppage::Policy policy = ppage::parse_policy(p.text("flusher")).value();
  auto flusher = ppage::make_flusher(policy, **store, threads);
  if (!flusher) ctx.fail(flusher.status().message());
  ctx.run_threads([&](ThreadState& t) {
    auto lane = (*store)->claim_lane();
    if (!lane) throw std::runtime_error(lane.status().message());
    const PageStreams streams(pages, page_size, dirty, t.index(), t.count());
    ppage::DramPage frame(page_size);
    t.measure([&](uint64_t i) {
      frame.pid = streams.touch(frame, i);
      if (Status s = (*flusher)->flush(*lane, frame); !s) throw std::runtime_error(s.message());
    });
  });
  ctx.metric("pages", static_cast<double>(pages), "count");
  if (auto* hybrid = dynamic_cast<ppage::HybridFlusher*>(flusher->get())) {
    record_hybrid_choices(ctx, *hybrid, dirty, threads);
    ctx.metric("calibration_s", hybrid->model().calibration_seconds(), "s");
  }
}

const CaseRegistration registration{CaseDef{
    .suite = "primitives",
    .name = "page_flush",
    .summary = "failure-atomic page flushes per dirty cache lines, flusher, page size and threads, beside "
               "libpmemblk ([PMemIO] Fig. 5)",
    .params = {medium_param(), std_params::domain(), std_params::flush(), flusher_param(), page_param(), dirty_param(),
               std_params::threads({"1", "2"})},
    .region_bytes = [](const Params& p) { return p.text("flusher") == kPmemBlk ? uint64_t{4096} : kStoreBytes; },
    .redundant = dirty_beyond_page,
    .body = body,
    // The report's "page flusher by dirty lines" compares these points: its ratios need an interval.
    .quick_repetitions =
        [](const Params& p) {
          return p.integer("threads") == 1 && p.text("medium") == "pool" && p.size("page") == 4096 ? 3 : 0;
        },
}};

}  // namespace
}  // namespace pmlab::suites::primitives
