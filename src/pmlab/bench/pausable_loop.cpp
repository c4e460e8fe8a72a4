#include "pmlab/bench/pausable_loop.hpp"

#include <algorithm>

namespace pmlab::bench {

void Maintenance::finish_locked() {
  // A failing truncation must still wake the waiters, or they would wait forever; each rethrows it.
  try {
    work_();
  } catch (...) { failure_ = std::current_exception(); }
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

void record_loops(RunContext& ctx, const std::vector<LoopResult>& results, double bytes_per_op) {
  const platform::Clock& clock = platform::Clock::get();
  Histogram merged;
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
  ctx.timed_metric("latency_avg", ns(merged.mean()), 1);
  ctx.timed_metric("latency_p50", ns(merged.quantile(0.50)), 1);
  ctx.timed_metric("latency_p99", ns(merged.quantile(0.99)), 1);
  ctx.timed_metric("latency_p999", ns(merged.quantile(0.999)), 1);
  ctx.metric("latency_max", ns(static_cast<double>(merged.max())), "ns");
  if (merged.count() > 0) ctx.metric("latency_sampled_every", static_cast<double>(kSampleEvery), "count");
  const double per_op = 1.0 / static_cast<double>(ops);
  ctx.metric("flushes_per_op", static_cast<double>(counters.flushes) * per_op, "count");
  ctx.metric("flushed_bytes_per_op", static_cast<double>(counters.flushed_bytes) * per_op, "B");
  ctx.metric("fences_per_op", static_cast<double>(counters.fences) * per_op, "count");
  ctx.metric("nt_bytes_per_op", static_cast<double>(counters.nt_bytes) * per_op, "B");
  ctx.metric("pauses", static_cast<double>(pauses), "count");
  ctx.metric("paused_s", paused_s, "s");
}

}  // namespace pmlab::bench
