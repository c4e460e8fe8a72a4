// What the model counts: the traffic at the memory controller (in 64 B requests, like the DDR-T
// counters) and at the media (in media lines), and how the on-DIMM buffers served it.
#pragma once

#include <cstdint>

namespace pmlab::model {

struct DeviceCounters {
  uint64_t imc_reads = 0;       // 64 B read requests reaching the device
  uint64_t imc_writes = 0;      // 64 B write requests (write-backs, non-temporal stores, evictions)
  uint64_t read_hits = 0;       // reads served by an on-DIMM buffer
  uint64_t write_hits = 0;      // writes to a line already on the DIMM (write or read buffer): no media read
  uint64_t media_reads = 0;     // media lines read: demand misses, read-modify-write, prefetch
  uint64_t media_writes = 0;    // media lines written
  uint64_t rmw_reads = 0;       // media reads a partial write caused
  uint64_t prefetch_reads = 0;  // media reads the prefetcher issued
  uint64_t rewrite_waits = 0;   // writes that waited for an earlier write of the same 64 B line
  uint64_t fences = 0;          // fences seen (through the persistence layer)
  // Not a count of events but the state at the end: lines still in a write buffer, each owing one media
  // write when it leaves. The metrics count them as written, so a short run does not overstate EWR by
  // what it left behind (seen over a long run, as ipmwatch sees it, they are negligible).
  uint64_t buffered_lines = 0;

  uint64_t media_writes_owed() const noexcept { return media_writes + buffered_lines; }

  DeviceCounters& operator+=(const DeviceCounters& o) noexcept {
    imc_reads += o.imc_reads;
    imc_writes += o.imc_writes;
    read_hits += o.read_hits;
    write_hits += o.write_hits;
    media_reads += o.media_reads;
    media_writes += o.media_writes;
    rmw_reads += o.rmw_reads;
    prefetch_reads += o.prefetch_reads;
    rewrite_waits += o.rewrite_waits;
    fences += o.fences;
    buffered_lines += o.buffered_lines;
    return *this;
  }
};

}  // namespace pmlab::model
