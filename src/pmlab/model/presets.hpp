// The PMEM classes of [PMIdioBench] (Table 2), and CXL memory, as device presets.
//
//   c1     NVDIMM-N / battery-backed DRAM: DRAM timing, 64 B media lines, no buffers
//   c2     PMEM with an internal cache and prefetcher, no access-granularity mismatch
//   c3     PMEM with an access-granularity mismatch (256 B media lines), no buffers
//   dcpmm  Intel Optane DC PMM (c4): 256 B XPLines, 16 KB XPBuffer, read buffer and prefetcher
//
// c2 and c3 keep DCPMM's media timing, so each class differs from DCPMM by its mechanism only.
//
// CXL memory (modelled from published measurements; docs/device-model.md, "CXL memory"):
//   cxl-a, cxl-b, cxl-c  the three expanders of [CXLDemystified]: latency and read bandwidth
//   cxl-pool             a memory pool shared by 8-16 sockets ([Pond]): the latency it adds
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmlab/model/device_params.hpp"

namespace pmlab::model {

// The preset's parameters; "c4" is an alias of "dcpmm".
std::optional<DeviceParams> preset(std::string_view name);
// Names accepted by preset(), aliases excluded: the PMEM classes in class order, then the CXL presets.
const std::vector<std::string>& preset_names();

}  // namespace pmlab::model
