// The stack of stack.hpp on a real pool: the design `pmlab crash --load` tests (list.cpp), run in
// production through a pmlab::Pool's Persister. Every push that returned survives a crash (kill -9 here),
// and `pmlab crash exec` tests this program as it is: the Persister tells pmlab's runtime of each flush
// and fence it issues.
//
//   stack POOL push N [--broken]   push N records after those already there (--broken: the twin's bug,
//                                  each node never written back before the head names it)
//   stack POOL check               walk the stack: "K records" and exit 0, or what is wrong and exit 1
#include <pmlab/pool.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "stack.hpp"

int main(int argc, char** argv) {
  const bool push = argc >= 3 && std::string(argv[2]) == "push";
  const bool broken = push && argc == 5 && std::string(argv[4]) == "--broken";
  if (argc < 3 || (push && argc != 4 && !broken) || (!push && argc != 3)) {
    std::fprintf(stderr, "usage: stack POOL push N [--broken] | stack POOL check\n");
    return 2;
  }
  try {
    const uint64_t capacity = 1 << 21;                                                // records: 64 MiB
    const uint64_t bytes = (4096 + stack::bytes_for(capacity) + 4095) / 4096 * 4096;  // the header's page, in pages
    auto pool = pmlab::Pool::open_or_create(argv[1], bytes, "example.stack");
    std::byte* base = pool.data();
    if (!stack::formatted(base)) stack::format(base, pool.persister());  // also after a crash during create
    uint64_t count = 0;
    if (std::string why = stack::walk(base, pool.data_size(), &count); !why.empty()) {
      std::fprintf(stderr, "stack: %s\n", why.c_str());
      return 1;
    }
    if (push) {
      const uint64_t n = std::strtoull(argv[3], nullptr, 10);
      for (uint64_t i = 0; i < n; ++i)
        if (!stack::push(base, pool.data_size(), pool.persister(), count + i, broken)) {
          std::fprintf(stderr, "stack: the pool is full\n");
          return 1;
        }
      count += n;
    }
    std::printf("%llu records\n", static_cast<unsigned long long>(count));
    return 0;
  } catch (const pmlab::Error& e) {
    std::fprintf(stderr, "stack: %s\n", e.what());
    return e.exit_code();
  }
}
