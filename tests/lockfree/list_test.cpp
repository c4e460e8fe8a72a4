// The lock-free sets: every design against std::set, recovery after a clean stop and after crafted crash
// images (TLog redo, Link-free/SOFT validity), and concurrent stress runs that must lose or duplicate
// no element (run these under ThreadSanitizer: --gtest_filter='*Stress*').
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "../primitives/aligned_region.hpp"
#include "../support/write_back_judge.hpp"
#include "pmlab/lockfree/list/linked_list.hpp"
#include "pmlab/lockfree/list/linkfree_list.hpp"
#include "pmlab/lockfree/list/soft_list.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::lockfree {
namespace {

persist::Persister adr() {
  persist::Config c;
  c.domain = persist::Domain::adr;
  c.flush = persist::best_line_flush(platform::CpuFeatures::host());
  return persist::Persister::create(c).value();
}

template <class L>
struct Named;
template <>
struct Named<LinkedList<ListDesign::volatile_harris>> {
  static constexpr const char* name = "volatile";
};
template <>
struct Named<LinkedList<ListDesign::tlog>> {
  static constexpr const char* name = "tlog";
};
template <>
struct Named<LinkedList<ListDesign::logfree>> {
  static constexpr const char* name = "logfree";
};
template <>
struct Named<SoftList> {
  static constexpr const char* name = "soft";
};
template <>
struct Named<LinkFreeList> {
  static constexpr const char* name = "linkfree";
};

template <class L>
class LockfreeList : public ::testing::Test {};
template <class L>
class LockfreeListStress : public ::testing::Test {};

struct NameOf {
  template <class L>
  static std::string GetName(int) {
    return Named<L>::name;
  }
};

using Designs = ::testing::Types<LinkedList<ListDesign::volatile_harris>, LinkedList<ListDesign::tlog>,
                                 LinkedList<ListDesign::logfree>, SoftList, LinkFreeList>;
TYPED_TEST_SUITE(LockfreeList, Designs, NameOf);
TYPED_TEST_SUITE(LockfreeListStress, Designs, NameOf);

constexpr uint32_t kCapacity = 4096;

TYPED_TEST(LockfreeList, MatchesStdSetAndSurvivesACleanReopen) {
  const persist::Persister p = adr();
  testing::AlignedRegion region(TypeParam::bytes_needed(kCapacity, 4));
  std::set<uint64_t> model;
  {
    TypeParam list(region.base, region.size, p, 1);
    ASSERT_TRUE(list.format(kCapacity, 4));
    std::mt19937_64 rng(42);
    for (int i = 0; i < 20000; ++i) {
      const uint64_t key = 1 + rng() % 300;
      switch (rng() % 3) {
        case 0: ASSERT_EQ(list.insert(0, key), model.insert(key).second) << "insert " << key; break;
        case 1: ASSERT_EQ(list.remove(0, key), model.erase(key) == 1) << "delete " << key; break;
        default: ASSERT_EQ(list.contains(0, key), model.count(key) == 1) << "contains " << key; break;
      }
    }
    EXPECT_EQ(list.keys(), std::vector<uint64_t>(model.begin(), model.end()));
    ASSERT_TRUE(list.check()) << list.check().message();
    EXPECT_EQ(list.alloc_failures(), 0u);
  }
  if (std::string(Named<TypeParam>::name) == "volatile") return;  // nothing to reopen
  TypeParam reopened(region.base, region.size, p, 1);
  ASSERT_TRUE(reopened.recover());
  EXPECT_EQ(reopened.keys(), std::vector<uint64_t>(model.begin(), model.end()));
  ASSERT_TRUE(reopened.check()) << reopened.check().message();
  EXPECT_EQ(reopened.slab().allocated(), model.size()) << "recovery leaked or lost nodes";
}

// A format of a new pool's region (zeros), and the recovery of the empty list it made, write back only
// lines they changed and fence only after writing: `pmlab crash exec` finds neither a redundant write-back
// nor an empty fence in a program that makes or opens a set. Over stale bytes the format leaves the same.
TYPED_TEST(LockfreeList, AFormatAndARecoveryWriteBackOnlyWhatTheyChange) {
  const uint64_t bytes = TypeParam::bytes_needed(64, 2);
  testing::AlignedRegion fresh(bytes), stale(bytes);
  std::memset(fresh.base, 0, fresh.size);
  testing::WriteBackJudge judge(fresh.span());
  persist::Persister judged = adr();
  judged.attach(&judge);
  {
    TypeParam list(fresh.base, fresh.size, judged, 1);
    ASSERT_TRUE(list.format(64, 2));
  }
  if (std::string(Named<TypeParam>::name) != "volatile") {
    TypeParam reopened(fresh.base, fresh.size, judged, 1);
    ASSERT_TRUE(reopened.recover());
  }
  EXPECT_EQ(judge.redundant_lines, 0u);
  EXPECT_EQ(judge.empty_fences, 0u);
  EXPECT_EQ(judge.outside, 0u);
  const persist::Persister plain = adr();
  TypeParam over_stale(stale.base, stale.size, plain, 1);
  ASSERT_TRUE(over_stale.format(64, 2));
  EXPECT_EQ(std::memcmp(fresh.base, stale.base, bytes), 0);
}

TYPED_TEST(LockfreeList, FullSlabIsReportedNotCorrupted) {
  const persist::Persister p = adr();
  testing::AlignedRegion region(TypeParam::bytes_needed(64, 1));
  TypeParam list(region.base, region.size, p, 1);
  ASSERT_TRUE(list.format(64, 1));
  for (uint64_t k = 1; k <= 64; ++k) ASSERT_TRUE(list.insert(0, k));
  EXPECT_FALSE(list.insert(0, 65));
  EXPECT_EQ(list.alloc_failures(), 1u);
  EXPECT_TRUE(list.contains(0, 64));
  EXPECT_TRUE(list.remove(0, 1));
  list.check().ok();  // reclaims
  EXPECT_TRUE(list.insert(0, 65));
}

TEST(LockfreeListRecovery, TLogRedoesAnInsertWhoseLinkNeverBecameDurable) {
  const persist::Persister p = adr();
  using List = LinkedList<ListDesign::tlog>;
  testing::AlignedRegion region(List::bytes_needed(64, 2));
  {
    List list(region.base, region.size, p, 1);
    ASSERT_TRUE(list.format(64, 2));
    ASSERT_TRUE(list.insert(0, 10));
    ASSERT_TRUE(list.insert(0, 30));
  }
  // A crash image in which thread 1 logged "insert 20 with node n" and wrote n, but its link is lost.
  const uint64_t first = list_layout::slab_offset(2);
  const uint64_t n = first + 5 * sizeof(list_layout::Node);
  auto* node = reinterpret_cast<list_layout::Node*>(region.base + n);
  node->key = 20;
  node->next = 0;
  *reinterpret_cast<uint64_t*>(region.base + list_layout::log_offset(1)) = uint64_t{5} << 32 | 20 << 2 | 1;
  List list(region.base, region.size, p, 1);
  ASSERT_TRUE(list.recover());
  EXPECT_EQ(list.keys(), (std::vector<uint64_t>{10, 20, 30}));
  EXPECT_TRUE(list.check());
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(region.base + list_layout::log_offset(1)), 0u) << "log not cleared";
}

TEST(LockfreeListRecovery, TLogDoesNotRepeatAnInsertThatWasLaterDeleted) {
  const persist::Persister p = adr();
  using List = LinkedList<ListDesign::tlog>;
  testing::AlignedRegion region(List::bytes_needed(64, 2));
  {
    List list(region.base, region.size, p, 1000);  // no reclamation: the node keeps its content
    ASSERT_TRUE(list.format(64, 2));
    ASSERT_TRUE(list.insert(1, 20));
    ASSERT_TRUE(list.remove(0, 20));
  }
  // Thread 1's insert had linearized, been deleted by thread 0, and not yet cleared its log.
  const uint64_t first = list_layout::slab_offset(2);
  uint32_t idx = 0;
  for (; idx < 64; ++idx)
    if (reinterpret_cast<list_layout::Node*>(region.base + first + idx * 32)->key == 20) break;
  ASSERT_LT(idx, 64u);
  *reinterpret_cast<uint64_t*>(region.base + list_layout::log_offset(1)) = uint64_t{idx} << 32 | 20 << 2 | 1;
  List list(region.base, region.size, p, 1);
  ASSERT_TRUE(list.recover());
  EXPECT_TRUE(list.keys().empty()) << "redo resurrected a deleted key";
}

TEST(LockfreeListRecovery, LinkFreeAndSoftIgnoreInvalidAndDeletedNodes) {
  const persist::Persister p = adr();
  testing::AlignedRegion region(LinkFreeList::bytes_needed(64, 1));
  {
    LinkFreeList list(region.base, region.size, p, 1);
    ASSERT_TRUE(list.format(64, 1));
    for (uint64_t k : {5, 6, 7}) ASSERT_TRUE(list.insert(0, k));
    ASSERT_TRUE(list.remove(0, 6));
  }
  // A node linked but never made valid (its insert did not linearize) must not come back.
  auto* stray = reinterpret_cast<list_layout::Node*>(region.base + list_layout::slab_offset(1) + 60 * 32);
  stray->meta = validity::fresh(9);
  LinkFreeList list(region.base, region.size, p, 1);
  ASSERT_TRUE(list.recover());
  EXPECT_EQ(list.keys(), (std::vector<uint64_t>{5, 7}));
  EXPECT_EQ(list.slab().allocated(), 2u);

  testing::AlignedRegion soft_region(SoftList::bytes_needed(64, 1));
  {
    SoftList soft(soft_region.base, soft_region.size, p, 1);
    ASSERT_TRUE(soft.format(64, 1));
    for (uint64_t k : {5, 6, 7}) ASSERT_TRUE(soft.insert(0, k));
    ASSERT_TRUE(soft.remove(0, 6));
  }
  SoftList soft(soft_region.base, soft_region.size, p, 1);
  ASSERT_TRUE(soft.recover());
  EXPECT_EQ(soft.keys(), (std::vector<uint64_t>{5, 7}));
  EXPECT_TRUE(soft.check());
}

// Threads share a small key range; each counts its successful inserts and deletes per key. Set
// semantics: per key, inserts - deletes is 0 or 1 and says whether the key is in the final list.
TYPED_TEST(LockfreeListStress, ConcurrentUpdatesLoseAndDuplicateNothing) {
  constexpr int kThreads = 4;
  constexpr uint64_t kRange = 64;
  constexpr int kOps = 20000;
  const persist::Persister p = adr();
  testing::AlignedRegion region(TypeParam::bytes_needed(kCapacity, kThreads));
  TypeParam list(region.base, region.size, p);
  ASSERT_TRUE(list.format(kCapacity, kThreads));
  std::vector<std::vector<int64_t>> net(kThreads, std::vector<int64_t>(kRange + 1, 0));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + static_cast<uint64_t>(t));
      for (int i = 0; i < kOps; ++i) {
        const uint64_t key = 1 + rng() % kRange;
        const uint64_t r = rng() % 10;
        if (r < 4) net[t][key] += list.insert(t, key) ? 1 : 0;
        else if (r < 8) net[t][key] -= list.remove(t, key) ? 1 : 0;
        else (void)list.contains(t, key);
      }
    });
  for (auto& th : threads) th.join();
  const std::vector<uint64_t> keys = list.keys();
  const std::set<uint64_t> present(keys.begin(), keys.end());
  ASSERT_EQ(present.size(), keys.size()) << "a key is in the list twice";
  for (uint64_t k = 1; k <= kRange; ++k) {
    int64_t sum = 0;
    for (int t = 0; t < kThreads; ++t) sum += net[t][k];
    ASSERT_TRUE(sum == 0 || sum == 1) << "key " << k << ": " << sum << " more inserts than deletes succeeded";
    EXPECT_EQ(sum == 1, present.count(k) == 1) << "key " << k;
  }
  ASSERT_TRUE(list.check()) << list.check().message();
  EXPECT_EQ(list.alloc_failures(), 0u);
  if (std::string(Named<TypeParam>::name) == "volatile") return;
  TypeParam reopened(region.base, region.size, p);
  ASSERT_TRUE(reopened.recover());
  EXPECT_EQ(reopened.keys(), keys);
  EXPECT_EQ(reopened.slab().allocated(), keys.size());
}

}  // namespace
}  // namespace pmlab::lockfree
