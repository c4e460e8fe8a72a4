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
  // The chain's length for `work_ns`, calibrated once per process (every multi-thread run probes twice);
  // its time alone is measured on every call, as the host's state moves.
  static std::atomic<uint64_t> calibrated{0};
  static std::atomic<double> calibrated_for{0};
  uint64_t iterations = calibrated.load(std::memory_order_relaxed);
  double alone = 0;
  {
    std::thread t([&] {
      pin_current_thread(cpus[0]);
      if (iterations == 0 || calibrated_for.load(std::memory_order_relaxed) != work_ns) {
        iterations = 1 << 16;
        for (;;) {
          alone = seconds_of(iterations, 1);
          if (alone * 1e9 >= work_ns / 4 || iterations >= (uint64_t{1} << 40)) break;
          iterations *= 2;
        }
        iterations = static_cast<uint64_t>(static_cast<double>(iterations) * work_ns / std::max(alone * 1e9, 1.0)) + 1;
        calibrated_for.store(work_ns, std::memory_order_relaxed);
        calibrated.store(iterations, std::memory_order_relaxed);
      }
      alone = seconds_of(iterations, 2);
    });
    t.join();
  }
  // Together: from the first thread's start to the last one's end. Each thread's own time would not do:
  // two threads taking turns on one CPU each run their stretch uninterrupted, one after the other.
  const size_t n = cpus.size();
  using Time = std::chrono::steady_clock::time_point;
  std::vector<Time> began(n), ended(n);
  std::barrier<> start(static_cast<std::ptrdiff_t>(n));
  std::vector<std::thread> ts;
  for (size_t i = 0; i < n; ++i)
    ts.emplace_back([&, i] {
      pin_current_thread(cpus[i]);
      start.arrive_and_wait();
      began[i] = std::chrono::steady_clock::now();
      (void)seconds_of(iterations, 3 + i);
      ended[i] = std::chrono::steady_clock::now();
    });
  for (auto& t : ts) t.join();
  const double slowest = std::chrono::duration<double>(*std::max_element(ended.begin(), ended.end()) -
                                                       *std::min_element(began.begin(), began.end()))
                             .count();
  return slowest > 0 ? std::min(static_cast<double>(n), static_cast<double>(n) * alone / slowest)
                     : static_cast<double>(n);
}

double core_to_core_ns(int a, int b, int round_trips) {
  // turn: 1 the line goes to b, 0 back to a, 2 stop. The exchange ends early, after at least 8 round
  // trips, once it has run 20 ms: two threads that cannot run at once (a CPU the host does not schedule,
  // a quota) would otherwise hand the line over once per time slice for seconds.
  constexpr int kStop = 2;
  constexpr double kBudgetS = 0.02;
  struct alignas(64) Line {
    std::atomic<int> turn{0};
  } line;
  std::barrier<> start(2);
  std::thread other([&] {
    pin_current_thread(b);
    start.arrive_and_wait();
    for (;;) {
      int t;
      while ((t = line.turn.load(std::memory_order_acquire)) == 0) {}
      if (t == kStop) return;
      line.turn.store(0, std::memory_order_release);
    }
  });
  double seconds = 0;
  int done = 0;
  std::thread self([&] {
    pin_current_thread(a);
    start.arrive_and_wait();
    const auto t0 = std::chrono::steady_clock::now();
    for (; done < round_trips; ++done) {
      line.turn.store(1, std::memory_order_release);
      while (line.turn.load(std::memory_order_acquire) != 0) {}
      if ((done & 7) == 7 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > kBudgetS) {
        ++done;
        break;
      }
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    line.turn.store(kStop, std::memory_order_release);
  });
  self.join();
  other.join();
  return seconds * 1e9 / (2.0 * std::max(done, 1));
}

}  // namespace pmlab::platform
