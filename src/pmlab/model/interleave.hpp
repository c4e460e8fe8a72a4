// Where an address lives: interleaving spreads consecutive `interleave_bytes` chunks round-robin over
// the DIMMs, and each DIMM sees its chunks as one contiguous local address space (so a sequential
// stream stays sequential on every DIMM it touches, as the prefetcher needs).
//
// The model is fed virtual addresses; pools and DRAM regions are page-aligned, so 4 KB interleaving of
// virtual addresses matches the physical one up to which DIMM comes first.
#pragma once

#include <cstdint>

#include "pmlab/model/device_params.hpp"

namespace pmlab::model {

struct Location {
  uint32_t dimm = 0;
  uint64_t line = 0;    // media line number within the DIMM
  uint32_t sector = 0;  // which 64 B piece of the media line
};

class Interleave {
 public:
  explicit Interleave(const DeviceParams& p)
      : dimms_(p.dimms), chunk_shift_(log2(p.interleave_bytes)), line_shift_(log2(p.media_line_bytes)) {}

  // `addr` is the start of a 64 B memory-controller line.
  Location locate(uint64_t addr) const noexcept {
    const uint64_t chunk = addr >> chunk_shift_;
    const uint64_t within = addr & ((uint64_t{1} << chunk_shift_) - 1);
    const uint64_t local = ((chunk / dimms_) << chunk_shift_) | within;
    return {static_cast<uint32_t>(chunk % dimms_), local >> line_shift_,
            static_cast<uint32_t>((local & ((uint64_t{1} << line_shift_) - 1)) / kImcLine)};
  }

 private:
  static uint32_t log2(uint32_t v) noexcept { return static_cast<uint32_t>(__builtin_ctz(v)); }
  uint64_t dimms_;
  uint32_t chunk_shift_;
  uint32_t line_shift_;
};

}  // namespace pmlab::model
