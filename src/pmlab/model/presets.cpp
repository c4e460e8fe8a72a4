#include "pmlab/model/presets.hpp"

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

}  // namespace

std::optional<DeviceParams> preset(std::string_view name) {
  if (name == "dcpmm" || name == "c4") return dcpmm();
  if (name == "c1") return c1();
  if (name == "c2") return c2();
  if (name == "c3") return c3();
  return std::nullopt;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names{"c1", "c2", "c3", "dcpmm"};
  return names;
}

}  // namespace pmlab::model
