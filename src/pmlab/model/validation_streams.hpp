// The access streams of the published experiments the model is validated against, driven through a
// Device as the memory controller would see them (64 B requests). Used by the `model` suite, which
// reports the results beside the published values, and by the validation tests.
#pragma once

#include <cstdint>

#include "pmlab/model/counters.hpp"
#include "pmlab/model/device_metrics.hpp"
#include "pmlab/model/device_params.hpp"

namespace pmlab::model {

struct StreamResult {
  DeviceCounters counters;
  DeviceMetrics metrics;  // device-bound: no run time, the busiest DIMM's media time
  uint64_t events = 0;    // 64 B requests driven
  double write_amplification() const noexcept { return metrics.ewr > 0 ? 1.0 / metrics.ewr : 0.0; }
};

// [PMIdioBench] I3: `threads` writers (16 in the paper), each writing `size`-byte pieces of its own region,
// consecutively or at random size-aligned offsets, interleaved request by request.
StreamResult small_writes(const DeviceParams& p, bool random, uint32_t size, uint32_t threads, uint64_t total_bytes,
                          uint64_t seed = 1);

// FAST'20 fig. 9 (XPBuffer capacity): on one DIMM, repeatedly write the first half of every media line
// of a `region`-byte region, then the second half of every line. Halves combine into whole lines only
// while the region fits the write-combining buffer.
StreamResult xpbuffer_probe(const DeviceParams& p, uint64_t region, uint64_t total_bytes);

// [PMIdioBench] I7: `repeats` full-line (256 B on DCPMM) non-temporal stores to one media line.
StreamResult repeated_line(const DeviceParams& p, uint32_t repeats);

// PMIdioBench I1's p-store test as test_i1.c runs it: `writers` threads (8 in the paper) each persist the
// same 64 B line, each issuing its next write when its previous one was accepted (its fence returned).
// Returns the mean ns per p-store of one writer, the published metric.
double one_line_pstore_ns(const DeviceParams& p, uint32_t writers, uint32_t pstores_per_writer);

// The idle load latency as Intel MLC's and memo's pointer chase measure it: `reads` dependent 64 B reads of
// random lines far apart, each issued when the previous one arrived. Returns the mean ns per read.
double idle_read_ns(const DeviceParams& p, uint32_t reads, uint64_t seed = 1);

// [PMIdioBench] I6: `threads` readers of `size`-byte pieces, consecutive or random, interleaved.
StreamResult reads(const DeviceParams& p, bool random, uint32_t size, uint32_t threads, uint64_t total_bytes,
                   uint64_t seed = 1);

}  // namespace pmlab::model
