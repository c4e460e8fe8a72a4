// idio.i1_latency: I1, asymmetric load / p-store latency versus the LLC hit ratio
// ([PMIdioBench] §4.1, Fig. 3a).
//
// A region the size of the cache as this experiment sees it (measured: see priming.hpp) is evicted with
// clflushopt, then a fraction f of its lines is loaded, and every line is visited once, in a random order,
// with one timed load or one timed p-store (store + flush + fence, per flush instruction, timed until the
// store and its write-back are complete). Each operation is timed on its own — per-operation latency, not
// loop time (core.persist's throughput), where consecutive write-backs overlap — and the hit ratio the
// priming achieved is measured (loads faster than the calibrated hit/miss threshold) rather than assumed.
// Unlike PMIdioBench's test_i1.c, every p-store flushes the line it stored, not the region's first line.

#include <algorithm>
#include <barrier>
#include <memory>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/suites/idio/common.hpp"
#include "pmlab/suites/idio/priming.hpp"

namespace pmlab::suites::idio {
namespace {

using namespace bench;

std::optional<std::string> redundant(const Params& p) {
  const std::string best = persist::to_string(persist::best_line_flush(platform::CpuFeatures::host()));
  if (p.text("op") == "load" && p.text("flush") != best) return "a load issues no flush";
  return std::nullopt;
}

// One access of a line, timed, net of the timer's own cost: a p-store of a fixed line, or a load (shown
// to the device model when the line was not primed into the cache).
struct TimedAccess {
  const persist::Persister& persister;
  MemoryModel* model;
  bool pstore;
  uint64_t overhead;  // ticks the timer itself takes
  uint64_t sink = 0;
  alignas(64) unsigned char source[64] = {};

  TimedAccess(const persist::Persister& p, MemoryModel* m, bool is_pstore, uint64_t timer_overhead)
      : persister(p), model(m), pstore(is_pstore), overhead(timer_overhead) {
    for (int i = 0; i < 64; ++i) source[i] = static_cast<unsigned char>(i + 1);
  }

  uint64_t operator()(std::byte* line, bool primed) {
    const uint64_t t0 = platform::Clock::start();
    uint64_t t1 = 0;
    if (pstore) {
      persister.copy_persist(line, source, 64);
      // Ends when the p-store is complete (Clock::stop_drained): otherwise the value would read whether
      // the previous p-store's write-back had finished during the loop's bookkeeping.
      t1 = platform::Clock::stop_drained();
    } else {
      sink += load_word(line);
      if (model != nullptr && !primed) [[unlikely]]
        model->on_read(line, 64);
      t1 = platform::Clock::stop();
    }
    return t1 - t0 > overhead ? t1 - t0 - overhead : 0;
  }
};

void body(RunContext& ctx) {
  const Params& p = ctx.params();
  const bool pstore = p.text("op") == "pstore";
  const double f = p.real("hit_ratio");
  const persist::Persister& persister = ctx.persister();
  MemoryModel* model = ctx.model();
  const PrimableRegion& primable = primable_region(ctx.region().base, ctx.region().size);
  const HitThreshold threshold = calibrate_threshold(ctx.region().base, primable.bytes, 0x11);

  const size_t threads = static_cast<size_t>(ctx.threads());
  const size_t slice_slots = primable.bytes / kSlotBytes / threads;
  if (slice_slots < 64) ctx.fail("the primable region is too small for " + std::to_string(threads) + " threads");
  const int rounds = ctx.quick() ? 2 : 5;
  std::barrier<> sync(static_cast<std::ptrdiff_t>(threads));
  std::vector<std::unique_ptr<Histogram>> histograms(threads);
  std::vector<double> hit_ratios(threads, 0.0);
  const platform::Clock& clock = platform::Clock::get();
  const uint64_t plain_overhead = clock.from_ns(clock.overhead_ns());
  const uint64_t drained_overhead = clock.from_ns(clock.drained_overhead_ns());

  ctx.run_threads([&](ThreadState& t) {
    const size_t me = static_cast<size_t>(t.index());
    std::byte* base = ctx.region().base + me * slice_slots * kSlotBytes;
    auto hist = std::make_unique<Histogram>();
    TimedAccess access{persister, model, pstore, pstore ? drained_overhead : plain_overhead};
    std::vector<char> primed(slice_slots);
    uint64_t hits = 0, loads = 0;
    const uint64_t hit_ticks = clock.from_ns(threshold.threshold_ns);
    for (int round = 0; round < rounds; ++round) {
      const auto primed_order = permutation(slice_slots, 0x1000 + me * 131 + static_cast<uint64_t>(round));
      const auto visit_order = permutation(slice_slots, 0x2000 + me * 131 + static_cast<uint64_t>(round));
      evict(base, slice_slots * kSlotBytes);
      const size_t n = prime(base, primed_order, f);
      std::fill(primed.begin(), primed.end(), 0);
      for (size_t i = 0; i < n; ++i) primed[primed_order[i]] = 1;
      sync.arrive_and_wait();
      for (uint32_t slot : visit_order) {
        const uint64_t d = access(base + size_t{slot} * kSlotBytes, primed[slot] != 0);
        hist->add(d);
        if (!pstore) {
          ++loads;
          hits += d < hit_ticks ? 1 : 0;
        }
      }
      sync.arrive_and_wait();
    }
    if (pstore) {
      // The p-stores changed the cache state: the hit ratio their priming gave is measured on a fresh
      // priming with loads.
      hit_ratios[me] = primed_hit_ratio(base, slice_slots * kSlotBytes, f, threshold, 0x3000 + me);
    } else {
      hit_ratios[me] = loads ? static_cast<double>(hits) / static_cast<double>(loads) : 0.0;
    }
    __asm__ volatile("" : : "r"(access.sink));
    histograms[me] = std::move(hist);
  });

  Histogram merged;
  for (const auto& h : histograms) merged.merge(*h);
  add_latency_metrics(ctx, merged);
  double hit = 0;
  for (double h : hit_ratios) hit += h;
  ctx.metric("hit_ratio_target", f, "ratio");
  ctx.metric("hit_ratio_measured", hit / static_cast<double>(threads), "ratio");
  ctx.metric("hit_threshold_ns", threshold.threshold_ns, "ns");
  ctx.timed_metric("cached_load_ns", threshold.hit_ns);
  ctx.timed_metric("uncached_load_ns", threshold.miss_ns);
  ctx.metric("region_bytes", static_cast<double>(primable.bytes), "B");
  ctx.metric("llc_nominal_bytes", static_cast<double>(primable.nominal_llc_bytes), "B");
  ctx.metric("region_full_prime_hit_ratio", primable.full_hit_ratio, "ratio");
  ctx.metric("region_half_prime_hit_ratio", primable.half_hit_ratio, "ratio");
  ctx.metric("rounds", rounds, "count");
}

ParamSpec hit_ratio_param() {
  ParamSpec s;
  s.name = "hit_ratio";
  s.type = ParamType::real;
  s.doc = "fraction f of the region's lines primed into the cache before the timed pass (0..1)";
  s.defaults = {"0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1"};
  s.quick = {"0", "0.5", "1"};
  s.min = 0;
  s.max = 1;
  return s;
}

const CaseRegistration registration{CaseDef{
    .suite = kSuite,
    .name = "i1_latency",
    .summary = "I1: per-operation load and p-store latency (each flush instruction) versus the LLC hit ratio f",
    .params = {std_params::medium(),
               std_params::choice("domain", "durability domain (adr: every p-store flushes)", {"adr"}, {"adr"}),
               std_params::choice("op", "load: one 8-byte load per line; pstore: store the line, flush it, fence",
                                  {"load", "pstore"}, {"load", "pstore"}),
               std_params::flush({"clflush", "clflushopt", "clwb", "ntstore"}), hit_ratio_param(),
               std_params::threads(thread_sweep(), {"1"})},
    .region_bytes = [](const Params&) { return std::max<uint64_t>(platform::llc_bytes() / 2, 1ULL << 20); },
    .redundant = redundant,
    .body = body,
}};

}  // namespace
}  // namespace pmlab::suites::idio
