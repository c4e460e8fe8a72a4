// N transfers, each one Ptm::run of two reads and two writes, on a pool under /dev/shm: what
// count.sh counts per operation for libpmlab.so and libpmlab.a.
#include <pmlab/ptm.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <unistd.h>

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const std::string path = "/dev/shm/pmlab-linkage-transfers-" + std::to_string(getpid());
  auto ptm = pmlab::Ptm::create(path, 64 << 20);
  constexpr uint64_t kAccounts = 1024;
  uint64_t accounts = 0;
  ptm.run([&](pmlab::Transaction& tx) {
    accounts = tx.alloc(8 * kAccounts);
    for (uint64_t i = 0; i < kAccounts; ++i) tx.write(accounts + 8 * i, 1000);
  });
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t from = accounts + 8 * (i % kAccounts), to = accounts + 8 * ((i * 7 + 3) % kAccounts);
    ptm.run([&](pmlab::Transaction& tx) {
      const uint64_t a = tx.read(from), b = tx.read(to);
      tx.write(from, a - 1);
      tx.write(to, b + 1);
    });
  }
  unlink(path.c_str());
}
