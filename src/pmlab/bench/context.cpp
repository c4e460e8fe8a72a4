#include "pmlab/bench/context.hpp"

#include <time.h>

#include <thread>

#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/platform/system.hpp"
#include "pmlab/platform/topology.hpp"

namespace pmlab::bench {

nlohmann::ordered_json machine_context() {
  const auto& cpu = platform::CpuFeatures::host();
  const auto& clock = platform::Clock::get();
  nlohmann::ordered_json c;
  c["host"] = platform::hostname();
  c["kernel"] = platform::kernel_version();
  c["git_revision"] = platform::git_revision();
  nlohmann::ordered_json jcpu;
  jcpu["vendor"] = cpu.vendor;
  jcpu["model"] = cpu.model;
  jcpu["logical_cpus"] = static_cast<int>(std::thread::hardware_concurrency());
  jcpu["cores_used"] = platform::allowed_cpus();
  jcpu["isa"] = {{"clflush", cpu.clflush},   {"clflushopt", cpu.clflushopt}, {"clwb", cpu.clwb},
                 {"avx2", cpu.avx2},         {"avx512f", cpu.avx512f},       {"movdir64b", cpu.movdir64b},
                 {"invariant_tsc", cpu.invariant_tsc}};
  nlohmann::ordered_json caches = nlohmann::ordered_json::array();
  for (const auto& k : platform::caches())
    caches.push_back({{"level", k.level}, {"type", k.type}, {"size_bytes", k.size_bytes},
                      {"line_bytes", k.line_bytes}, {"shared_by", k.shared_by}});
  jcpu["caches"] = caches;
  jcpu["tsc_ghz"] = clock.ticks_per_ns();
  c["cpu"] = jcpu;
  c["numa_nodes"] = platform::numa_nodes().size();
  c["transparent_hugepages"] = platform::transparent_hugepages();
  c["timer"] = {{"source", clock.source()}, {"overhead_ns", clock.overhead_ns()},
                {"overhead_p10_ns", clock.overhead_p10_ns()}, {"overhead_p90_ns", clock.overhead_p90_ns()},
                {"resolution_ns", clock.resolution_ns()}, {"tick_ns", clock.tick_ns()},
                {"note", "per-operation latencies have the timer's median overhead subtracted"}};
  auto counters = platform::hardware_counters();
  c["hardware_counters"] = {{"available", counters.available},
                            {"reason", counters.available ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(counters.reason)}};
  return c;
}

namespace {
std::string format_utc(const char* fmt) {
  time_t now = time(nullptr);
  tm utc{};
  gmtime_r(&now, &utc);
  char buf[64];
  strftime(buf, sizeof buf, fmt, &utc);
  return buf;
}
}  // namespace

std::string run_id_now() { return format_utc("%Y%m%d-%H%M%S"); }
std::string iso8601_now() { return format_utc("%Y-%m-%dT%H:%M:%SZ"); }

}  // namespace pmlab::bench
