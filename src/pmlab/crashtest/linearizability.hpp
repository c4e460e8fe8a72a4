// Durable linearizability of a concurrent run, checked after a crash (the criterion of Izraelevitz,
// Mendes and Scott, "Linearizability of Persistent Memory Objects Under a Full-System-Crash Failure
// Model", DISC 2016): the recovered state must be the state after some linearization of
// every operation that returned before the crash and any of those still in flight, that respects real
// time (an operation that returned before another began comes first) and every returned result.
//
// The search walks the threads' operations in order, memoizing (positions, state), so a run of a few
// threads and tens of operations each is checked at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_set>
#include <vector>

#include "pmlab/common/random.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash {

struct HistoryOp {
  uint32_t op = 0;
  size_t began = 0;                                      // index of its beginning in the history
  size_t returned = std::numeric_limits<size_t>::max();  // index of its return; max while in flight
  uint64_t result = 0;
  bool in_flight() const noexcept { return returned == std::numeric_limits<size_t>::max(); }
};

// The history's operations, per thread in the order each thread ran them.
inline std::vector<std::vector<HistoryOp>> operations_by_thread(const std::vector<OpEvent>& history) {
  std::vector<std::vector<HistoryOp>> out;
  for (size_t i = 0; i < history.size(); ++i) {
    const OpEvent& e = history[i];
    if (out.size() <= e.thread) out.resize(e.thread + 1);
    auto& ops = out[e.thread];
    if (!e.returned) {
      ops.push_back({.op = e.op, .began = i});
    } else if (!ops.empty() && ops.back().op == e.op && ops.back().in_flight()) {
      ops.back().returned = i;
      ops.back().result = e.result;
    }
  }
  return out;
}

// Whether some linearization of `history` takes `initial` to `recovered`. `step(state, thread, op,
// result)` applies one operation: the state after it, or nullopt when it could not have returned `result`
// from `state`; `result` is nullopt for an operation in flight (any result will do). State needs == and
// a hash (std::hash unless given).
template <class State, class Hash = std::hash<State>, class Step>
bool durably_linearizable(const std::vector<OpEvent>& history, const State& initial, const State& recovered,
                          Step&& step) {
  const auto threads = operations_by_thread(history);
  const size_t n = threads.size();
  struct Node {
    std::vector<uint32_t> at;  // per thread: operations linearized (or dropped: at == size)
    State state;
    bool operator==(const Node& o) const { return at == o.at && state == o.state; }
  };
  struct NodeHash {
    size_t operator()(const Node& v) const {
      uint64_t h = Hash{}(v.state);
      for (uint32_t a : v.at) h = mix64(h ^ a);
      return static_cast<size_t>(h);
    }
  };
  std::unordered_set<Node, NodeHash> seen;
  std::vector<Node> stack{Node{std::vector<uint32_t>(n, 0), initial}};
  while (!stack.empty()) {
    Node v = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(v).second) continue;
    bool finished = true;
    for (size_t t = 0; t < n; ++t) finished = finished && v.at[t] == threads[t].size();
    if (finished && v.state == recovered) return true;
    for (size_t t = 0; t < n; ++t) {
      if (v.at[t] == threads[t].size()) continue;
      const HistoryOp& x = threads[t][v.at[t]];
      // Real time: no operation still to be linearized returned before x began.
      bool eligible = true;
      for (size_t u = 0; u < n && eligible; ++u)
        if (u != t && v.at[u] < threads[u].size()) eligible = threads[u][v.at[u]].returned > x.began;
      if (!eligible) continue;
      if (x.in_flight()) {  // it may not have taken effect at all
        Node dropped = v;
        dropped.at[t] = static_cast<uint32_t>(threads[t].size());
        stack.push_back(std::move(dropped));
      }
      std::optional<State> after = step(v.state, static_cast<unsigned>(t), x.op,
                                        x.in_flight() ? std::nullopt : std::optional<uint64_t>(x.result));
      if (!after) continue;
      Node next{v.at, std::move(*after)};
      ++next.at[t];
      stack.push_back(std::move(next));
    }
  }
  return false;
}

}  // namespace pmlab::crash
