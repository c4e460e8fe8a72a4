#include "pmlab/pmdk/environment.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace pmlab::pmdk {

Result<std::string> directory_of_mapping(const void* addr) {
  std::ifstream maps("/proc/self/maps");
  if (!maps) return error(Errc::io_error, "cannot read /proc/self/maps");
  const auto target = reinterpret_cast<uintptr_t>(addr);
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode;
    std::getline(fields >> std::ws, path);
    const size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    const uintptr_t begin = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (target < begin || target >= end) continue;
    if (path.empty() || path[0] != '/')
      return error(Errc::unsupported, "the region is not backed by a file (PMDK's peers need a pool file)");
    return std::filesystem::path(path).parent_path().string();
  }
  return error(Errc::not_found, "no mapping holds the region");
}

int force_pmem_is_pmem() {
  setenv("PMEM_IS_PMEM_FORCE", "1", /*overwrite=*/0);
  const char* value = std::getenv("PMEM_IS_PMEM_FORCE");
  return value ? std::atoi(value) : 0;
}

}  // namespace pmlab::pmdk
