// A side-by-side comparison in one run (speed targets are ratios measured this way): `rounds` rounds, and
// in each every contender runs for phase_s of active time on all threads at once. The orders form a
// balanced Latin square (phase_orders): over its rows every contender follows every other equally often,
// so none keeps inheriting one neighbour's cache and media state (with orders that only flipped, the
// third of four contenders followed libpmemblk in every other round). op(thread, i) returns false
// when the contender needs maintenance (a full log), which runs in a pause as in pausable_loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pmlab/bench/case.hpp"
#include "pmlab/persist/counters.hpp"

namespace pmlab::bench {

struct Contender {
  std::string name;
  std::function<bool(int thread, uint64_t i)> op;
  std::function<void()> maintain = [] {};
};

// What interleave measured, each contender in the order given.
struct InterleaveResult {
  // ops/s of each contender in each round: [round][contender], summed over threads.
  std::vector<std::vector<double>> throughput;
  // [contender], summed over rounds and threads, of the timed operations only (no warm-up, no maintenance):
  // what a contender's operation costs in persistence instructions is counters[c] / ops[c].
  std::vector<persist::Counters> counters;
  std::vector<uint64_t> ops;
};
InterleaveResult interleave(RunContext& ctx, int rounds, double phase_s, const std::vector<Contender>& contenders);

// A balanced Latin square (Williams) of n contenders: n orders (2n for odd n) in which each contender
// runs first equally often and directly follows each other contender equally often.
std::vector<std::vector<size_t>> phase_orders(size_t n);

}  // namespace pmlab::bench
