// The memory tiers of a machine as its kernel describes them in sysfs: the NUMA nodes with their CPUs and
// memory, the distances the firmware reports between them (ACPI SLIT), the access attributes it reports for
// each node (ACPI HMAT: latency and bandwidth from its nearest initiators), the CXL memory devices and
// regions, and the DAX devices (devdax, or onlined as system RAM). Each node with memory gets a label —
// local, remote-socket, cxl or unknown — and the facts the label rests on, so a reader can judge it.
//
// Everything is read below one root directory ("/" on a live machine), so the tests read captured trees
// of machines this one is not (tests/platform/sysfs/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pmlab::platform {

// HMAT's attributes of a node's memory from one access class (access0: the nearest initiators of any
// kind; access1: the nearest with CPUs). Absent where the firmware gives none.
struct NodeAccess {
  int access_class = 0;
  std::vector<int> initiators;  // the nodes this class's attributes are measured from
  std::optional<uint64_t> read_latency_ns, write_latency_ns;
  std::optional<uint64_t> read_bandwidth_mb_s, write_bandwidth_mb_s;
};

enum class TierLabel { local, remote_socket, cxl, unknown };
const char* to_string(TierLabel label) noexcept;

struct MemoryNode {
  int id = 0;
  std::vector<int> cpus;
  uint64_t memory_bytes = 0;       // the node's MemTotal
  std::vector<int> distances;      // SLIT: to each of MemoryTopology::online_nodes, in order; empty: unknown
  std::vector<NodeAccess> access;  // HMAT
  TierLabel label = TierLabel::unknown;
  std::string evidence;  // what the label rests on, in words
};

struct CxlMemdev {
  std::string name;  // "mem0"
  uint64_t ram_bytes = 0, pmem_bytes = 0;
  std::optional<int> numa_node;  // the node of the host bridge it hangs off (not where its memory goes)
};

struct CxlRegion {
  std::string name;  // "region0"
  std::string mode;  // "ram" or "pmem" (as the kernel says; empty when it does not)
  uint64_t size_bytes = 0;
  unsigned interleave_ways = 0;
  std::vector<std::string> targets;  // the endpoint decoders, one per interleaved device
};

struct DaxDevice {
  std::string name;  // "dax0.0"
  std::string mode;  // "devdax" (device_dax), "system-ram" (kmem), or the driver's own name
  uint64_t size_bytes = 0;
  std::optional<int> target_node;  // the node its memory joins as system RAM, when onlined
  std::string cxl_region;          // the CXL region it exposes, or empty
};

struct MemoryTopology {
  std::vector<MemoryNode> nodes;  // every online node with memory or CPUs, by id
  // The online nodes, with or without CPUs and memory: the columns of every node's SLIT row.
  std::vector<int> online_nodes;
  int initiator_node = 0;  // the node labels are relative to
  std::vector<CxlMemdev> cxl_memdevs;
  std::vector<CxlRegion> cxl_regions;
  std::vector<DaxDevice> dax_devices;
  std::vector<std::string> notes;  // what could not be read, and what that leaves unknown
};

// What a pool file's memory is, traced from the device its file system is mounted from through sysfs: an
// nvdimm namespace (/dev/pmemN) in an nvdimm region, which a CXL persistent-memory region may provide, or
// a DAX device. The persistence domain is what the kernel reports for the nvdimm region
// (persistence_domain: memory_controller, writes durable once they reach the memory controller, so
// caches must be written back, the ADR model; cpu_cache, durable from the caches, the eADR model; for a
// CXL region the kernel reports memory_controller, which the device keeps through Global Persistent
// Flush). Nothing found is said, never guessed: the label is then "unknown" and the evidence says why.
struct PoolBacking {
  std::string label;               // "cxl-pmem", "nvdimm-pmem", "cxl-devdax", "devdax", "dram" or "unknown"
  std::string persistence_domain;  // "memory_controller", "cpu_cache", or empty when not reported
  std::string nd_region;           // "region1": the nvdimm region behind the device, when there is one
  std::string cxl_region;          // "region0": the CXL region behind it, when there is one
  std::string evidence;            // what the label rests on, in words
};

// `source`: the device the pool's file system is mounted from ("/dev/pmem1"), the pool's own path when it
// is a DAX device ("/dev/dax1.0"), or a file system without a device ("tmpfs").
PoolBacking pool_backing(const std::string& source, const std::filesystem::path& root = "/");

// The SLIT distance from node `from` to node `to`, or -1 where the firmware or the kernel did not say.
int slit_distance(const MemoryTopology& t, int from, int to);

// Reads the tiers below `root`, labelled relative to `initiator_node` (default: the lowest node with CPUs
// and memory). A missing file is a note, never an error: a kernel without HMAT or CXL support simply has
// fewer facts.
MemoryTopology read_memory_topology(const std::filesystem::path& root = "/", std::optional<int> initiator_node = {});

}  // namespace pmlab::platform
