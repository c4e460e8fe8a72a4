// The trace-driven device model: byte ranges in, 64 B memory-controller requests routed to DIMMs,
// per-DIMM buffer and media state, counters out. Single-threaded and clock-free: DeviceModel adds the
// locking, the clock and emulation for live runs; validation streams and tests drive it directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pmlab/model/counters.hpp"
#include "pmlab/model/device_params.hpp"
#include "pmlab/model/dimm.hpp"
#include "pmlab/model/interleave.hpp"

namespace pmlab::model {

class Device {
 public:
  explicit Device(DeviceParams params);

  // Bytes [addr, addr+len) written toward the device at `t` ns: one request per 64 B line they touch,
  // with the exact bytes as its mask (a flush write-back covers whole lines). Returns when the last of
  // them was admitted and accepted.
  WriteTiming write(uint64_t addr, size_t len, double t = 0);
  // Bytes [addr, addr+len) read from the device at `t` (whole 64 B lines). Returns when the last arrives.
  double read(uint64_t addr, size_t len, double t = 0);

  void reset();
  const DeviceParams& params() const noexcept { return params_; }
  // Counts so far, with the lines now in the write buffers as `buffered_lines`.
  DeviceCounters counters() const;
  // The media busy time of the busiest DIMM: no schedule could move this traffic in less time.
  double busiest_dimm_ns() const;

 private:
  DeviceParams params_;
  Interleave interleave_;
  std::vector<Dimm> dimms_;
};

}  // namespace pmlab::model
