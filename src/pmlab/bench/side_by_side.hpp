// A side-by-side comparison in one run (speed targets are ratios measured this way): `rounds` rounds, and
// in each every contender runs for phase_s of active time on all threads at once. The orders form a
// balanced Latin square (phase_orders): over its rows every contender follows every other equally often,
// so none keeps inheriting one neighbour's cache and media state (with orders that only flipped, the
// third of four contenders followed libpmemblk in every other round). An operation returns false when
// the contender needs maintenance (a full log), which runs in a pause as in pausable_loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/bench/pausable_loop.hpp"
#include "pmlab/persist/counters.hpp"

namespace pmlab::bench {

struct Contender {
  // op(thread, i) -> bool, one operation (false: it needs maintenance first). It is compiled into a loop
  // that runs a batch of operations per call (run_batch), so what a call costs is not an operation's.
  template <class Op>
  Contender(
      std::string contender_name, Op op, std::function<void()> maintenance = [] {})
      : name(std::move(contender_name)),
        batch([op = std::move(op)](int thread, uint64_t first, uint64_t n) mutable {
          auto on_thread = [&](uint64_t i) { return op(thread, i); };
          return run_batch(on_thread, first, n);
        }),
        maintain(std::move(maintenance)) {}

  std::string name;
  // Runs operations first… on `thread` until n ran or one needed maintenance; returns how many ran.
  std::function<uint64_t(int thread, uint64_t first, uint64_t n)> batch;
  std::function<void()> maintain;
  // The threads that run this contender's phases: 0 (all of the run's), or threads 0 … n-1 while the others
  // wait for the next phase (one structure measured at two thread counts).
  int threads = 0;
  // Runs on one thread before each of this contender's phases, while every other thread waits (a
  // structure switched between its one-thread and its shared paths).
  std::function<void()> before_phase;
};

// What interleave measured, each contender in the order given.
struct InterleaveResult {
  // ops/s of each contender in each round: [round][contender], summed over threads.
  std::vector<std::vector<double>> throughput;
  // [contender], summed over rounds and threads, of the timed operations only (no warm-up, no maintenance):
  // what a contender's operation costs in persistence instructions is counters[c] / ops[c].
  std::vector<persist::Counters> counters;
  std::vector<uint64_t> ops;

  // Contender c's throughput in each round, and a's over b's round by round.
  std::vector<double> rounds_of(size_t c) const;
  std::vector<double> ratios(size_t a, size_t b) const;
};
InterleaveResult interleave(RunContext& ctx, int rounds, double phase_s, const std::vector<Contender>& contenders);

// A phase's length: --duration over 10 phases under --quick and 50 otherwise, at least 10 ms. Many short
// phases rather than a few long ones: a shared machine's speed changes in spells longer than a round of
// 10 ms phases, so most rounds fall inside one spell and their ratios are undisturbed (the measurements
// behind this: docs/primitives.md, "Benchmarks and targets").
double phase_seconds(RunContext& ctx);

// A balanced Latin square (Williams) of n contenders: n orders (2n for odd n) in which each contender
// runs first equally often and directly follows each other contender equally often.
std::vector<std::vector<size_t>> phase_orders(size_t n);

}  // namespace pmlab::bench
