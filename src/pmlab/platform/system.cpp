#include "pmlab/platform/system.hpp"

#include <linux/perf_event.h>
#include <mntent.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "pmlab/platform/memory_tiers.hpp"

#ifndef PMLAB_SOURCE_DIR
#define PMLAB_SOURCE_DIR ""
#endif

namespace pmlab::platform {
namespace fs = std::filesystem;

std::string kernel_version() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string git_revision() {
  std::string dir = PMLAB_SOURCE_DIR;
  std::error_code ec;
  if (dir.empty() || !fs::exists(fs::path(dir) / ".git", ec)) return "unknown";
  std::string cmd = "git -C '" + dir + "' rev-parse HEAD 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "unknown";
  char buf[128] = {};
  std::string out;
  if (fgets(buf, sizeof buf, p) != nullptr) out = buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.size() != 40) return "unknown";
  // A dirty tree is not the revision it names.
  cmd = "git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null";
  p = popen(cmd.c_str(), "r");
  if (p != nullptr) {
    if (fgets(buf, sizeof buf, p) != nullptr) out += "-dirty";
    pclose(p);
  }
  return out;
}

CounterSupport hardware_counters() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  CounterSupport s;
  if (fd >= 0) {
    close(static_cast<int>(fd));
    s.available = true;
    return s;
  }
  int err = errno;
  s.reason = std::string("perf_event_open(instructions): ") + std::strerror(err);
  if (err == ENOENT || err == EOPNOTSUPP) s.reason += " (no hardware PMU exposed, e.g. inside a VM)";
  if (err == EACCES || err == EPERM) s.reason += " (check /proc/sys/kernel/perf_event_paranoid)";
  return s;
}

PmemInventory pmem_inventory() {
  PmemInventory inv;
  std::error_code ec;
  if (FILE* m = setmntent("/proc/mounts", "r")) {
    while (mntent* e = getmntent(m)) {
      std::string opts = e->mnt_opts ? e->mnt_opts : "";
      std::string dev = e->mnt_fsname ? e->mnt_fsname : "";
      if (opts.find("dax") != std::string::npos || dev.rfind("/dev/pmem", 0) == 0) {
        // What the mount's memory is (an nvdimm, a CXL pmem region) and its persistence domain.
        const PoolBacking b = pool_backing(dev);
        inv.dax_mounts.push_back(std::string(e->mnt_dir) + " (" + e->mnt_type + ", " + dev + ", " + opts +
                                 "): " + b.label + ", persistence domain " +
                                 (b.persistence_domain.empty() ? "unknown" : b.persistence_domain));
      }
    }
    endmntent(m);
  }
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("dax", 0) == 0) inv.dax_devices.push_back(entry.path().string());
    if (name.rfind("pmem", 0) == 0) inv.pmem_devices.push_back(entry.path().string());
  }
  for (const auto& entry : fs::directory_iterator("/sys/bus/nd/devices", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("region", 0) != 0) continue;
    std::ifstream in(entry.path() / "persistence_domain");
    std::string domain;
    std::getline(in, domain);
    inv.regions.push_back(name + ": persistence_domain=" + (domain.empty() ? "unreported" : domain));
    if (domain == "cpu_cache") inv.platform_domain = "eadr";
    else if (domain == "memory_controller" && inv.platform_domain != "eadr") inv.platform_domain = "adr";
  }
  for (const auto& entry : fs::directory_iterator("/sys/bus/cxl/devices", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("mem", 0) == 0) inv.cxl_devices.push_back(name);
  }
  return inv;
}

Mount mount_of(const std::string& path) {
  // The longest mount point that prefixes the path's canonical form.
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::path(path), ec);
  std::string target = ec ? path : p.string();
  std::string best_dir;
  Mount best;
  if (FILE* m = setmntent("/proc/mounts", "r")) {
    while (mntent* e = getmntent(m)) {
      std::string dir = e->mnt_dir;
      bool prefix =
          target.rfind(dir, 0) == 0 && (target.size() == dir.size() || dir == "/" || target[dir.size()] == '/');
      if (prefix && dir.size() >= best_dir.size()) {
        best_dir = dir;
        best = {e->mnt_type, e->mnt_fsname};
      }
    }
    endmntent(m);
  }
  return best;
}

std::string transparent_hugepages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  size_t open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos) return "unknown";
  return line.substr(open + 1, close - open - 1);
}

}  // namespace pmlab::platform
