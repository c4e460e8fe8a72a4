// One DIMM of the modelled device: its write-combining buffer, read buffer, prefetcher and media.
//
// Events are 64 B memory-controller requests, as DDR-T carries them. Times are ns on the caller's clock;
// the trace-driven metrics need no clock at all (pass 0), emulation passes the real time.
#pragma once

#include <cstdint>
#include <vector>

#include "pmlab/model/buffers.hpp"
#include "pmlab/model/counters.hpp"
#include "pmlab/model/device_params.hpp"
#include "pmlab/model/media_servers.hpp"

namespace pmlab::model {

// When a write may proceed (the DIMM had room for it) and when the device has accepted it.
struct WriteTiming {
  double admitted_ns = 0;
  double accepted_ns = 0;
};

class Dimm {
 public:
  explicit Dimm(const DeviceParams& p);

  // A write of the bytes in `mask` (bit b: byte b) of sector `sector` of media line `line`, arriving at
  // `t`. Accepted is when a fence ordering it may complete.
  WriteTiming write(uint64_t line, uint32_t sector, uint64_t mask, double t);
  // A 64 B read of media line `line` arriving at `t`; returns when its data reaches the CPU.
  double read(uint64_t line, double t);

  void reset();
  const DeviceCounters& counters() const noexcept { return counters_; }
  // Lines in the write buffer now: each will reach the media once, when it leaves.
  uint32_t buffered_lines() const noexcept { return write_buffer_.size(); }
  double busy_ns() const noexcept { return media_.busy_ns(); }

 private:
  void prefetch_around(uint64_t line, double t);
  double media_read(double t);  // returns when the data is available
  void media_write(double t);
  // The earliest a new write is accepted: while more media writes are queued than the DIMM can hold,
  // writers wait (the buffer, or the controller's write queue, is full).
  double admission(double t) const noexcept;
  // Applies the same-line rule to a write of sector `sector` of `line` the device would accept at
  // `accepted`: returns when it is accepted, and remembers it for the line's next write.
  double order_after_previous_write(uint64_t line, uint32_t sector, double accepted);

  // The last accepted write of recently written 64 B lines, direct-mapped: a slot another line takes
  // only forgets a constraint, and the constraint only matters for a few hundred ns anyway.
  struct RecentWrite {
    uint64_t key = ~uint64_t{0};
    double accepted_ns = 0;
  };
  static constexpr size_t kRecentWrites = 1024;

  uint32_t sectors_;
  bool write_out_full_;
  double media_read_ns_;
  double buffer_read_ns_;
  double write_ns_;
  double read_service_ns_;
  double write_service_ns_;
  double queue_ns_;
  double rewrite_ns_;

  WriteBuffer write_buffer_;
  ReadBuffer read_buffer_;
  SequentialPrefetcher prefetcher_;
  MediaServers media_;
  std::vector<RecentWrite> recent_writes_;
  DeviceCounters counters_;
};

}  // namespace pmlab::model
