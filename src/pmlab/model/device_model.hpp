// The device model attached to a live run (`pmlab run --model P` / `--emulate P`): a model::MemoryModel
// that feeds a Device from the Persister's write-backs and fences and from benchmark-reported reads and
// evictions, safely from every worker thread of the run.
//
// With emulation on, the run pays the modelled media cost in real time (spinning on the TSC):
// - a fence waits until every write the calling thread issued since its previous fence is accepted by
//   the modelled device (read-modify-write reads, prefetched lines, write latency, per-DIMM write
//   bandwidth backlog), counted from when the write was issued, so the host's own fence overlaps;
// - an eviction write-back waits only while the DIMM's write queue is full (nothing orders it);
// - a read reported with on_read waits the modelled latency beyond what the host's DRAM already cost.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "pmlab/model/memory_model.hpp"
#include "pmlab/model/device.hpp"

namespace pmlab::model {

class DeviceModel final : public model::MemoryModel {
 public:
  DeviceModel(DeviceParams params, bool emulate);

  void on_writeback(const void* addr, size_t len, persist::Writeback kind,
                    const std::source_location& where = std::source_location::current()) noexcept override;
  void on_fence(const std::source_location& where = std::source_location::current()) noexcept override;
  void on_read(const void* addr, size_t len) noexcept override;
  void on_evict(const void* addr, size_t len) noexcept override;
  void reset() noexcept override;
  // The device metrics (model = device name); with emulation also the delay it added.
  void add_metrics(record::RunRecord& record) const override;

  bool emulating() const noexcept { return emulate_; }
  const DeviceParams& params() const noexcept { return device_.params(); }
  // "emulated:<device>": the model name of every number measured on the emulated device.
  std::string emulation_label() const { return "emulated:" + device_.params().name; }
  DeviceCounters counters() const;

 private:
  class Guard;
  double since_reset(uint64_t tick) const noexcept;                 // the model's time, ns
  WriteTiming record_write(const void* addr, size_t len) noexcept;  // feeds the device, now
  // What `access(t)` returns, run on the device under the lock at the model's time t of now, the event noted.
  template <class Access>
  auto access_now(const Access& access) noexcept;
  void spin_until(double ns) const noexcept;
  // Widens the span of events seen (the run's time for EBR); lock-free, so fences need no lock.
  void note_event(uint64_t tick) noexcept;

  mutable std::atomic_flag lock_ = ATOMIC_FLAG_INIT;  // guards device_ and reads_
  Device device_;
  const bool emulate_;
  uint64_t generation_ = 0;  // tells stale per-thread fence state from this run's
  uint64_t base_tick_ = 0;   // time 0 of the model's clock, set by reset()
  uint64_t reads_ = 0;
  std::atomic<uint64_t> first_event_tick_{0};
  std::atomic<uint64_t> last_event_tick_{0};
  std::atomic<uint64_t> fences_{0};
  std::atomic<uint64_t> fence_wait_ticks_{0};
  std::atomic<uint64_t> read_wait_ticks_{0};
};

// Every number a run measured on an emulated device is modelled, not measured: relabels the record's
// measured metrics as modelled by `label` (e.g. "emulated:dcpmm").
void label_emulated(record::RunRecord& record, const std::string& label);

}  // namespace pmlab::model
