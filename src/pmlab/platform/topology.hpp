// CPUs this process may run on, NUMA nodes, and pinning.
#pragma once

#include <vector>

namespace pmlab::platform {

// The CPUs in this process's affinity mask, in order (what `taskset` / cgroups allow us).
std::vector<int> allowed_cpus();
// NUMA node ids present (from sysfs); {0} on a machine without NUMA information.
std::vector<int> numa_nodes();
// Node a CPU belongs to, or -1 when unknown.
int numa_node_of_cpu(int cpu);
// Pins the calling thread to one CPU; false if the kernel refuses (the run records it).
bool pin_current_thread(int cpu);

}  // namespace pmlab::platform
