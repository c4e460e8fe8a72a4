// Where I4's threads run relative to the memory they write: on the memory's NUMA node (local) or on
// another node (remote). Pure placement logic, testable with made-up topologies, plus the queries that
// feed it from sysfs and the kernel.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::suites::idio {

enum class Locality { local, remote };
Locality parse_locality(const std::string& text);

// Allowed CPUs grouped by NUMA node.
using CpusByNode = std::map<int, std::vector<int>>;
CpusByNode allowed_cpus_by_node();

// Why local/remote cannot be measured with these nodes, or nothing when it can.
std::optional<std::string> numa_skip_reason(const std::vector<int>& nodes);

// The CPUs for `threads` threads touching memory on `memory_node`: its own CPUs (local) or those of the
// other node with the most allowed CPUs (remote). One CPU per thread; an error says why not.
Result<std::vector<int>> place_threads(Locality locality, int memory_node, const CpusByNode& cpus, int threads);

// The NUMA node holding the page at `addr` (touched first, so it is resident), or -1 when the kernel
// does not say.
int memory_node_of(const void* addr);

}  // namespace pmlab::suites::idio
