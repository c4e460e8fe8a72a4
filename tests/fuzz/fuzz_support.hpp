// Shared by the fuzz targets: a scratch directory under /dev/shm for the files a target writes, and the
// entry point each target defines (libFuzzer's, also fed by replay_main.cpp in `make test`).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace pmlab::fuzz {

// A directory private to this process, /dev/shm/pmlab-fuzz-<pid>, removed at exit. libFuzzer ends
// some runs without exit handlers (a crash, -max_total_time), so the directories of processes that
// are gone are removed when the next one starts. Never destroyed itself: the exit handler that removes
// the directory runs after static destructors would have.
inline const std::string& scratch_dir() {
  static const std::string* dir = [] {
    namespace fs = std::filesystem;
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::path("/tmp");
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("pmlab-fuzz-", 0) != 0) continue;
      const long pid = std::atol(name.c_str() + 11);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
    }
    auto* made = new std::string((base / ("pmlab-fuzz-" + std::to_string(::getpid()))).string());
    fs::remove_all(*made, ec);
    if (!fs::create_directory(*made, ec)) {
      std::fprintf(stderr, "pmlab fuzz: cannot create %s\n", made->c_str());
      std::abort();
    }
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return made;
  }();
  return *dir;
}

inline std::string scratch_file(const std::string& name) { return scratch_dir() + "/" + name; }

// Replaces PATH's contents with the bytes (a failure here is the harness's, not the target's).
inline void write_bytes(const std::string& path, const uint8_t* data, size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || (size > 0 && ::write(fd, data, size) != static_cast<ssize_t>(size)) || ::close(fd) != 0) {
    std::perror("pmlab fuzz: write");
    std::abort();
  }
}

}  // namespace pmlab::fuzz
