#include "pmlab/model/presets.hpp"

#include <cctype>
#include <cstdio>
#include <utility>

namespace pmlab::model {
namespace {

// Sources of the values (all in data/reference, see its README):
//   FAST'20 = Yang et al., An Empirical Guide to the Behavior and Use of Scalable Persistent Memory:
//     02-best_case_latency.csv  Optane random read 305.0 ns, sequential 169.4 ns, clwb write 62.3 ns;
//                               DRAM random read 101.5 ns, clwb write 57.3 ns (same platform)
//     05-bandwidth_accesssize_optane_ni.csv  one DIMM, >= 256 B: read ~6.5 GB/s, ntstore ~2.2 GB/s
//     04-bandwidth_thcount_dram.csv  six DRAM channels: read ~105.6 GB/s, ntstore ~76.8 GB/s
//     09-infer_xpbuffer.csv     write-combining knee at a 16-20 KB region: 64 XPLines of 256 B
//   PMIdioBench I1 (pmidiobench/pmem-idiosyncrasies.txt) with its test_i1.c method (8 threads persist
//                               one line): 2493 ns per p-store on Optane, 711.1 ns on DRAM; the least
//                               interval between two writes of one line is that / 8 (line_rewrite_ns)
//   [PMIdioBench]               6 DIMMs per socket, 4 KB interleave; I7: full XPLines are written out
//                               at once. The read buffer size and prefetch depth are not published:
//                               64 lines and 4 lines ahead are this model's assumptions.
DeviceParams dcpmm() {
  DeviceParams p;
  p.name = "dcpmm";
  p.description =
      "C4 Intel Optane DC PMM: 256 B XPLines, 16 KB XPBuffer (64 lines, LRU) with read-modify-write, "
      "read buffer with sequential prefetcher, 4 KB interleave over 6 DIMMs (FAST'20, [PMIdioBench])";
  return p;  // the struct's defaults are the DCPMM values
}

DeviceParams c1() {
  DeviceParams p;
  p.name = "c1";
  p.description = "C1 NVDIMM-N / battery-backed DRAM: DRAM timing and bandwidth, 64 B media lines, no buffers";
  p.media_line_bytes = 64;
  p.write_buffer_lines = 0;
  p.write_out_full_lines = false;
  p.read_buffer_lines = 0;
  p.prefetch_lines = 0;
  p.media_read_ns = 101.5;
  p.buffer_read_ns = 101.5;
  p.write_ns = 57.3;
  p.line_rewrite_ns = 711.1 / 8;  // PMIdioBench I1's DRAM p-store, one line persisted by 8 threads
  p.media_read_gbps = 105.56 / 6;
  p.media_write_gbps = 76.81 / 6;
  p.write_queue_bytes = 4096;  // the memory controller's write pending queue, 64 entries (assumed)
  return p;
}

DeviceParams c2() {
  DeviceParams p;
  p.name = "c2";
  p.description =
      "C2 PMEM with an internal cache and prefetcher: 64 B media lines (no mismatch), 16 KB write-back "
      "cache, 16 KB read buffer prefetching 4 lines ahead; DCPMM media timing";
  p.media_line_bytes = 64;
  p.write_buffer_lines = 256;
  p.write_out_full_lines = false;  // a write-back cache keeps lines: with 64 B lines every write fills one
  p.read_buffer_lines = 256;
  p.prefetch_lines = 4;  // as many lines ahead as DCPMM's prefetcher (an assumption, like DCPMM's)
  return p;
}

DeviceParams c3() {
  DeviceParams p;
  p.name = "c3";
  p.description =
      "C3 PMEM with an access-granularity mismatch: 256 B media lines, no buffers, so every partial "
      "write is a read-modify-write; DCPMM media timing";
  p.write_buffer_lines = 0;
  p.write_out_full_lines = false;
  p.read_buffer_lines = 0;
  p.prefetch_lines = 0;
  p.write_queue_bytes = 4096;
  return p;
}

// CXL memory expanders ([CXLDemystified], [Pond]; published points in data/reference/cxl/cxl-points.csv,
// which names where each was found: the Sun et al. values are those its text states, as a summary of
// the paper gives them, not read from its figures). CXL Type-3 memory is DRAM behind a controller on a PCIe link: the
// CPU reads and writes it in 64 B lines, so the presets have 64 B media lines, no on-device buffers and one device (no
// interleave). The studies publish latency relative to DRAM on their own platforms; the presets apply those relations
// to this model's host DRAM, FAST'20's 101.5 ns random read (host_read_ns), so an emulated run pays what the CXL device
// adds over the DRAM it runs on.
//
// The remote-socket DRAM ([CXLDemystified]'s DDR5-R) the Sun et al. ratios are relative to is this
// model's assumption: host DRAM x 142 / 78, the remote/local idle latencies Pond measured on its
// emulation platform ([Pond] Fig. 4). Not published for CXL, so this model's assumptions: writes as fast
// as reads (media_write_gbps), a persist costs the host DRAM's 57.3 ns (FAST'20 clwb) plus what the link
// adds to a read, the DRAM rewrite interval of c1 (PMIdioBench I1), and c1's 4 KB write queue.
constexpr double kHostReadNs = 101.5;                     // FAST'20 DRAM random read (the model's host)
constexpr double kRemoteDramNs = kHostReadNs * 142 / 78;  // assumption: Pond Fig. 4's remote/local ratio
constexpr double kDramPersistNs = 57.3;                   // FAST'20 DRAM clwb write

DeviceParams cxl(std::string name, std::string description, double read_ns, double gbps) {
  DeviceParams p;
  p.name = std::move(name);
  p.description = std::move(description);
  p.dimms = 1;  // one expander; interleaving across expanders or with DRAM is not modelled
  p.media_line_bytes = 64;
  p.write_buffer_lines = 0;
  p.write_out_full_lines = false;
  p.read_buffer_lines = 0;
  p.prefetch_lines = 0;
  p.media_read_ns = read_ns;
  p.buffer_read_ns = read_ns;  // no buffer: unused
  p.write_ns = kDramPersistNs + (read_ns - kHostReadNs);
  p.host_read_ns = kHostReadNs;
  p.line_rewrite_ns = 711.1 / 8;  // c1's DRAM value (assumption)
  p.media_read_gbps = gbps;
  p.media_write_gbps = gbps;   // assumption
  p.write_queue_bytes = 4096;  // as c1 (assumption)
  return p;
}

// The expanders of [CXLDemystified]: load latency as a multiple of DDR5-R's (§4.1, O2) and Intel MLC's
// all-read bandwidth as a fraction of the device DRAM's theoretical bandwidth (§4.2, O4).
DeviceParams sun_device(const char* name, const char* hardware, double over_remote, double efficiency,
                        double peak_gbps) {
  char description[256];
  std::snprintf(description, sizeof description,
                "%s of [CXLDemystified]: %s; load latency %.2gx remote-socket DRAM, reads at %.0f%% of %.1f GB/s "
                "(modelled from published ratios)",
                name, hardware, over_remote, efficiency * 100, peak_gbps);
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return cxl(lower, description, over_remote * kRemoteDramNs, efficiency * peak_gbps);
}

// 1.35x DDR5-R; 46% of the 38.4 GB/s of DDR5-4800.
DeviceParams cxl_a() { return sun_device("CXL-A", "ASIC CXL controller, DDR5-4800", 1.35, 0.46, 38.4); }
// About 2x; 47% of 19.2 GB/s, the theoretical bandwidth the summary gives for CXL-B's DDR4-2400 (one
// channel's worth).
DeviceParams cxl_b() { return sun_device("CXL-B", "ASIC CXL controller, DDR4-2400", 2.0, 0.47, 19.2); }
// About 3x; 20% of the 25.6 GB/s of DDR4-3200.
DeviceParams cxl_c() { return sun_device("CXL-C", "FPGA (soft IP) CXL controller, DDR4-3200", 3.0, 0.20, 25.6); }

// [Pond]: a pool shared by 8-16 sockets adds 70-90 ns over same-NUMA-node DRAM (the authors' estimate);
// the preset takes the middle, 80 ns (assumption). Pond publishes no pool bandwidth: CXL-A's is this
// model's assumption (an ASIC controller with DDR5, as Pond's external memory controller).
DeviceParams cxl_pool() {
  return cxl("cxl-pool",
             "CXL memory pool of [Pond] shared by 8-16 sockets: 80 ns over local DRAM (published estimate "
             "70-90 ns), CXL-A's bandwidth (assumption)",
             kHostReadNs + 80.0, 0.46 * 38.4);
}

}  // namespace

std::optional<DeviceParams> preset(std::string_view name) {
  if (name == "dcpmm" || name == "c4") return dcpmm();
  if (name == "c1") return c1();
  if (name == "c2") return c2();
  if (name == "c3") return c3();
  if (name == "cxl-a") return cxl_a();
  if (name == "cxl-b") return cxl_b();
  if (name == "cxl-c") return cxl_c();
  if (name == "cxl-pool") return cxl_pool();
  return std::nullopt;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names{"c1", "c2", "c3", "dcpmm", "cxl-a", "cxl-b", "cxl-c", "cxl-pool"};
  return names;
}

}  // namespace pmlab::model
