#include "pmlab/suites/primitives/pausable_loop.hpp"

#include <algorithm>
#include <memory>

namespace pmlab::suites::primitives {

void Maintenance::finish_locked() {
  // A failing truncation must still wake the waiters, or they would wait forever; each rethrows it.
  try {
    work_();
  } catch (...) {
    failure_ = std::current_exception();
  }
  requested_.store(false, std::memory_order_release);
  paused_ = 0;
  ++generation_;
  done_.notify_all();
}

void Maintenance::pause() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!requested_.load(std::memory_order_acquire)) return;  // another thread already did it
  const uint64_t generation = generation_;
  if (++paused_ == active_) finish_locked();
  else done_.wait(lock, [&] { return generation_ != generation; });
  if (failure_) std::rethrow_exception(failure_);
}

void Maintenance::leave() {
  std::lock_guard<std::mutex> lock(mutex_);
  --active_;
  if (paused_ > 0 && paused_ == active_) finish_locked();
}

void Maintenance::join() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++active_;
}

std::vector<std::vector<size_t>> phase_orders(size_t n) {
  if (n == 0) return {};
  std::vector<size_t> first{0};  // 0, 1, n-1, 2, n-2, …
  for (size_t lo = 1, hi = n - 1; first.size() < n;) {
    first.push_back(lo++);
    if (first.size() < n) first.push_back(hi--);
  }
  std::vector<std::vector<size_t>> rows;
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> row;
    for (size_t c : first) row.push_back((c + i) % n);
    rows.push_back(row);
  }
  if (n % 2 == 1)  // odd n: the mirrored rows complete the balance
    for (size_t i = 0; i < n; ++i) rows.emplace_back(rows[i].rbegin(), rows[i].rend());
  return rows;
}

std::vector<std::vector<double>> interleave(bench::RunContext& ctx, int rounds, double phase_s,
                                            const std::vector<Contender>& contenders) {
  const int threads = ctx.threads();
  const size_t n = contenders.size();
  std::vector<std::unique_ptr<Maintenance>> maintenance;
  for (int r = 0; r < rounds; ++r)
    for (const Contender& c : contenders) maintenance.push_back(std::make_unique<Maintenance>(threads, c.maintain));
  bench::RunControl phase;
  phase.duration_s = phase_s;
  phase.warmup_s = std::min(0.005, phase_s / 4);
  phase.per_op_timing = false;  // ratios of throughput: a timer read per operation would shrink the faster one
  // [thread][round * n + contender]: ops and active ticks
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> measured(threads, std::vector<std::pair<uint64_t, uint64_t>>(rounds * n));
  std::barrier<> sync(threads);
  const std::vector<std::vector<size_t>> orders = phase_orders(n);
  ctx.run_threads([&](bench::ThreadState& t) {
    for (int r = 0; r < rounds; ++r) {
      for (size_t k = 0; k < n; ++k) {
        const size_t c = orders[static_cast<size_t>(r) % orders.size()][k];
        const size_t slot = static_cast<size_t>(r) * n + c;
        const LoopResult res = pausable_loop(phase, sync, *maintenance[slot],
                                             [&](uint64_t i) { return contenders[c].op(t.index(), i); });
        measured[t.index()][slot] = {res.ops, res.active_ticks};
      }
    }
  });
  const platform::Clock& clock = platform::Clock::get();
  std::vector<std::vector<double>> out(rounds, std::vector<double>(n, 0.0));
  for (int r = 0; r < rounds; ++r)
    for (size_t c = 0; c < n; ++c)
      for (int t = 0; t < threads; ++t) {
        const auto [ops, ticks] = measured[t][static_cast<size_t>(r) * n + c];
        if (ops > 0 && ticks > 0) out[r][c] += static_cast<double>(ops) / (clock.to_ns(ticks) / 1e9);
      }
  return out;
}

void record_loops(bench::RunContext& ctx, const std::vector<LoopResult>& results, double bytes_per_op) {
  const platform::Clock& clock = platform::Clock::get();
  bench::Histogram merged;
  uint64_t ops = 0, pauses = 0;
  double throughput = 0, active_s = 0, paused_s = 0;
  persist::Counters counters{};
  for (const LoopResult& r : results) {
    merged.merge(r.histogram);
    ops += r.ops;
    pauses += r.pauses;
    counters += r.counters;
    const double seconds = clock.to_ns(r.active_ticks) / 1e9;
    if (r.ops > 0 && seconds > 0) throughput += static_cast<double>(r.ops) / seconds;
    active_s = std::max(active_s, seconds);
    paused_s = std::max(paused_s, clock.to_ns(r.paused_ticks) / 1e9);
  }
  if (ops == 0) ctx.fail("the case measured no operations");
  auto ns = [&](double ticks) { return ticks / clock.ticks_per_ns(); };
  ctx.metric("ops", static_cast<double>(ops), "count");
  ctx.metric("seconds", active_s, "s");
  ctx.metric("throughput", throughput, "ops/s");
  if (bytes_per_op > 0) ctx.metric("bandwidth", throughput * bytes_per_op / 1048576.0, "MiB/s");
  ctx.metric("latency_avg", ns(merged.mean()), "ns");
  ctx.metric("latency_p50", ns(merged.quantile(0.50)), "ns");
  ctx.metric("latency_p99", ns(merged.quantile(0.99)), "ns");
  ctx.metric("latency_p999", ns(merged.quantile(0.999)), "ns");
  ctx.metric("latency_max", ns(static_cast<double>(merged.max())), "ns");
  const double per_op = 1.0 / static_cast<double>(ops);
  ctx.metric("flushes_per_op", static_cast<double>(counters.flushes) * per_op, "count");
  ctx.metric("flushed_bytes_per_op", static_cast<double>(counters.flushed_bytes) * per_op, "B");
  ctx.metric("fences_per_op", static_cast<double>(counters.fences) * per_op, "count");
  ctx.metric("nt_bytes_per_op", static_cast<double>(counters.nt_bytes) * per_op, "B");
  ctx.metric("pauses", static_cast<double>(pauses), "count");
  ctx.metric("paused_s", paused_s, "s");
}

}  // namespace pmlab::suites::primitives
