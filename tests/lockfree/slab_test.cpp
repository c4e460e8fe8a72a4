// The slab allocator and epoch-based reclamation: every node handed out once, the upper 32 bits of a
// bitmap word found, recovery marking, and nodes reclaimed only after every thread left its epoch.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "../primitives/aligned_region.hpp"
#include "pmlab/lockfree/alloc/epoch.hpp"
#include "pmlab/lockfree/alloc/slab.hpp"

namespace pmlab::lockfree {
namespace {

TEST(LockfreeSlab, HandsOutEveryNodeOnceIncludingTheUpperHalfOfEachWord) {
  testing::AlignedRegion region(64 + 130 * 32);
  Slab slab(region.base, 64, 32, 130);  // 130: two full words and a partial one
  std::set<uint64_t> seen;
  for (int i = 0; i < 130; ++i) {
    const uint64_t off = slab.alloc(0);
    ASSERT_NE(off, 0u) << "node " << i;
    ASSERT_TRUE(slab.owns(off));
    ASSERT_TRUE(seen.insert(off).second) << "handed out twice: " << off;
  }
  EXPECT_EQ(slab.alloc(0), 0u) << "a full slab must say so";
  EXPECT_EQ(slab.allocated(), 130u);
  // Free only bits 40 and 63 of the first word: a 32-bit search would never find them.
  slab.free(slab.offset_of(40));
  slab.free(slab.offset_of(63));
  std::set<uint64_t> again{slab.alloc(0), slab.alloc(0)};
  EXPECT_EQ(again, (std::set<uint64_t>{slab.offset_of(40), slab.offset_of(63)}));
  EXPECT_EQ(slab.alloc(0), 0u);
}

TEST(LockfreeSlab, RecoveryMarksReachableNodesOnly) {
  testing::AlignedRegion region(64 + 100 * 32);
  Slab slab(region.base, 64, 32, 100);
  for (int i = 0; i < 50; ++i) (void)slab.alloc(0);
  slab.reset_all_free();
  EXPECT_EQ(slab.allocated(), 0u);
  EXPECT_TRUE(slab.mark_allocated(slab.offset_of(7)));
  EXPECT_FALSE(slab.mark_allocated(slab.offset_of(7))) << "a node reached twice must be reported";
  EXPECT_FALSE(slab.mark_allocated(slab.offset_of(7) + 8)) << "not a node boundary";
  EXPECT_FALSE(slab.mark_allocated(slab.end_offset())) << "outside the slab";
  EXPECT_EQ(slab.allocated(), 1u);
  for (int i = 0; i < 99; ++i) EXPECT_NE(slab.alloc(0), slab.offset_of(7));
  EXPECT_EQ(slab.alloc(0), 0u);
}

TEST(LockfreeEpoch, NodeIsNotReusedWhileAThreadMayHoldIt) {
  testing::AlignedRegion region(64 + 64 * 32);
  Slab slab(region.base, 64, 32, 64);
  EpochReclaimer ebr(1);
  const uint64_t victim = slab.alloc(0);
  ebr.enter(1);  // thread 1 is reading and may hold `victim`
  {
    EpochReclaimer::Guard g(ebr, 0);
    ebr.retire(0, slab, victim);
  }
  for (int i = 0; i < 10; ++i) EpochReclaimer::Guard g(ebr, 0);
  EXPECT_TRUE(slab.is_allocated(victim)) << "freed while thread 1 was still in its epoch";
  ebr.exit(1);
  for (int i = 0; i < 4; ++i) EpochReclaimer::Guard g(ebr, 0);
  EXPECT_FALSE(slab.is_allocated(victim)) << "never reclaimed after every thread moved on";
  EXPECT_EQ(ebr.pending(), 0u);
}

TEST(LockfreeSlabStress, ConcurrentAllocFreeNeverHandsANodeToTwoThreads) {
  constexpr uint32_t kNodes = 256;
  testing::AlignedRegion region(64 + kNodes * 64);
  Slab slab(region.base, 64, 64, kNodes);
  std::vector<std::atomic<int>> owner(kNodes);
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<uint64_t> mine;
      for (int round = 0; round < 3000; ++round) {
        if (mine.size() < 40) {
          const uint64_t off = slab.alloc(t);
          if (off == 0) continue;
          int expected = 0;
          if (!owner[slab.index_of(off)].compare_exchange_strong(expected, t + 1)) conflicts.fetch_add(1);
          mine.push_back(off);
        } else {
          for (uint64_t off : mine) {
            owner[slab.index_of(off)].store(0);
            slab.free(off);
          }
          mine.clear();
        }
      }
      for (uint64_t off : mine) {
        owner[slab.index_of(off)].store(0);
        slab.free(off);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(conflicts.load(), 0);
  EXPECT_EQ(slab.allocated(), 0u);
}

}  // namespace
}  // namespace pmlab::lockfree
