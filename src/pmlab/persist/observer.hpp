// The one hook point: everything that moves data toward durability passes through an Observer, if one
// is attached. The crash simulator keeps a durable image from these events; the device model turns them
// into memory-controller traffic; latency emulation delays fences.
#pragma once

#include <cstddef>
#include <source_location>

namespace pmlab::persist {

enum class Writeback : unsigned char {
  flush,     // cache lines written back by a flush instruction; the range covers whole lines
  nt_store,  // bytes written by non-temporal stores (exact range; edges flushed count here too)
};

class Observer {
 public:
  virtual ~Observer() = default;
  // After the instructions ran: the range is on its way to the durability domain, not yet ordered.
  virtual void on_writeback(const void* addr, size_t len, Writeback kind) noexcept = 0;
  // Before the fence runs: every writeback since the previous fence becomes durable at this point.
  // Called for every fence a design asks for, also where the domain issues no instruction.
  virtual void on_fence() noexcept = 0;
  // The same event with the design's source location (file:line of its fence or persist call), for
  // observers that report where things happened (the crash simulator). Defaults to on_fence().
  virtual void on_fence_at(const std::source_location& where) noexcept {
    (void)where;
    on_fence();
  }
};

}  // namespace pmlab::persist
