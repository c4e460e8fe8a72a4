// N puts, each followed by a get of its key, in a pmlab::Tree on a pool under /dev/shm: what count.sh
// counts per operation for libpmlab.so and libpmlab.a.
#include <pmlab/tree.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const std::string path = "/dev/shm/pmlab-linkage-tree-" + std::to_string(getpid());
  auto tree = pmlab::Tree::create(path, 256 << 20);
  uint64_t found = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t k = (i * 0x9E3779B97F4A7C15ull) >> 44;  // scattered keys, some repeated
    char key[8];
    std::memcpy(key, &k, 8);
    tree.put(std::string_view(key, 8), &i);
    uint64_t value = 0;
    found += tree.get(std::string_view(key, 8), &value) ? 1 : 0;
  }
  unlink(path.c_str());
  return found == n ? 0 : 1;
}
