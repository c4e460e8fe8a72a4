// A fresh directory under /dev/shm (tmpfs, like the emulated pools), removed with everything in it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/units.hpp"

namespace pmlab::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::is_directory("/dev/shm") ? std::string("/dev/shm") : std::string("/tmp")) +
                       "/pmlab-test-XXXXXX";
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A digest of a file's bytes: a test compares it before and after to prove nothing was overwritten.
inline uint64_t digest(const std::string& path) {
  std::string bytes = read_all(path);
  return fnv1a64(bytes.data(), bytes.size());
}

}  // namespace pmlab::testing
