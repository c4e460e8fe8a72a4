// Which files the runtime takes as persistent memory without a PMDK library mapping them: the --pool files
// (PMLAB_TRACE_POOLS), each by its device and inode, or, where the program makes it while it runs, by its
// path; and every file below a --pool directory (a program that names its files as it goes: a database's
// logs and tables, a temporary file renamed over another, a mail directory's messages). Internal to the runtime
// (src/pmlab-trace).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

bool below_pool_dir(const Tracer& t, const std::string& path) {
  return std::any_of(t.pool_dirs.begin(), t.pool_dirs.end(), [&](const std::string& dir) {
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && (dir == "/" || path[dir.size()] == '/');
  });
}

namespace {

// A --pool directory is meant for a program's own files: a tree larger than this is more likely a mistake
// (a home directory), whose every file would be viewed and copied.
constexpr size_t kMaxBelowPoolDirs = 10000;

// The regular files and the directories below `dir`, in an order that does not depend on the directory's
// (symbolic links are not followed), until there are kMaxBelowPoolDirs of them.
void walk(const std::string& dir, std::vector<std::string>& files, std::vector<std::string>& dirs) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::pair<std::string, bool>> in;  // (path, is a directory)
  while (const dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    const std::string path = (dir == "/" ? "" : dir) + "/" + e->d_name;
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (lstat(path.c_str(), &st) != 0) continue;
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
    }
    if (type == DT_DIR || type == DT_REG) in.emplace_back(path, type == DT_DIR);
  }
  closedir(d);
  std::sort(in.begin(), in.end());
  for (const auto& [path, is_dir] : in) {
    if (files.size() + dirs.size() >= kMaxBelowPoolDirs) return;
    if (!is_dir) {
      files.push_back(path);
      continue;
    }
    dirs.push_back(path);
    walk(path, files, dirs);
  }
}
}  // namespace

bool is_pool_file(Tracer& t, int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  const std::pair<uint64_t, uint64_t> id{st.st_dev, st.st_ino};
  if (std::find(t.pools.begin(), t.pools.end(), id) != t.pools.end()) return true;
  // A --pool file the program made after it started, or a file below a --pool directory: by its path.
  const std::string path = path_of(fd);
  return path != "?" && is_pool_path(t, path);
}

bool is_pool_path(const Tracer& t, const std::string& path) {
  if (below_pool_dir(t, path)) return true;
  for (const auto& p : t.pool_paths) {
    char* real = realpath(p.c_str(), nullptr);
    const bool same = path == (real != nullptr ? std::string(real) : p);
    std::free(real);
    if (same) return true;
  }
  return false;
}

std::vector<std::string> pool_files(const Tracer& t) {
  std::vector<std::string> files, dirs;
  for (const std::string& dir : t.pool_dirs) walk(dir, files, dirs);
  files.insert(files.begin(), t.pool_paths.begin(), t.pool_paths.end());
  return files;
}

void append_directory(Tracer& t, trace::DirectoryEvent event, const std::string& path, const std::string& to) {
  const trace::DirectoryRecord rec{static_cast<uint32_t>(path.size()), static_cast<uint32_t>(to.size())};
  const std::string paths = path + to;
  t.file.append(trace::Kind::directory, static_cast<uint8_t>(event), &rec, sizeof rec, paths.data(), paths.size());
}

void record_pool_directories(Tracer& t) {
  std::vector<std::string> files, dirs;
  for (const std::string& dir : t.pool_dirs) {
    append_directory(t, trace::DirectoryEvent::root, dir);
    walk(dir, files, dirs);
  }
  for (const std::string& dir : dirs) append_directory(t, trace::DirectoryEvent::there, dir);
  if (files.size() + dirs.size() >= kMaxBelowPoolDirs)
    note(t, "the --pool directories hold " + std::to_string(kMaxBelowPoolDirs) +
                " files and directories or more: crash images hold the first of them (in order of their "
                "paths) as the run found them, and of the rest only what the run maps or writes");
}

}  // namespace pmlab_trace::detail
