// A registry of ids that several threads fill at once: pmlab's lock-free persistent set (pmlab::Set) in a
// pool, each add an operation marked for `pmlab crash exec` (pmlab/trace.h), checked after a crash.
//
//   ids POOL create [linkfree|soft]   a new pool holding an empty set
//   ids POOL add T N [--ack-early]    T threads, N adds each: thread t adds t+1, t+1+T, t+1+2T, …
//   ids POOL check T                  opens the pool (recovering the set), checks it, then: the ids each of
//                                     T threads added are a prefix of its sequence, and under crash exec at
//                                     least as many ids are present as adds had returned; exit 0 if so
//
// A thread's next add begins after its last one returned, so after a crash each thread's ids are the adds
// that returned and perhaps the one in flight: a prefix. --ack-early is a bug of the program's own, not of
// the set: it counts an add as returned (pmlab_op_end) before making it, as a server that acknowledges a
// request before handling it would.
#include <pmlab/lockfree.hpp>
#include <pmlab/trace.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr unsigned kMostThreads = 8;

int create(const std::string& pool, const std::string& design) {
  pmlab::SetOptions options;
  options.threads = kMostThreads;
  options.capacity = 1 << 14;
  if (design == "soft") options.design = pmlab::SetDesign::soft;
  else if (design != "linkfree") throw pmlab::Error(PMLAB_E_INVALID_ARGUMENT, "design: linkfree or soft");
  pmlab::Set::create(pool, options);
  return 0;
}

int add(const std::string& pool, unsigned threads, uint64_t each, bool ack_early) {
  if (threads < 1 || threads > kMostThreads) throw pmlab::Error(PMLAB_E_INVALID_ARGUMENT, "1 to 8 threads");
  pmlab::Set set = pmlab::Set::open(pool);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&set, t, threads, each, ack_early] {
      for (uint64_t i = 0; i < each; ++i) {
        pmlab_op_begin();
        if (ack_early) pmlab_op_end();
        set.insert(t + 1, t + 1 + i * threads);
        if (!ack_early) pmlab_op_end();
      }
    });
  for (std::thread& w : workers) w.join();
  return 0;
}

int check(const std::string& pool, unsigned threads) {
  if (threads < 1 || threads > kMostThreads) throw pmlab::Error(PMLAB_E_INVALID_ARGUMENT, "1 to 8 threads");
  pmlab::Set set = pmlab::Set::open(pool);
  set.check();
  const std::vector<uint64_t> ids = set.keys();  // in order, so each thread's ids come in the order it added them
  std::vector<uint64_t> added(threads, 0);
  for (uint64_t id : ids) {
    const unsigned t = static_cast<unsigned>((id - 1) % threads);
    if (id != t + 1 + added[t] * threads) {
      std::cerr << "id " << id << " is present without thread " << t << "'s earlier add of "
                << t + 1 + added[t] * threads << "\n";
      return 1;
    }
    ++added[t];
  }
  if (const char* done = std::getenv("PMLAB_CRASH_OPS_DONE"); done && ids.size() < std::strtoull(done, nullptr, 10)) {
    std::cerr << ids.size() << " ids present, but " << done << " adds had returned\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() >= 2 && args[1] == "create" && args.size() <= 3)
      return create(args[0], args.size() == 3 ? args[2] : "linkfree");
    if (args.size() >= 4 && args[1] == "add" && (args.size() == 4 || args[4] == "--ack-early"))
      return add(args[0], std::stoul(args[2]), std::stoull(args[3]), args.size() == 5);
    if (args.size() == 3 && args[1] == "check") return check(args[0], std::stoul(args[2]));
    std::cerr << "usage: ids POOL create [linkfree|soft] | add T N [--ack-early] | check T\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ids: " << e.what() << "\n";
    return 3;
  }
}
