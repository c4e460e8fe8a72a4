// pmlab info: what this machine offers pmlab, and what it lacks.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "pmlab/bench/context.hpp"
#include "pmlab/cli/commands.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/model/presets.hpp"
#include "pmlab/profile/counters.hpp"
#include "pmlab/profile/perf.hpp"
#include "pmlab/persist/config.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/platform/memory_tiers.hpp"
#include "pmlab/platform/system.hpp"

namespace pmlab::cli {
namespace {

std::string join(const std::vector<std::string>& v, const std::string& none) {
  if (v.empty()) return none;
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// One line per memory node with its label and what the label rests on, then the CXL and DAX devices.
void print_memory_tiers(const nlohmann::ordered_json& tiers) {
  for (const auto& n : tiers["nodes"]) {
    const double gib = static_cast<double>(n["memory_bytes"].get<uint64_t>()) / (1ULL << 30);
    std::printf("  node %-3d %-13s %7.1f GiB, %3zu CPUs: %s\n", n["node"].get<int>(),
                n["label"].get<std::string>().c_str(), gib, n["cpus"].get<size_t>(),
                printable(n["evidence"].get<std::string>()).c_str());
  }
  for (const auto& r : tiers["cxl_regions"])
    std::printf("  CXL %s: %s, %.1f GiB over %u device(s)\n", printable(r["name"].get<std::string>()).c_str(),
                printable(r["mode"].get<std::string>()).c_str(),
                static_cast<double>(r["size_bytes"].get<uint64_t>()) / (1ULL << 30),
                r["interleave_ways"].get<unsigned>());
  for (const auto& d : tiers["dax_devices"])
    std::printf("  DAX %s: %s, %.1f GiB%s\n", printable(d["name"].get<std::string>()).c_str(),
                printable(d["mode"].get<std::string>()).c_str(),
                static_cast<double>(d["size_bytes"].get<uint64_t>()) / (1ULL << 30),
                d["target_node"].is_null() ? "" : (", node " + std::to_string(d["target_node"].get<int>())).c_str());
  for (const auto& note : tiers["notes"]) std::printf("  (%s)\n", printable(note.get<std::string>()).c_str());
}

// `pmlab info --sysfs-root DIR`: the memory tiers of a captured tree, and nothing of this machine beside them
// (its CPU, devices and counters would read as the tree's).
int run_captured_tiers(bool as_json, const std::string& sysfs_root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::path(sysfs_root) / "sys", ec))
    return report_error(error(Errc::invalid_argument, "--sysfs-root: " + printable(sysfs_root) +
                                                          " holds no sys/ directory (name the directory above "
                                                          "sys/, as scripts/capture_memory_tiers.sh writes it)"));
  const auto tiers = bench::memory_tiers_json(platform::read_memory_topology(sysfs_root));
  if (as_json) {
    std::printf("%s\n",
                json_text(nlohmann::ordered_json{{"sysfs_root", sysfs_root}, {"memory_tiers", tiers}}, 2).c_str());
    return 0;
  }
  std::printf("memory tiers of the tree at %s (only these: nothing else of that machine is read)\n",
              printable(sysfs_root).c_str());
  std::printf("NUMA nodes       %zu, as memory tiers:\n", tiers["nodes"].size());
  print_memory_tiers(tiers);
  return 0;
}

int run_info(bool as_json, const std::string& sysfs_root) {
  if (!sysfs_root.empty()) return run_captured_tiers(as_json, sysfs_root);
  nlohmann::ordered_json ctx = bench::machine_context();
  const auto inv = platform::pmem_inventory();
  const auto& cpu = platform::CpuFeatures::host();
  ctx["pmem"] = {{"dax_mounts", inv.dax_mounts},          {"dax_devices", inv.dax_devices},
                 {"pmem_devices", inv.pmem_devices},      {"nvdimm_regions", inv.regions},
                 {"cxl_memory_devices", inv.cxl_devices}, {"platform_domain", inv.platform_domain}};
  ctx["default_flush"] = persist::to_string(persist::best_line_flush(cpu));
  const profile::CounterSources counters = profile::detect_counters();
  ctx["counters"] = counters.context_json();
  if (as_json) {
    std::printf("%s\n", json_text(ctx, 2).c_str());
    return 0;
  }
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  std::printf("CPU              %s (%s), %d logical CPUs (this process may use %zu on %d cores), TSC %.3f GHz (%s)\n",
              cpu.model.c_str(), cpu.vendor.c_str(), ctx["cpu"]["logical_cpus"].get<int>(),
              ctx["cpu"]["cores_used"].size(), ctx["cpu"]["physical_cores_used"].get<int>(),
              ctx["cpu"]["tsc_ghz"].get<double>(), ctx["timer"]["source"].get<std::string>().c_str());
  std::printf("flush            clflush %s, clflushopt %s, clwb %s (default: %s)\n", yes(cpu.clflush),
              yes(cpu.clflushopt), yes(cpu.clwb), persist::to_string(persist::best_line_flush(cpu)));
  std::printf("vector           avx2 %s, avx512f %s, movdir64b %s\n", yes(cpu.avx2), yes(cpu.avx512f),
              yes(cpu.movdir64b));
  std::printf("caches          ");
  for (const auto& c : ctx["cpu"]["caches"])
    std::printf(" L%d %s %lluK;", c["level"].get<int>(), c["type"].get<std::string>().c_str(),
                static_cast<unsigned long long>(c["size_bytes"].get<uint64_t>() >> 10));
  std::printf("\nNUMA nodes       %zu, as memory tiers:\n", ctx["memory_tiers"]["nodes"].size());
  print_memory_tiers(ctx["memory_tiers"]);
  std::printf("kernel           %s\n", ctx["kernel"].get<std::string>().c_str());
  std::printf(
      "huge pages       transparent: %s (the DRAM and node media take base pages whatever it is, unless "
      "pmlab run --pages huge; each run records its memory's share in huge pages)\n",
      ctx["transparent_hugepages"].get<std::string>().c_str());
  const auto& timer = ctx["timer"];
  std::printf(
      "timer            %s, overhead %.1f ns per start/stop pair (p10 %.1f, p90 %.1f), measured resolution "
      "%.2f ns (one tick %.2f ns)\n",
      timer["source"].get<std::string>().c_str(), timer["overhead_ns"].get<double>(),
      timer["overhead_p10_ns"].get<double>(), timer["overhead_p90_ns"].get<double>(),
      timer["resolution_ns"].get<double>(), timer["tick_ns"].get<double>());
  std::printf("hw counters      %s\n", counters.core ? "cycles, instructions, LLC misses per run (perf_event_open)"
                                                     : ("not readable: " + counters.core_reason).c_str());
  std::string imc;
  for (const auto& e : counters.imc) imc += (imc.empty() ? "" : ", ") + e.name;
  std::printf("memory traffic   %s\n",
              counters.imc.empty() ? ("not counted: " + counters.imc_reason).c_str() : ("per run from " + imc).c_str());
  std::printf("PMEM DIMMs       %s\n", counters.ipmctl.empty()
                                           ? ("no media counters: " + counters.ipmctl_reason).c_str()
                                           : ("media reads/writes, EWR, RWR per run via " + counters.ipmctl).c_str());
  const profile::PerfSupport perf = profile::detect_perf();
  std::printf("profiling        %s\n", perf.available ? ("perf at " + perf.perf_path + ", software " + perf.event +
                                                         " event, call graphs by frame pointer (pmlab run --profile)")
                                                            .c_str()
                                                      : ("unavailable: " + perf.reason).c_str());
  std::printf("DAX mounts       %s\n", join(inv.dax_mounts, "none (pools here are emulated)").c_str());
  std::printf("devices          dax: %s; pmem: %s; CXL memory: %s\n", join(inv.dax_devices, "none").c_str(),
              join(inv.pmem_devices, "none").c_str(), join(inv.cxl_devices, "none").c_str());
  std::printf("eADR             %s\n", inv.platform_domain == "eadr" ? "yes (an nvdimm region reports cpu_cache)"
                                       : inv.platform_domain == "adr"
                                           ? "no (nvdimm regions report memory_controller)"
                                           : "unknown (no nvdimm region reports a persistence domain)");
  std::printf("device presets   %s (--model, --emulate; docs/device-model.md)\n",
              join(model::preset_names(), "none").c_str());
  std::printf("git revision     %s\n", ctx["git_revision"].get<std::string>().c_str());
  return 0;
}

}  // namespace

void add_info(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "info", "Show the CPU, caches, flush instructions, NUMA nodes and memory tiers, PMEM and CXL devices, counters");
  auto as_json = std::make_shared<bool>(false);
  auto sysfs_root = std::make_shared<std::string>();
  cmd->add_flag("--json", *as_json, "print as JSON");
  cmd->add_option("--sysfs-root", *sysfs_root,
                  "show the memory tiers of DIR/sys (a tree captured on another machine) and nothing else")
      ->check(CLI::ExistingDirectory);
  cmd->callback([&exit_code, as_json, sysfs_root] { exit_code = run_info(*as_json, *sysfs_root); });
}

}  // namespace pmlab::cli
