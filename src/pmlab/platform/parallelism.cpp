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

// Eight independent multiply-add chains: they keep a core's multiplier busy every cycle, so two threads on
// one physical core (SMT siblings) take twice as long as one, where a single dependent chain, bound by the
// multiply's latency, runs at full speed on both siblings and would count them as two cores.
uint64_t chain(uint64_t iterations, uint64_t seed) noexcept {
  uint64_t a = seed | 1, b = a + 2, c = a + 4, d = a + 6, e = a + 8, f = a + 10, g = a + 12, h = a + 14;
  for (uint64_t i = 0; i < iterations; ++i) {
    a = a * 0x9E3779B97F4A7C15ull + i;
    b = b * 0xBF58476D1CE4E5B9ull + i;
    c = c * 0x94D049BB133111EBull + i;
    d = d * 0xD6E8FEB86659FD93ull + i;
    e = e * 0xA0761D6478BD642Full + i;
    f = f * 0xE7037ED1A0B428DBull + i;
    g = g * 0x8EBC6AF09C88C6E3ull + i;
    h = h * 0x589965CC75374CC3ull + i;
    asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
  }
  return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
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
