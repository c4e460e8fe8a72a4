#include "pmlab/bench/side_by_side.hpp"

#include <algorithm>
#include <barrier>
#include <memory>

#include "pmlab/bench/pausable_loop.hpp"
#include "pmlab/platform/clock.hpp"

namespace pmlab::bench {

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

std::vector<double> InterleaveResult::rounds_of(size_t c) const {
  std::vector<double> v;
  for (const std::vector<double>& round : throughput) v.push_back(round.at(c));
  return v;
}

std::vector<double> InterleaveResult::ratios(size_t a, size_t b) const {
  std::vector<double> v;
  for (const std::vector<double>& round : throughput) v.push_back(round.at(a) / round.at(b));
  return v;
}

double phase_seconds(RunContext& ctx) { return std::max(0.01, ctx.control().duration_s / (ctx.quick() ? 10 : 50)); }

InterleaveResult interleave(RunContext& ctx, int rounds, double phase_s, const std::vector<Contender>& contenders) {
  const int threads = ctx.threads();
  const size_t n = contenders.size();
  const size_t phases = static_cast<size_t>(rounds) * n;
  const auto active = [&](const Contender& c) { return c.threads > 0 ? std::min(c.threads, threads) : threads; };
  // A contender on fewer threads, or one with a step before its phases: every phase then starts with all
  // threads together, so a waiting thread joins none of the phase it waited through.
  bool staged = false;
  std::vector<std::unique_ptr<std::barrier<>>> sync;  // [contender], among the threads that run it
  for (const Contender& c : contenders) {
    staged = staged || active(c) < threads || c.before_phase;
    sync.push_back(std::make_unique<std::barrier<>>(active(c)));
  }
  std::vector<std::unique_ptr<Maintenance>> maintenance;
  for (int r = 0; r < rounds; ++r)
    for (const Contender& c : contenders) maintenance.push_back(std::make_unique<Maintenance>(active(c), c.maintain));
  RunControl phase;
  phase.duration_s = phase_s;
  phase.warmup_s = std::min(0.005, phase_s / 4);
  phase.per_op_timing = false;  // ratios of throughput: a timer read per operation would shrink the faster one
  struct Measured {
    uint64_t ops = 0;
    uint64_t active_ticks = 0;
    persist::Counters counters{};
  };
  std::vector<std::vector<Measured>> measured(threads, std::vector<Measured>(phases));  // [thread][round * n + c]
  std::barrier<> all(threads);
  const std::vector<std::vector<size_t>> orders = phase_orders(n);
  ctx.run_threads([&](ThreadState& t) {
    for (int r = 0; r < rounds; ++r) {
      for (size_t k = 0; k < n; ++k) {
        const size_t c = orders[static_cast<size_t>(r) % orders.size()][k];
        const size_t slot = static_cast<size_t>(r) * n + c;
        if (staged) {
          all.arrive_and_wait();
          if (t.index() == 0 && contenders[c].before_phase) contenders[c].before_phase();
          all.arrive_and_wait();
        }
        if (t.index() >= active(contenders[c])) continue;
        const LoopResult res = pausable_loop(phase, *sync[c], *maintenance[slot], [&](uint64_t first, uint64_t count) {
          return contenders[c].batch(t.index(), first, count);
        });
        measured[t.index()][slot] = {res.ops, res.active_ticks, res.counters};
      }
    }
  });
  const platform::Clock& clock = platform::Clock::get();
  InterleaveResult out;
  out.throughput.assign(rounds, std::vector<double>(n, 0.0));
  out.counters.assign(n, persist::Counters{});
  out.ops.assign(n, 0);
  for (int r = 0; r < rounds; ++r)
    for (size_t c = 0; c < n; ++c)
      for (int t = 0; t < threads; ++t) {
        const Measured& m = measured[t][static_cast<size_t>(r) * n + c];
        if (m.ops > 0 && m.active_ticks > 0)
          out.throughput[r][c] += static_cast<double>(m.ops) / (clock.to_ns(m.active_ticks) / 1e9);
        out.counters[c] += m.counters;
        out.ops[c] += m.ops;
      }
  return out;
}

}  // namespace pmlab::bench
