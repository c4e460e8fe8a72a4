// Facts about the machine that every result carries: kernel, host, counters, persistent-memory devices.
#pragma once

#include <string>
#include <vector>

namespace pmlab::platform {

std::string kernel_version();  // "Linux 6.1.0-… x86_64"
std::string hostname();
// `git rev-parse HEAD` of the source tree pmlab was built from, or "unknown".
std::string git_revision();

struct CounterSupport {
  bool available = false;
  std::string reason;  // why not, when not
};
// Whether perf_event_open can count hardware events (cycles, instructions) for this process.
CounterSupport hardware_counters();

// Persistent-memory related things visible on this machine; each entry a short description.
struct PmemInventory {
  std::vector<std::string> dax_mounts;    // "/mnt/pmem0 (xfs, dax)"
  std::vector<std::string> dax_devices;   // "/dev/dax0.0"
  std::vector<std::string> pmem_devices;  // "/dev/pmem0"
  std::vector<std::string> regions;       // "region0: persistence_domain=cpu_cache"
  std::vector<std::string> cxl_devices;   // "mem0"
  // "eadr" when an nvdimm region reports the CPU cache in its persistence domain, "adr" when it reports
  // the memory controller, "unknown" when no region says.
  std::string platform_domain = "unknown";
};
PmemInventory pmem_inventory();

// The mount holding a path: its file system type ("tmpfs", "xfs", "ext4", …) and the device it is mounted
// from ("/dev/pmem0", or "tmpfs" for a file system without one); "unknown" for both when none is found.
struct Mount {
  std::string type = "unknown";
  std::string source = "unknown";
};
Mount mount_of(const std::string& path);
inline std::string filesystem_of(const std::string& path) { return mount_of(path).type; }
// Transparent-huge-page mode in effect ("always", "madvise", "never"), or "unknown".
std::string transparent_hugepages();

}  // namespace pmlab::platform
