// The modelled metrics of a run, from the device's counters (all kind modelled, model = device name).
//
//   ewr              bytes written at the memory controller / bytes written to the media
//                    ([PMIdioBench], FAST'20)
//   rwr              media bytes read / media bytes written (PMIdioBench's I7 read-write ratio)
//   imc_rwr          controller bytes read / written
//   ebr              achieved / peak bandwidth: the time the traffic needs at the device's peak, over the
//                    time it took (the run's own time, or the busiest DIMM's media time if longer)
//   device_bandwidth controller bytes / that same time (MiB/s)
//   read_hit_ratio, write_hit_ratio  requests served by / landing in an on-DIMM buffer
//   imc_read_bytes, imc_write_bytes, media_read_bytes, media_write_bytes, media_rmw_reads,
//   media_prefetch_reads, line_rewrite_waits (writes that waited for an earlier write of their line)
//   ipmctl_media_reads, ipmctl_media_writes, ipmctl_read_requests, ipmctl_write_requests
//                    the same traffic in the units of `ipmctl show -performance` (64 B each)
// Media writes include the lines still buffered at the end (DeviceCounters::buffered_lines).
#pragma once

#include <vector>

#include "pmlab/record/record.hpp"
#include "pmlab/model/counters.hpp"
#include "pmlab/model/device_params.hpp"

namespace pmlab::model {

struct DeviceMetrics {
  double ewr, rwr, imc_rwr, ebr, device_bandwidth_mib_s, read_hit_ratio, write_hit_ratio;
};

// NaN where a ratio has no denominator (written as null). `elapsed_ns` 0: the device-bound time only.
DeviceMetrics derive(const DeviceParams& p, const DeviceCounters& c, double busiest_dimm_ns, double elapsed_ns);

// Every metric above, named as listed; empty when the device saw no request.
std::vector<record::Metric> device_metrics(const DeviceParams& p, const DeviceCounters& c, double busiest_dimm_ns,
                                           double elapsed_ns);

}  // namespace pmlab::model
