// A DIMM's media as two servers, one for reads and one for writes, each busy for the media line's size
// divided by its bandwidth. Reads and writes proceed in parallel: FAST'20 measures random 64 B writes on
// one DIMM at a quarter of its 256 B write bandwidth (0.55 of 2.2 GB/s), which is the write server alone,
// although every one of them also costs a read-modify-write read.
#pragma once

#include <algorithm>

namespace pmlab::model {

class MediaServers {
 public:
  // Queues one media line read or write arriving at `t` (ns); returns when the media starts it.
  double read(double t, double service_ns) noexcept { return serve(read_free_, read_busy_, t, service_ns); }
  double write(double t, double service_ns) noexcept { return serve(write_free_, write_busy_, t, service_ns); }

  double write_free() const noexcept { return write_free_; }
  // Total time each server has been busy: the DIMM cannot have moved its traffic faster than this.
  double busy_ns() const noexcept { return std::max(read_busy_, write_busy_); }

 private:
  static double serve(double& free_at, double& busy, double t, double service) noexcept {
    const double start = std::max(t, free_at);
    free_at = start + service;
    busy += service;
    return start;
  }

  double read_free_ = 0;
  double write_free_ = 0;
  double read_busy_ = 0;
  double write_busy_ = 0;
};

}  // namespace pmlab::model
