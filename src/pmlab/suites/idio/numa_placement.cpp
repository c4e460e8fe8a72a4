#include "pmlab/suites/idio/numa_placement.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <stdexcept>

#include "pmlab/platform/topology.hpp"

namespace pmlab::suites::idio {

Locality parse_locality(const std::string& text) {
  if (text == "local") return Locality::local;
  if (text == "remote") return Locality::remote;
  throw std::invalid_argument("unknown locality '" + text + "'");
}

CpusByNode allowed_cpus_by_node() {
  CpusByNode out;
  for (int cpu : platform::allowed_cpus()) out[platform::numa_node_of_cpu(cpu)].push_back(cpu);
  return out;
}

std::optional<std::string> numa_skip_reason(const std::vector<int>& nodes) {
  if (nodes.size() >= 2) return std::nullopt;
  return "one NUMA node (node " + std::to_string(nodes.empty() ? 0 : nodes.front()) +
         "): remote p-store bandwidth needs at least two";
}

Result<std::vector<int>> place_threads(Locality locality, int memory_node, const CpusByNode& cpus, int threads) {
  if (memory_node < 0) return error(Errc::unsupported, "the kernel does not say which NUMA node holds the memory");
  int node = memory_node;
  if (locality == Locality::remote) {
    node = -1;
    size_t most = 0;
    for (const auto& [n, list] : cpus)
      if (n != memory_node && n >= 0 && list.size() > most) {
        node = n;
        most = list.size();
      }
    if (node < 0)
      return error(Errc::unsupported,
                   "no allowed CPU outside NUMA node " + std::to_string(memory_node) + " (the memory's)");
  }
  const auto it = cpus.find(node);
  const size_t have = it == cpus.end() ? 0 : it->second.size();
  if (have < static_cast<size_t>(threads))
    return error(Errc::unsupported, "threads=" + std::to_string(threads) + " but NUMA node " + std::to_string(node) +
                                        " has " + std::to_string(have) + " allowed CPUs");
  return std::vector<int>(it->second.begin(), it->second.begin() + threads);
}

int memory_node_of(const void* addr) {
  // Touch the byte itself (the start of its page may not be ours to read), then ask about the page.
  (void)*static_cast<const volatile char*>(addr);
  const auto page = reinterpret_cast<uintptr_t>(addr) & ~uintptr_t{4095};
  void* pages[1] = {reinterpret_cast<void*>(page)};
  int status[1] = {-1};
  // move_pages with no target nodes only reports where each page is.
  if (syscall(SYS_move_pages, 0, 1UL, pages, nullptr, status, 0) != 0) return -1;
  return status[0] >= 0 ? status[0] : -1;
}

}  // namespace pmlab::suites::idio
