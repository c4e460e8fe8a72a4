#include "pmlab/bench/context.hpp"

#include <time.h>

#include <thread>

#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/platform/memory_tiers.hpp"
#include "pmlab/platform/system.hpp"
#include "pmlab/platform/topology.hpp"

namespace pmlab::bench {

nlohmann::ordered_json memory_tiers_json(const platform::MemoryTopology& t) {
  using json = nlohmann::ordered_json;
  const auto optional = [](const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); };
  json nodes = json::array();
  for (const platform::MemoryNode& n : t.nodes) {
    json access = json::array();
    for (const platform::NodeAccess& a : n.access)
      access.push_back({{"class", a.access_class},
                        {"initiators", a.initiators},
                        {"read_latency_ns", optional(a.read_latency_ns)},
                        {"write_latency_ns", optional(a.write_latency_ns)},
                        {"read_bandwidth_mb_s", optional(a.read_bandwidth_mb_s)},
                        {"write_bandwidth_mb_s", optional(a.write_bandwidth_mb_s)}});
    nodes.push_back({{"node", n.id},
                     {"label", platform::to_string(n.label)},
                     {"evidence", n.evidence},
                     {"cpus", n.cpus.size()},
                     {"memory_bytes", n.memory_bytes},
                     {"distances", n.distances},
                     {"hmat", access}});
  }
  json memdevs = json::array(), regions = json::array(), dax = json::array();
  for (const platform::CxlMemdev& m : t.cxl_memdevs)
    memdevs.push_back({{"name", m.name},
                       {"ram_bytes", m.ram_bytes},
                       {"pmem_bytes", m.pmem_bytes},
                       {"numa_node", m.numa_node ? json(*m.numa_node) : json(nullptr)}});
  for (const platform::CxlRegion& r : t.cxl_regions)
    regions.push_back({{"name", r.name},
                       {"mode", r.mode},
                       {"size_bytes", r.size_bytes},
                       {"interleave_ways", r.interleave_ways},
                       {"targets", r.targets}});
  for (const platform::DaxDevice& d : t.dax_devices)
    dax.push_back({{"name", d.name},
                   {"mode", d.mode},
                   {"size_bytes", d.size_bytes},
                   {"target_node", d.target_node ? json(*d.target_node) : json(nullptr)},
                   {"cxl_region", d.cxl_region}});
  return {{"initiator_node", t.initiator_node},
          {"online_nodes", t.online_nodes},
          {"nodes", nodes},
          {"cxl_memdevs", memdevs},
          {"cxl_regions", regions},
          {"dax_devices", dax},
          {"notes", t.notes}};
}

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
  jcpu["physical_cores_used"] = platform::physical_cores(platform::allowed_cpus());
  jcpu["isa"] = {{"clflush", cpu.clflush},
                 {"clflushopt", cpu.clflushopt},
                 {"clwb", cpu.clwb},
                 {"avx2", cpu.avx2},
                 {"avx512f", cpu.avx512f},
                 {"movdir64b", cpu.movdir64b},
                 {"invariant_tsc", cpu.invariant_tsc}};
  nlohmann::ordered_json caches = nlohmann::ordered_json::array();
  for (const auto& k : platform::caches())
    caches.push_back({{"level", k.level},
                      {"type", k.type},
                      {"size_bytes", k.size_bytes},
                      {"line_bytes", k.line_bytes},
                      {"shared_by", k.shared_by}});
  jcpu["caches"] = caches;
  jcpu["tsc_ghz"] = clock.ticks_per_ns();
  c["cpu"] = jcpu;
  c["numa_nodes"] = platform::numa_nodes().size();
  c["memory_tiers"] = memory_tiers_json(platform::read_memory_topology());
  c["transparent_hugepages"] = platform::transparent_hugepages();
  c["timer"] = {{"source", clock.source()},
                {"overhead_ns", clock.overhead_ns()},
                {"overhead_p10_ns", clock.overhead_p10_ns()},
                {"overhead_p90_ns", clock.overhead_p90_ns()},
                {"resolution_ns", clock.resolution_ns()},
                {"tick_ns", clock.tick_ns()},
                {"note", "per-operation latencies have the timer's median overhead subtracted"}};
  auto counters = platform::hardware_counters();
  c["hardware_counters"] = {
      {"available", counters.available},
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
