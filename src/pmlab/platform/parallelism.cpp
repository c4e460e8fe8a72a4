#include "pmlab/platform/parallelism.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <thread>

#include "pmlab/platform/topology.hpp"

namespace pmlab::platform {
namespace {

// A dependent multiply-add chain: the core's latency, not its memory or its neighbour's, sets its pace.
uint64_t chain(uint64_t iterations, uint64_t seed) noexcept {
  uint64_t x = seed | 1;
  for (uint64_t i = 0; i < iterations; ++i) {
    x = x * 0x9E3779B97F4A7C15ull + i;
    asm volatile("" : "+r"(x));
  }
  return x;
}

double seconds_of(uint64_t iterations, uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t x = chain(iterations, seed);
  asm volatile("" : "+r"(x));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

double cores_available(const std::vector<int>& cpus, double work_ns) {
  if (cpus.size() < 2) return static_cast<double>(cpus.size());
  // Calibrate the chain's length on the first CPU, then time it there alone.
  uint64_t iterations = 1 << 16;
  double alone = 0;
  {
    std::thread t([&] {
      pin_current_thread(cpus[0]);
      for (;;) {
        alone = seconds_of(iterations, 1);
        if (alone * 1e9 >= work_ns / 4 || iterations >= (uint64_t{1} << 40)) break;
        iterations *= 2;
      }
      iterations = static_cast<uint64_t>(static_cast<double>(iterations) * work_ns / std::max(alone * 1e9, 1.0)) + 1;
      alone = seconds_of(iterations, 2);
    });
    t.join();
  }
  const size_t n = cpus.size();
  std::vector<double> together(n, 0);
  std::barrier<> start(static_cast<std::ptrdiff_t>(n));
  std::vector<std::thread> ts;
  for (size_t i = 0; i < n; ++i)
    ts.emplace_back([&, i] {
      pin_current_thread(cpus[i]);
      start.arrive_and_wait();
      together[i] = seconds_of(iterations, 3 + i);
    });
  for (auto& t : ts) t.join();
  const double slowest = *std::max_element(together.begin(), together.end());
  return slowest > 0 ? std::min(static_cast<double>(n), static_cast<double>(n) * alone / slowest) : static_cast<double>(n);
}

double core_to_core_ns(int a, int b, int round_trips) {
  struct alignas(64) Line {
    std::atomic<int> turn{0};
  } line;
  std::barrier<> start(2);
  std::thread other([&] {
    pin_current_thread(b);
    start.arrive_and_wait();
    for (int i = 0; i < round_trips; ++i) {
      while (line.turn.load(std::memory_order_acquire) != 1) {
      }
      line.turn.store(0, std::memory_order_release);
    }
  });
  double seconds = 0;
  std::thread self([&] {
    pin_current_thread(a);
    start.arrive_and_wait();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < round_trips; ++i) {
      line.turn.store(1, std::memory_order_release);
      while (line.turn.load(std::memory_order_acquire) != 0) {
      }
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  self.join();
  other.join();
  return seconds * 1e9 / (2.0 * round_trips);
}

}  // namespace pmlab::platform
