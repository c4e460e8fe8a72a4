// Where a run's threads run: on --cpu-node's CPUs, near the NUMA node its memory is bound to, or on every
// CPU this process may use. Internal to bench/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pmlab/media/region.hpp"
#include "pmlab/platform/memory_tiers.hpp"

namespace pmlab::bench {

// Where a run's threads run, and what its context says about it.
struct RunPlacement {
  std::vector<int> cpus;
  int node = -1;     // the node the CPUs were chosen on, or -1: every CPU this process may use
  std::string note;  // for a numa medium or --cpu-node: the memory's node, its tier, the threads' node
};

// The CPUs of `allowed` on node `node` (none when the topology has no such node).
std::vector<int> allowed_cpus_on(const platform::MemoryTopology& topology, const std::vector<int>& allowed, int node);

// The threads' node: `cpu_node` where given; for memory on a node, the nearest node with CPUs this process
// may use (the node itself when it has some); else none (every CPU of `allowed`).
RunPlacement placement_of(const platform::MemoryTopology& topology, const std::vector<int>& allowed,
                          std::optional<int> cpu_node, const media::Medium& medium);

}  // namespace pmlab::bench
