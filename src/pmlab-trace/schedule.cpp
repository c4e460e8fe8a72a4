#include "pmlab-trace/schedule.hpp"

#include <sched.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

#include "pmlab-trace/state.hpp"

namespace pmlab_trace::detail {
namespace {

// One event in kPauseOneIn pauses. A pause lasts until the other threads have made 1 to kMostEventsWaited
// events, which is as far as one of their operations (a record's write-back, its fence, a commit) usually
// reaches, or kWaitNs without that: long enough for a thread that sleeps between operations to come round,
// short enough that a program whose other threads wait for this one loses little.
constexpr uint64_t kPauseOneIn = 8;
constexpr uint64_t kMostEventsWaited = 16;
constexpr int64_t kWaitNs = 2'000'000;

uint64_t g_seed = 0;
std::atomic<uint64_t> g_events{0};  // events of every thread, pauses or not
std::atomic<uint64_t> g_pauses{0}, g_waits_ran_out{0};
PMLAB_TRACE_STATIC_TLS thread_local uint64_t tls_events = 0;
PMLAB_TRACE_STATIC_TLS thread_local uint64_t tls_random = 0;
// The others' event count when a wait of this thread ran out with none of theirs: until it moves (they are
// done, or wait for this thread), a pause would only wait again.
PMLAB_TRACE_STATIC_TLS thread_local uint64_t tls_others_idle_at = UINT64_MAX;

// splitmix64, as pmlab/common/random.hpp has it: the runtime includes nothing of pmlab's but the trace format.
uint64_t splitmix64(uint64_t& state) {
  uint64_t x = state += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The thread's own sequence: it depends on the seed and the thread's index only, not on the other threads.
uint64_t next_random() {
  if (tls_random == 0) {
    tls_random = g_seed ^ (uint64_t{thread_index()} + 1) * 0x9e3779b97f4a7c15ULL;
    splitmix64(tls_random);
  }
  return splitmix64(tls_random);
}

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

void read_schedule() {
  if (const char* s = getenv("PMLAB_TRACE_SCHEDULE")) g_seed = std::strtoull(s, nullptr, 10);
}

void before_event() noexcept {
  if (g_seed == 0) return;
  const uint64_t mine = ++tls_events;
  const uint64_t all = g_events.fetch_add(1, std::memory_order_relaxed) + 1;
  const uint64_t others = all - mine;
  if (threads_seen() < 2 || others == tls_others_idle_at || next_random() % kPauseOneIn != 0) return;
  const uint64_t others_wanted = others + 1 + next_random() % kMostEventsWaited;
  g_pauses.fetch_add(1, std::memory_order_relaxed);
  const int64_t start = now_ns();
  for (unsigned spins = 0; g_events.load(std::memory_order_relaxed) - tls_events < others_wanted; ++spins) {
    if (now_ns() - start > kWaitNs) {
      g_waits_ran_out.fetch_add(1, std::memory_order_relaxed);
      const uint64_t others_now = g_events.load(std::memory_order_relaxed) - tls_events;
      if (others_now == others) tls_others_idle_at = others;
      return;
    }
    // Yielding hands the core to a runnable thread at once; a thread that sleeps is waited for asleep.
    if (spins < 64) {
      sched_yield();
    } else {
      const timespec nap{0, 20'000};
      nanosleep(&nap, nullptr);
    }
  }
}

std::string schedule_note() {
  if (g_seed == 0) return {};
  const uint64_t pauses = g_pauses.load(), ran_out = g_waits_ran_out.load();
  if (pauses == 0)
    return threads_seen() < 2 ? "schedule: no pause (one thread made persistence calls)" : "schedule: no pause";
  return "schedule: " + std::to_string(pauses) + " pauses before persistence calls until other threads made theirs, " +
         std::to_string(ran_out) + " of them ended by the wait (" + std::to_string(kWaitNs / 1'000'000) + " ms)";
}

}  // namespace pmlab_trace::detail
