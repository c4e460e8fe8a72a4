#include "pmlab/ds/common/locks.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace pmlab::ds {
namespace {

TEST(VersionLocks, AReadStaysValidUntilAWriterTakesItsStripe) {
  StripedVersionLocks locks(16);
  const uint64_t v = locks.read_begin(3);
  EXPECT_EQ(v % 2, 0u);
  EXPECT_TRUE(locks.still_valid(3, v));
  locks.lock(3 + 16);  // the same stripe by another hash
  EXPECT_FALSE(locks.still_valid(3, v));
  locks.unlock(3 + 16);
  EXPECT_FALSE(locks.still_valid(3, v)) << "a writer came and went: what was read may be half old";
  const uint64_t w = locks.read_begin(3);
  EXPECT_NE(w, v);
  locks.lock(4);  // another stripe
  locks.unlock(4);
  EXPECT_TRUE(locks.still_valid(3, w));
}

TEST(VersionLocks, ConcurrentReadBeginWaitsForTheWriter) {
  StripedVersionLocks locks(16);
  std::atomic<bool> released{false}, reader_started{false};
  locks.lock(5);
  std::thread reader([&] {
    reader_started.store(true);
    (void)locks.read_begin(5);
    EXPECT_TRUE(released.load()) << "read_begin returned while a writer held the stripe";
  });
  while (!reader_started.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // room for a wrong read_begin to return
  released.store(true);
  locks.unlock(5);
  reader.join();
}

// A writer rewrites a block of words together under the stripe; optimistic readers (OptimisticReads around
// the racy loads) keep only reads still_valid accepts. Every kept block is one the writer left whole.
TEST(VersionLocks, ConcurrentOptimisticReadsKeepOnlyWholeBlocks) {
  StripedVersionLocks locks(4);
  constexpr int kWords = 64;
  volatile uint64_t block[kWords];
  for (int i = 0; i < kWords; ++i) block[i] = static_cast<uint64_t>(i);  // whole before the first write
  std::atomic<bool> done{false};
  std::atomic<uint64_t> attempts{0};
  uint64_t kept = 0, retried = 0, torn = 0;
  std::thread reader([&] {
    uint64_t seen[kWords];
    while (!done.load(std::memory_order_relaxed)) {
      attempts.fetch_add(1, std::memory_order_relaxed);
      const uint64_t v = locks.read_begin(1);
      {
        const OptimisticReads racy;
        for (int i = 0; i < kWords; ++i) seen[i] = block[i];
      }
      if (!locks.still_valid(1, v)) {
        ++retried;
        continue;
      }
      ++kept;
      for (int i = 1; i < kWords; ++i)
        if (seen[i] != seen[0] + static_cast<uint64_t>(i)) {
          ++torn;
          break;
        }
    }
  });
  // Writes go on until the reader has made enough attempts beside them, however the two are scheduled.
  for (uint64_t n = 1; attempts.load(std::memory_order_relaxed) < 50000; ++n) {
    locks.lock(1);
    for (int i = 0; i < kWords; ++i) block[i] = n * kWords + static_cast<uint64_t>(i);
    locks.unlock(1);
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(torn, 0u) << "of " << kept << " kept reads (" << retried << " retried)";
}

}  // namespace
}  // namespace pmlab::ds
