// Per-thread persistence counters: plain thread-local integers, so counting costs an add, not an atomic.
//
// A thread snapshots them before and after a measured region; the difference is that region's cost in
// persistence instructions. They count what was issued: an elided or domain-skipped flush is not counted.
#pragma once

#include <cstdint>

namespace pmlab::persist {

struct Counters {
  uint64_t flushes = 0;        // line flush instructions issued
  uint64_t flushed_bytes = 0;  // 64 × flushes
  uint64_t fences = 0;         // sfence instructions issued
  uint64_t nt_bytes = 0;       // bytes written with non-temporal stores

  Counters operator-(const Counters& o) const noexcept {
    return {flushes - o.flushes, flushed_bytes - o.flushed_bytes, fences - o.fences, nt_bytes - o.nt_bytes};
  }
  Counters& operator+=(const Counters& o) noexcept {
    flushes += o.flushes;
    flushed_bytes += o.flushed_bytes;
    fences += o.fences;
    nt_bytes += o.nt_bytes;
    return *this;
  }
};

inline constinit thread_local Counters tls_counters{};

inline Counters thread_counters() noexcept { return tls_counters; }

}  // namespace pmlab::persist
