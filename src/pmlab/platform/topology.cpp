#include "pmlab/platform/topology.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace pmlab::platform {

std::vector<int> allowed_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &set)) out.push_back(i);
  }
  if (out.empty()) out.push_back(0);
  return out;
}

std::vector<int> numa_nodes() {
  namespace fs = std::filesystem;
  std::vector<int> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/node", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) == 0 && name.size() > 4 && std::isdigit(static_cast<unsigned char>(name[4])))
      out.push_back(std::atoi(name.c_str() + 4));
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) out.push_back(0);
  return out;
}

int numa_node_of_cpu(int cpu) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu);
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) == 0 && name.size() > 4) return std::atoi(name.c_str() + 4);
  }
  return -1;
}

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> out;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty()) continue;
    const size_t dash = item.find('-');
    int first = 0, last = 0;
    const auto parse = [](std::string_view s, int& v) {
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && end == s.data() + s.size();
    };
    if (!parse(std::string_view(item).substr(0, dash), first)) return {};
    last = first;
    if (dash != std::string::npos && !parse(std::string_view(item).substr(dash + 1), last)) return {};
    // A number no kernel gives a CPU or node (NR_CPUS is at most 8192) is a file not to be trusted: a range to
    // it would also take memory without bound.
    constexpr int kMaxId = 1 << 20;
    if (last < first || first < 0 || last > kMaxId) return {};
    for (int c = first; c <= last; ++c) out.push_back(c);
  }
  return out;
}

bool pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

int physical_cores(const std::vector<int>& cpus, const std::string& sysfs_root) {
  std::vector<int> cores;  // each core named by its lowest CPU
  for (int cpu : cpus) {
    const std::string dir = sysfs_root + "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::vector<int> siblings;
    for (const char* name : {"core_cpus_list", "thread_siblings_list"}) {
      std::ifstream in(dir + name);
      std::string text;
      if (std::getline(in, text) && !(siblings = parse_cpu_list(text)).empty()) break;
    }
    const int core = siblings.empty() ? cpu : *std::min_element(siblings.begin(), siblings.end());
    if (std::find(cores.begin(), cores.end(), core) == cores.end()) cores.push_back(core);
  }
  return static_cast<int>(cores.size());
}

}  // namespace pmlab::platform
