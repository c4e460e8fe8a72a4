// The simulated durability domain: an Observer that keeps the durable image of a region.
//
// ADR: a cache line reaches the durable image when it has been written back (flush or non-temporal
// store) and a fence follows; the content that reaches it is the line as it was when written back.
// eADR: everything stored before a fence is durable at the fence. Either way, a line that was written
// but is not yet durable may reach memory at any moment (eviction), so at a crash the durable image may
// hold, for each such line, its durable content, its written-back snapshot, or its latest content.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <source_location>
#include <string>
#include <vector>

#include "pmlab/crash/subject.hpp"
#include "pmlab/persist/observer.hpp"

namespace pmlab::crash {

// The smallest piece a crash can split: a cache line, or an 8-byte word (torn-line mode; only aligned
// 8-byte stores are atomic on x86).
enum class Granularity : uint8_t { line, word };
const char* to_string(Granularity g) noexcept;

// One piece of the region that is not durable yet, with the values it may hold after a crash besides
// its durable one: the written-back snapshot (if any, and different) and the latest content.
struct PendingUnit {
  size_t offset = 0;
  size_t size = 0;
  std::vector<std::vector<std::byte>> candidates;  // 1 or 2 contents, each != durable
  bool written_back = false;                       // flushed or non-temporally stored since the last fence
};

class DurabilityTracker final : public persist::Observer {
 public:
  // `on_crash_point` runs at every fence, before the fence takes effect.
  DurabilityTracker(Image working, persist::Domain domain, std::function<void(const std::source_location&)> on_crash_point);

  // The working image as it is now becomes the durable image (after format, before tracking starts).
  void adopt_working_as_durable();

  void on_writeback(const void* addr, size_t len, persist::Writeback kind) noexcept override;
  void on_fence() noexcept override;
  void on_fence_at(const std::source_location& where) noexcept override;

  // The units a crash at this instant may or may not have persisted, in address order.
  std::vector<PendingUnit> pending(Granularity g) const;
  const std::vector<std::byte>& durable() const noexcept { return durable_; }
  uint64_t fences() const noexcept { return fences_; }

 private:
  void commit();

  Image working_;
  persist::Domain domain_;
  std::function<void(const std::source_location&)> on_crash_point_;
  std::vector<std::byte> durable_;
  std::map<size_t, std::vector<std::byte>> written_back_;  // line offset -> snapshot, since the last fence
  uint64_t fences_ = 0;
};

}  // namespace pmlab::crash
