// idio.dependent_load: the latency of one load that cannot overlap another, against the working set
// ([PMemIO] §2.3, Fig. 3): a single thread follows a random cycle through every cache line of the working set
// (pointer_chase.hpp), from 4 KiB, which the L1 holds, to well beyond the last-level cache, where every load
// is a memory access. The chain is timed in batches of many loads and the time per load is the batch's time
// divided by its loads (a clock read per load would cost more than an L1 hit), the best batch counting.
// Beside it, [OptaneGuide]'s idle random-read latency of DRAM and Optane, published.
#include <algorithm>
#include <bit>

#include "pmlab/bench/case.hpp"
#include "pmlab/model/published.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/pointer_chase.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

constexpr uint64_t kSmallestSet = 4096;
constexpr const char* kLatencyFile = "optane-study/02-best_case_latency.csv";

// The largest working set: 4 times the last-level cache and at least 64 MiB, so the last points miss every
// cache whatever this machine's LLC (a random line of 4x the LLC is cached one time in four at most), while
// the pool a quick run needs stays a few hundred MiB on a common server.
uint64_t largest_set() { return std::bit_ceil(std::max<uint64_t>(64ULL << 20, 4 * platform::llc_bytes())); }

// 4 KiB … largest_set(), every `step`-fold.
std::vector<std::string> set_sweep(uint64_t step) {
  std::vector<std::string> out;
  const uint64_t top = largest_set();
  uint64_t s = kSmallestSet;
  for (; s < top; s *= step) out.push_back(std::to_string(s));
  out.push_back(std::to_string(top));
  return out;
}

void body(RunContext& ctx) {
  const uint64_t wss = ctx.params().size("wss");
  if (wss % kChaseLineBytes != 0 || wss < kChaseLineBytes) ctx.fail("the working set must be whole cache lines");
  if (ctx.region().size < wss) ctx.fail("region too small for the working set");
  if (ctx.threads() != 1) ctx.fail("a dependent-load chain is one thread's (the study's single-thread test)");
  const size_t lines = static_cast<size_t>(wss / kChaseLineBytes);
  MemoryModel* model = ctx.model();
  const platform::Clock& clock = platform::Clock::get();
  // Under --quick the batches are short, not fewer: the spread needs its samples.
  const int batches = ctx.quick() ? 9 : 15;
  std::vector<double> ns_per_load;
  uint64_t loads_per_batch = 0;

  ctx.run_threads([&](ThreadState&) {
    // Built on the thread that chases: its stores fault the pages in, outside the timed batches.
    const std::byte* line = build_chase(ctx.region().base, lines, 0xc4a5e);
    // Warm: a cache-sized set is then resident, a larger one has its page tables walked once.
    for (size_t k = 0; k < std::min<size_t>(lines, size_t{1} << 20); ++k) line = chase_step(line);
    // Loads per batch, so that the batches together last about the run's duration.
    constexpr uint64_t kProbe = 4096;
    const uint64_t p0 = platform::Clock::start();
    for (uint64_t k = 0; k < kProbe; ++k) line = chase_step(line);
    const double probe_ns = std::max(clock.to_ns(platform::Clock::stop() - p0) / kProbe, 0.1);
    const double batch_ns = ctx.control().duration_s * 1e9 / batches;
    loads_per_batch = std::clamp<uint64_t>(static_cast<uint64_t>(batch_ns / probe_ns), kProbe, uint64_t{1} << 26);
    for (int b = 0; b < batches; ++b) {
      const uint64_t t0 = platform::Clock::start();
      if (model != nullptr) [[unlikely]] {
        for (uint64_t k = 0; k < loads_per_batch; ++k) {
          line = chase_step(line);
          model->on_read(line, kChaseLineBytes);
        }
      } else {
        for (uint64_t k = 0; k < loads_per_batch; ++k) line = chase_step(line);
      }
      const uint64_t t1 = platform::Clock::stop();
      ns_per_load.push_back(clock.to_ns(t1 - t0) / static_cast<double>(loads_per_batch));
    }
    __asm__ volatile("" : : "r"(line));
  });
  // Other load on the machine only ever adds time to a batch: the best batch is the chain's latency, as the
  // bandwidth peers' best round is theirs (docs/idio.md); the median batch and its interval show the spread.
  ctx.timed_metric("load_latency", *std::min_element(ns_per_load.begin(), ns_per_load.end()), loads_per_batch);
  ctx.metric_samples("load_latency_median", ns_per_load, "ns");
  ctx.metric("loads_per_batch", static_cast<double>(loads_per_batch), "count");
  ctx.metric("llc_bytes", static_cast<double>(platform::llc_bytes()), "B");
  // The published idle latency of a random read from memory, beside the points past the last-level cache.
  if (wss > platform::llc_bytes()) {
    const bool pool = ctx.params().text("medium") == "pool";
    auto published = model::published_csv_cell(kLatencyFile, "Read\\Random", pool ? "Optane" : "DRAM",
                                               std::string("[OptaneGuide] Fig. 2, idle random read, ") +
                                                   (pool ? "Optane DC PMM" : "DRAM") + " (" + kLatencyFile + ")");
    if (published)
      ctx.metric("published_load_latency", published->value, "ns", MetricKind::published, published->source);
    else ctx.note("published", published.status().message());
  }
}

const CaseRegistration registration{CaseDef{
    .suite = kSuite,
    .name = "dependent_load",
    .summary = "dependent-load latency versus working-set size: a random pointer chase ([PMemIO] Fig. 3)",
    .params = {std_params::medium(),
               std_params::size("wss", "working set: bytes of cache lines the chase cycles through", set_sweep(2),
                                set_sweep(4), 64, 1LL << 40),
               std_params::threads({"1"}, {"1"})},
    .region_bytes = [](const Params& p) { return p.size("wss"); },
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::idio
