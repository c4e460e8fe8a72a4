// A self-timed loop for cases that need a latency histogram per kind of operation (lookups vs updates,
// pushes vs pops), which the harness's single histogram cannot give. Each thread runs warm-up, meets the
// others at a barrier, runs until the deadline, and keeps per-kind histograms and persistence counters.
#pragma once

#include <algorithm>
#include <array>
#include <barrier>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/record/histogram.hpp"
#include "pmlab/persist/config.hpp"
#include "pmlab/persist/counters.hpp"
#include "pmlab/platform/clock.hpp"

namespace pmlab::suites::lockfree {

// Threads by default: every CPU this process may use, up to the paper's 28 (its runs say how many).
std::string default_threads();

// Why a point of a design sweep is not run: its "design" does not claim its "domain" ...
std::optional<std::string> unclaimed_domain(const bench::Params& p, const std::vector<persist::Domain>& claimed);
// ... or runs on the other "medium": a volatile design on DRAM, a persistent one on the pool.
std::optional<std::string> other_medium(const bench::Params& p, bool volatile_design);

// Quick runs are short; on a shared machine one descheduled thread can dominate a 50 ms average, so a
// case may ask for a floor (recorded in the run's notes).
inline void at_least(bench::RunContext& ctx, double seconds) {
  if (ctx.control().duration_s < seconds) {
    ctx.control().duration_s = seconds;
    char text[96];
    std::snprintf(text, sizeof text, "measured for %.2f s per run (this case's minimum)", seconds);
    ctx.note("duration", text);
  }
}

template <int Kinds>
struct TimedTotals {
  std::array<record::Histogram, Kinds> latency;
  persist::Counters counters{};
  uint64_t ops = 0;
  uint64_t first = UINT64_MAX, last = 0;
  std::mutex lock;
};

// op(i) returns the kind (0 .. Kinds-1) of the operation it ran.
template <int Kinds, class Op>
void timed_thread(bench::RunContext& ctx, std::barrier<>& sync, TimedTotals<Kinds>& totals, Op&& op) {
  const platform::Clock& clock = platform::Clock::get();
  uint64_t i = 0;
  const uint64_t warm_until = platform::Clock::now() + clock.from_ns(ctx.control().warmup_s * 1e9);
  while (platform::Clock::now() < warm_until) (void)op(i++);
  std::array<record::Histogram, Kinds> mine;
  sync.arrive_and_wait();
  const persist::Counters before = persist::thread_counters();
  const uint64_t start = platform::Clock::start();
  const uint64_t deadline = start + clock.from_ns(ctx.control().duration_s * 1e9);
  const uint64_t overhead = clock.from_ns(clock.overhead_ns());
  uint64_t done = 0, t1 = start;
  while (t1 < deadline) {
    const uint64_t t0 = platform::Clock::start();
    const int kind = op(i++);
    t1 = platform::Clock::stop();
    mine[static_cast<size_t>(kind)].add(t1 - t0 > overhead ? t1 - t0 - overhead : 0);
    ++done;
  }
  const persist::Counters spent = persist::thread_counters() - before;
  sync.arrive_and_wait();
  std::lock_guard<std::mutex> g(totals.lock);
  for (int k = 0; k < Kinds; ++k) totals.latency[static_cast<size_t>(k)].merge(mine[static_cast<size_t>(k)]);
  totals.counters += spent;
  totals.ops += done;
  totals.first = std::min(totals.first, start);
  totals.last = std::max(totals.last, t1);
}

// Records throughput, counters per operation, and per kind `<name>_latency_{avg,p50,p99,p999}` in ns.
template <int Kinds>
void record_timed(bench::RunContext& ctx, const TimedTotals<Kinds>& totals,
                  const std::array<const char*, Kinds>& names) {
  const platform::Clock& clock = platform::Clock::get();
  if (totals.ops == 0) ctx.fail("the case measured no operations");
  const double seconds = clock.to_ns(totals.last - totals.first) / 1e9;
  const double per_op = 1.0 / static_cast<double>(totals.ops);
  ctx.metric("ops", static_cast<double>(totals.ops), "count");
  ctx.metric("seconds", seconds, "s");
  ctx.metric("throughput", static_cast<double>(totals.ops) / seconds, "ops/s");
  ctx.metric("flushes_per_op", static_cast<double>(totals.counters.flushes) * per_op, "count");
  ctx.metric("fences_per_op", static_cast<double>(totals.counters.fences) * per_op, "count");
  for (int k = 0; k < Kinds; ++k) {
    const record::Histogram& h = totals.latency[static_cast<size_t>(k)];
    if (h.count() == 0) continue;
    const std::string n = names[static_cast<size_t>(k)];
    auto ns = [&](double ticks) { return ticks / clock.ticks_per_ns(); };
    ctx.metric(n + "_ops", static_cast<double>(h.count()), "count");
    ctx.metric(n + "_latency_avg", ns(h.mean()), "ns");
    ctx.metric(n + "_latency_p50", ns(h.quantile(0.5)), "ns");
    ctx.metric(n + "_latency_p99", ns(h.quantile(0.99)), "ns");
    ctx.metric(n + "_latency_p999", ns(h.quantile(0.999)), "ns");
  }
}

}  // namespace pmlab::suites::lockfree
