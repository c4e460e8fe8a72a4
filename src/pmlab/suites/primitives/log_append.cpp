// primitives.log_append: throughput and latency of durable appends of `size` bytes, per writer, padding
// and number of appending threads (each its own lane of one log), with PMDK's libpmemlog on the same
// medium ([PMemIO] Figure 6). A full log is truncated in a pause the clock does not count (pausable_loop).
#include <cstring>

#include "pmlab/bench/pausable_loop.hpp"
#include "pmlab/suites/primitives/common.hpp"
#include "pmlab/pmdk/log_blk.hpp"

namespace pmlab::suites::primitives {
namespace {

using namespace bench;

uint64_t region_bytes(const Params& p) {
  const auto threads = static_cast<uint32_t>(p.integer("threads"));
  if (p.text("writer") == kPmemLog) return 4096;  // only to locate the pool's directory
  return plog::Log::region_bytes(log_options(p, threads), kLaneBytes);
}

template <class Append>
void run_loops(RunContext& ctx, Maintenance& maintenance, Append append) {
  std::vector<LoopResult> results(static_cast<size_t>(ctx.threads()));
  std::barrier<> sync(ctx.threads());
  ctx.run_threads([&](ThreadState& t) {
    results[static_cast<size_t>(t.index())] =
        pausable_loop(ctx.control(), sync, maintenance, batches_of([&](uint64_t) { return append(t.index()); }));
  });
  record_loops(ctx, results, static_cast<double>(ctx.params().size("size")));
}

void body(RunContext& ctx) {
  const Params& p = ctx.params();
  const uint64_t size = p.size("size");
  const int threads = ctx.threads();
  const std::vector<std::byte> payload = random_bytes(size, 0x10c5eed);

  if (p.text("writer") == kPmemLog) {
    auto peer = prefaulted_peer(ctx, "libpmemlog", [&](const std::string& dir) {
      return pmdk::PmemLog::create(dir, kLaneBytes * static_cast<uint64_t>(threads));
    });
    const auto model_sees_peer = peer_persistence_seen_by_model(ctx);
    Maintenance rewind(threads, [&] { peer->rewind(); });
    run_loops(ctx, rewind, [&](int) { return peer->append(payload.data(), size); });
    record_peer_counters(ctx, pmdk::kPmemLogFencesPerAppend);
    ctx.metric("entry_bytes", static_cast<double>(size), "B");
    return;
  }

  const plog::Options options = log_options(p, static_cast<uint32_t>(threads));
  if (options.stores == plog::Stores::streaming) note_record_kernel(ctx);
  prefault(ctx.region().base, ctx.region().size);
  auto log = plog::Log::format({ctx.region().base, ctx.region().size}, ctx.persister(), options);
  if (!log) ctx.fail(log.status().message());
  const uint64_t entry = plog::Log::entry_bytes(options.kind, options.padded, size);
  if (entry > (*log)->lane_capacity()) ctx.fail("an entry of " + std::to_string(size) + " bytes does not fit a lane");
  Maintenance truncate(threads, [&] {
    if (Status s = (*log)->truncate(); !s) throw std::runtime_error(s.message());
  });
  run_loops(ctx, truncate, [&](int lane) {
    auto lsn = (*log)->append(static_cast<uint32_t>(lane), payload.data(), size);
    if (!lsn && lsn.status().code() != Errc::pool_full) throw std::runtime_error(lsn.status().message());
    return lsn.ok();
  });
  ctx.metric("entry_bytes", static_cast<double>(entry), "B");
  ctx.metric("barriers_per_append", plog::barriers_per_append(options.kind), "count");
}

const CaseRegistration registration{CaseDef{
    .suite = "primitives",
    .name = "log_append",
    .summary = "durable log appends per writer, padding, entry size and threads, beside libpmemlog ([PMemIO] Fig. 6)",
    .params = {medium_param(), std_params::domain(), std_params::flush(), writer_param(), padding_param(),
               stores_param(),
               std_params::size("size", "payload bytes per entry", {"16", "64", "256", "1K", "4K"},
                                {"16", "64", "256", "4K"}, 1, 1 << 20),
               std_params::threads({"1", "2"})},
    .region_bytes = region_bytes,
    .redundant = pmemlog_options_are_redundant,
    .body = body,
    // The report's "log writer by entry size" compares these points: its ratios need an interval.
    .quick_repetitions =
        [](const Params& p) { return p.integer("threads") == 1 && p.text("medium") == "pool" ? 3 : 0; },
}};

}  // namespace
}  // namespace pmlab::suites::primitives
