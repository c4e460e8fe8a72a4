// Which files the runtime takes as persistent memory without a PMDK library mapping them: the --pool files
// (PMLAB_TRACE_POOLS), each by its device and inode, or, where the program makes it while it runs, by its
// path; and every file directly in a --pool directory (a program that names its files as it goes: a
// database's logs and tables, a temporary file renamed over another). Internal to the runtime
// (src/pmlab-trace).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pmlab-trace/state.hpp"

namespace pmlab_trace::detail {

std::string path_of(int fd) {
  char link[64], target[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string("?");
}

void read_pools(Tracer& t, const std::string& list) {
  for (size_t from = 0; from <= list.size();) {
    const size_t colon = std::min(list.find(':', from), list.size());
    const std::string p = list.substr(from, colon - from);
    from = colon + 1;
    struct stat st {};
    const bool exists = !p.empty() && stat(p.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
      if (char* real = realpath(p.c_str(), nullptr)) {
        t.pool_dirs.emplace_back(real);
        std::free(real);
      }
      continue;
    }
    if (exists) t.pools.emplace_back(st.st_dev, st.st_ino);
    if (!p.empty()) t.pool_paths.push_back(p);
  }
}

bool is_pool_file(Tracer& t, int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  const std::pair<uint64_t, uint64_t> id{st.st_dev, st.st_ino};
  if (std::find(t.pools.begin(), t.pools.end(), id) != t.pools.end()) return true;
  // A --pool file the program made after it started, or a file in a --pool directory: by its path.
  const std::string path = path_of(fd);
  if (path == "?") return false;
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && std::find(t.pool_dirs.begin(), t.pool_dirs.end(),
                                              path.substr(0, std::max<size_t>(slash, 1))) != t.pool_dirs.end())
    return true;
  for (const auto& p : t.pool_paths) {
    char* real = realpath(p.c_str(), nullptr);
    const bool same = real != nullptr && path == real;
    std::free(real);
    if (same) return true;
  }
  return false;
}

std::vector<std::string> pool_files(const Tracer& t) {
  std::vector<std::string> files = t.pool_paths;
  for (const std::string& dir : t.pool_dirs) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    std::vector<std::string> in;
    while (const dirent* e = readdir(d))
      if (e->d_type == DT_REG || e->d_type == DT_UNKNOWN) in.push_back(dir + "/" + e->d_name);
    closedir(d);
    std::sort(in.begin(), in.end());  // the image's files in an order that does not depend on the directory's
    files.insert(files.end(), in.begin(), in.end());
  }
  return files;
}

}  // namespace pmlab_trace::detail
