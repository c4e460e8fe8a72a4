// CPUs this process may run on, NUMA nodes, and pinning.
#pragma once

#include <string>
#include <vector>

namespace pmlab::platform {

// The CPUs in this process's affinity mask, in order (what `taskset` / cgroups allow us).
std::vector<int> allowed_cpus();
// NUMA node ids present (from sysfs); {0} on a machine without NUMA information.
std::vector<int> numa_nodes();
// Node a CPU belongs to, or -1 when unknown.
int numa_node_of_cpu(int cpu);
// A CPU list as the kernel writes it (cpulist, shared_cpu_list): "0-3,8,10-11" -> {0,1,2,3,8,10,11};
// empty for empty or malformed text.
std::vector<int> parse_cpu_list(const std::string& text);
// Pins the calling thread to one CPU; false if the kernel refuses (the run records it).
bool pin_current_thread(int cpu);
// How many physical cores `cpus` span as the kernel describes them: CPUs that share a core (SMT siblings,
// `topology/core_cpus_list`, before Linux 5.7 `thread_siblings_list`) count once, and a CPU whose topology
// cannot be read counts as a core of its own. A guest sees what its hypervisor tells it, often one thread
// per core. `sysfs_root` prefixes /sys (a captured tree).
int physical_cores(const std::vector<int>& cpus, const std::string& sysfs_root = "");

}  // namespace pmlab::platform
