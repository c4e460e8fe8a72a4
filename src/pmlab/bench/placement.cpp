#include "pmlab/bench/placement.hpp"

#include <algorithm>
#include <climits>

namespace pmlab::bench {
namespace {

const platform::MemoryNode* node_named(const platform::MemoryTopology& t, int id) {
  for (const platform::MemoryNode& n : t.nodes)
    if (n.id == id) return &n;
  return nullptr;
}

// The SLIT distance from `from` to `to`; where unknown, the node itself is nearest and the others far.
int distance(const platform::MemoryTopology& t, const platform::MemoryNode& from, int to) {
  const int d = platform::slit_distance(t, from.id, to);
  return d >= 0 ? d : from.id == to ? 10 : 255;
}

}  // namespace

std::vector<int> allowed_cpus_on(const platform::MemoryTopology& topology, const std::vector<int>& allowed, int node) {
  std::vector<int> on;
  if (const platform::MemoryNode* n = node_named(topology, node))
    for (const int cpu : allowed)
      if (std::find(n->cpus.begin(), n->cpus.end(), cpu) != n->cpus.end()) on.push_back(cpu);
  return on;
}

RunPlacement placement_of(const platform::MemoryTopology& topology, const std::vector<int>& allowed,
                          std::optional<int> cpu_node, const media::Medium& medium) {
  RunPlacement p;
  int chosen = cpu_node.value_or(-1);
  const platform::MemoryNode* memory = medium.kind == media::Kind::numa ? node_named(topology, medium.node) : nullptr;
  if (chosen < 0 && memory) {
    int best = INT_MAX;
    for (const platform::MemoryNode& n : topology.nodes)
      if (const int d = distance(topology, *memory, n.id);
          d < best && !allowed_cpus_on(topology, allowed, n.id).empty()) {
        best = d;
        chosen = n.id;
      }
  }
  if (chosen < 0) {
    p.cpus = allowed;
    return p;
  }
  p.cpus = allowed_cpus_on(topology, allowed, chosen);
  p.node = chosen;
  std::string cpus;
  for (const int c : p.cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
  p.note = "threads on node " + std::to_string(chosen) + " (CPUs " + cpus + ")" +
           (cpu_node ? " by --cpu-node" : ", the nearest node with CPUs");
  if (memory)
    p.note = "memory bound to node " + std::to_string(memory->id) + ", every page checked on it; the node is " +
             platform::to_string(memory->label) + " (" + memory->evidence + "); " + p.note;
  return p;
}

}  // namespace pmlab::bench
