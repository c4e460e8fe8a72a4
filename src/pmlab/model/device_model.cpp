#include "pmlab/model/device_model.hpp"

#include <immintrin.h>

#include <algorithm>

#include "pmlab/model/device_metrics.hpp"
#include "pmlab/platform/clock.hpp"

namespace pmlab::model {
namespace {

// Unique across models, so a thread's leftover state from an earlier run or model never matches.
std::atomic<uint64_t> next_generation{1};

// Writes the calling thread issued since its last fence: the fence waits for the latest of them.
struct PendingWrites {
  uint64_t generation = 0;
  double accepted_ns = 0;
};
thread_local PendingWrites tls_pending;

uint64_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

// A test-and-test-and-set lock: held for one event's bookkeeping (well under a microsecond), so
// spinning beats sleeping, and the emulated waits happen outside it.
class DeviceModel::Guard {
 public:
  explicit Guard(std::atomic_flag& flag) noexcept : flag_(flag) {
    while (flag_.test_and_set(std::memory_order_acquire))
      while (flag_.test(std::memory_order_relaxed)) _mm_pause();
  }
  ~Guard() { flag_.clear(std::memory_order_release); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  std::atomic_flag& flag_;
};

DeviceModel::DeviceModel(DeviceParams params, bool emulate) : device_(std::move(params)), emulate_(emulate) { reset(); }

double DeviceModel::since_reset(uint64_t tick) const noexcept {
  // Another core's TSC may trail by a few ticks right after reset().
  return tick > base_tick_ ? platform::Clock::get().to_ns(tick - base_tick_) : 0.0;
}

void DeviceModel::spin_until(double ns) const noexcept {
  const uint64_t target = base_tick_ + platform::Clock::get().from_ns(ns);
  while (platform::Clock::now() < target) _mm_pause();
}

void DeviceModel::note_event(uint64_t tick) noexcept {
  uint64_t expected = 0;
  first_event_tick_.compare_exchange_strong(expected, tick, std::memory_order_relaxed);
  uint64_t last = last_event_tick_.load(std::memory_order_relaxed);
  while (last < tick && !last_event_tick_.compare_exchange_weak(last, tick, std::memory_order_relaxed)) {}
}

template <class Access>
auto DeviceModel::access_now(const Access& access) noexcept {
  const uint64_t tick = platform::Clock::now();
  const double t = since_reset(tick);
  decltype(access(t)) result;
  {
    Guard g(lock_);
    result = access(t);
  }
  note_event(tick);
  return result;
}

WriteTiming DeviceModel::record_write(const void* addr, size_t len) noexcept {
  return access_now([&](double t) { return device_.write(address(addr), len, t); });
}

void DeviceModel::on_writeback(const void* addr, size_t len, persist::Writeback, const std::source_location&) noexcept {
  const WriteTiming w = record_write(addr, len);
  if (!emulate_) return;
  if (tls_pending.generation != generation_) tls_pending = {generation_, 0};
  tls_pending.accepted_ns = std::max(tls_pending.accepted_ns, w.accepted_ns);
}

void DeviceModel::on_fence(const std::source_location&) noexcept {
  // Bookkeeping first and without a lock: it then overlaps the modelled wait instead of adding to it.
  const uint64_t before = platform::Clock::now();
  fences_.fetch_add(1, std::memory_order_relaxed);
  note_event(before);
  if (emulate_ && tls_pending.generation == generation_ && tls_pending.accepted_ns > 0) {
    spin_until(tls_pending.accepted_ns);
    fence_wait_ticks_.fetch_add(platform::Clock::now() - before, std::memory_order_relaxed);
    tls_pending.accepted_ns = 0;
  }
}

void DeviceModel::on_read(const void* addr, size_t len) noexcept {
  const double arrives = access_now([&](double t) {
    const double at = device_.read(address(addr), len, t);
    ++reads_;
    return at;
  });
  if (!emulate_) return;
  // The loads already paid the host's DRAM latency: wait only for the rest of the device's.
  const uint64_t before = platform::Clock::now();
  spin_until(arrives - device_.params().host_read_ns);
  read_wait_ticks_.fetch_add(platform::Clock::now() - before, std::memory_order_relaxed);
}

void DeviceModel::on_evict(const void* addr, size_t len) noexcept {
  const WriteTiming w = record_write(addr, len);
  if (emulate_) spin_until(w.admitted_ns);
}

void DeviceModel::reset() noexcept {
  Guard g(lock_);
  device_.reset();
  generation_ = next_generation.fetch_add(1, std::memory_order_relaxed);
  base_tick_ = platform::Clock::now();
  first_event_tick_.store(0, std::memory_order_relaxed);
  last_event_tick_.store(0, std::memory_order_relaxed);
  fences_.store(0, std::memory_order_relaxed);
  reads_ = 0;
  fence_wait_ticks_.store(0, std::memory_order_relaxed);
  read_wait_ticks_.store(0, std::memory_order_relaxed);
}

DeviceCounters DeviceModel::counters() const {
  Guard g(lock_);
  DeviceCounters c = device_.counters();
  c.fences = fences_.load(std::memory_order_relaxed);
  return c;
}

void DeviceModel::add_metrics(record::RunRecord& record) const {
  DeviceCounters c;
  double busiest = 0, span = 0;
  uint64_t reads = 0;
  {
    Guard g(lock_);
    c = device_.counters();
    busiest = device_.busiest_dimm_ns();
    reads = reads_;
  }
  c.fences = fences_.load(std::memory_order_relaxed);
  const uint64_t first = first_event_tick_.load(std::memory_order_relaxed);
  span = first == 0 ? 0 : platform::Clock::get().to_ns(last_event_tick_.load(std::memory_order_relaxed) - first);
  for (auto& m : device_metrics(device_.params(), c, busiest, span)) record.set(std::move(m));
  if (!emulate_) return;
  const platform::Clock& clock = platform::Clock::get();
  const std::string label = emulation_label();
  if (c.fences > 0)
    record.set({"emulation_wait_per_fence", clock.to_ns(fence_wait_ticks_.load()) / static_cast<double>(c.fences), "ns",
                record::MetricKind::modelled, label});
  if (reads > 0)
    record.set({"emulation_wait_per_read", clock.to_ns(read_wait_ticks_.load()) / static_cast<double>(reads), "ns",
                record::MetricKind::modelled, label});
}

void label_emulated(record::RunRecord& record, const std::string& label) {
  for (auto& m : record.metrics) {
    if (m.kind != record::MetricKind::measured) continue;
    m.kind = record::MetricKind::modelled;
    m.origin = label;
  }
}

}  // namespace pmlab::model
