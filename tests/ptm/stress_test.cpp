#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "pmlab/crash/simulator.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ptm/common/durability.hpp"
#include "pmlab/pmdk/obj_ptm.hpp"
#include "pmlab/ptm/redo/redo_ptm.hpp"
#include "pmlab/ptm/undo/undo_ptm.hpp"
#include "pmlab/ptm/workloads/bank.hpp"
#include "pmlab/ptm/workloads/bptree.hpp"
#include "pmlab/ptm/workloads/hashmap.hpp"
#include "pmlab/ptm/workloads/queue.hpp"
#include "pmlab/ptm/workloads/sps.hpp"
#include "pmlab/ptm/workloads/tx_arena.hpp"
#include "../support/temp_dir.hpp"
#include "./memory.hpp"

namespace pmlab::ptm {
namespace {

// --- multi-threaded stress (run under TSan too) ----------------------------------------------------

template <class P>
void stress(int threads) {
  Memory m(16 << 20, threads, 1 << 16);
  P ptm(m.regions(), m.options());
  ASSERT_TRUE(ptm.format().ok());
  workloads::Config c;
  c.records = 512;
  workloads::Bank<P> bank;
  workloads::Queue<P> queue;  // shares the heap: bank uses roots 0-1, the queue 2-5
  ASSERT_TRUE(bank.load(ptm, c).ok());
  ASSERT_TRUE(queue.load(ptm, c).ok());
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      workloads::Rng rng(static_cast<uint64_t>(t) + 11);
      for (int i = 0; i < 2000; ++i) {
        bank.op(ptm, t, rng);
        queue.op(ptm, t, rng);
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_TRUE(bank.check(ptm).ok());
  Status qs = queue.check(ptm);
  EXPECT_TRUE(qs.ok()) << qs.message();
  EXPECT_EQ(ptm.counters().transactions, static_cast<uint64_t>(threads) * 4000 + 6u);
  // Recovery after a clean stop changes nothing and the allocator still balances.
  P again(m.regions(), m.options());
  ASSERT_TRUE(again.recover().ok());
  auto st = again.heap().stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->allocated_blocks, 1u + c.records);  // the accounts array and the queue nodes
}

TEST(PtmStress, UndoFourThreadsBankAndQueue) { stress<UndoPtm>(4); }
TEST(PtmStress, RedoFourThreadsBankAndQueue) { stress<RedoPtm>(4); }

// Snapshots are consistent while other threads commit: read-only transactions that sum every account
// always see the conserved total (a read that mixed two commits would not), and writers on disjoint and
// overlapping accounts keep it.
TEST(PtmStress, RedoConcurrentReadersSeeConsistentSnapshots) {
  constexpr int kWriters = 2;
  Memory m(16 << 20, kWriters + 1, 1 << 16);
  RedoPtm ptm(m.regions(), m.options());
  ASSERT_TRUE(ptm.format().ok());
  workloads::Config c;
  c.records = 64;
  workloads::Bank<RedoPtm> bank;
  ASSERT_TRUE(bank.load(ptm, c).ok());
  uint64_t* accounts = nullptr;
  ptm.run(0, [&](auto& tx) { accounts = tx.template at<uint64_t>(tx.read(tx.root(0))); });
  const uint64_t want = c.records * workloads::kInitialBalance;
  std::atomic<int> writers_done{0};
  std::atomic<uint64_t> torn{0}, snapshots{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kWriters; ++t)
    ts.emplace_back([&, t] {
      while (snapshots.load() == 0) std::this_thread::yield();  // the reader is running
      workloads::Rng rng(static_cast<uint64_t>(t) + 5);
      for (int i = 0; i < 3000; ++i) bank.op(ptm, t, rng);
      writers_done.fetch_add(1);
    });
  ts.emplace_back([&] {
    while (writers_done.load() < kWriters || snapshots.load() < 100) {
      uint64_t sum = 0;
      ptm.run(kWriters, [&](auto& tx) {
        sum = 0;
        for (uint64_t i = 0; i < c.records; ++i) sum += tx.read(accounts + i);
      });
      if (sum != want) torn.fetch_add(1);
      snapshots.fetch_add(1);
    }
  });
  for (auto& th : ts) th.join();
  EXPECT_EQ(torn.load(), 0u) << "of " << snapshots.load() << " snapshots";
  EXPECT_GT(snapshots.load(), 0u);
  EXPECT_TRUE(bank.check(ptm).ok());
}

// Two threads run `ops` operations each of workload W (loaded from `c`) on one redo PTM, then W's invariants
// are checked, the heap is recovered and the structure S found again in it: `after` sees the recovered
// PTM and the structure's record count there.
template <template <class> class W, template <class> class S>
void stress_then_recover(const workloads::Config& c, int ops, uint64_t seed,
                         const std::function<void(RedoPtm&, uint64_t)>& after) {
  constexpr int kThreads = 2;
  Memory m(16 << 20, kThreads, 1 << 18);
  {
    RedoPtm ptm(m.regions(), m.options());
    ASSERT_TRUE(ptm.format().ok());
    W<RedoPtm> w;
    ASSERT_TRUE(w.load(ptm, c).ok());
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&, t] {
        workloads::Rng rng(static_cast<uint64_t>(t) + seed);
        for (int i = 0; i < ops; ++i) w.op(ptm, t, rng);
      });
    for (auto& th : ts) th.join();
    Status st = w.check(ptm);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  RedoPtm again(m.regions(), m.options());
  ASSERT_TRUE(again.recover().ok());
  workloads::PtmStructure<RedoPtm, S> on(again, W<RedoPtm>::kRoot, workloads::word_values(2 * c.records));
  ASSERT_TRUE(on.recover(again).ok());
  uint64_t count = 0;
  on.run(again, 0, [&](auto& s) {
    EXPECT_TRUE(s.check().ok());
    count = s.count();
  });
  after(again, count);
}

// Two threads on one hash map (inserts, removes, lookups on shared keys): the structure's invariants
// hold, no block leaks (every allocated block is the map's: its header and buckets, or a node it holds),
// and the recovered heap holds the same map.
TEST(PtmStress, RedoConcurrentHashMapKeepsItsInvariants) {
  workloads::Config c;
  c.records = 512;
  stress_then_recover<workloads::HashMap, ds::Hashtable>(c, 4000, 21, [](RedoPtm& again, uint64_t count) {
    auto st = again.heap().stats();
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->allocated_blocks, 2u + count) << "the arena header, the bucket array and one block per key";
  });
}

// A read that cannot extend the snapshot ends the attempt there: the body is abandoned (it never sees the
// old A beside the new B) and runs again from the start, where both are new. The conflicting commit comes
// from another slot inside the first attempt, so the interleaving is exact.
TEST(RedoPtm, AnInconsistentReadAbandonsTheAttemptBeforeTheBodyUsesIt) {
  Memory m(1 << 20, 2, 1 << 16);
  RedoPtm ptm(m.regions(), m.options());
  ASSERT_TRUE(ptm.format().ok());
  uint64_t a = 0, b = 0;
  ptm.run(0, [&](auto& tx) {
    a = tx.alloc(64);   // a line of its own
    b = tx.alloc(128);  // and another
    tx.write(tx.template at<uint64_t>(a), 1);
    tx.write(tx.template at<uint64_t>(b), 1);
  });
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  int attempts = 0, mixed = 0;
  uint64_t seen_a = 0, seen_b = 0;
  ptm.run(0, [&](auto& tx) {
    ++attempts;
    seen_a = tx.read(tx.template at<uint64_t>(a));
    if (attempts == 1)
      ptm.run(1, [&](auto& other) {
        other.write(other.template at<uint64_t>(a), 2);
        other.write(other.template at<uint64_t>(b), 2);
      });
    seen_b = tx.read(tx.template at<uint64_t>(b));  // attempt 1: throws here, A having changed
    if (seen_a != seen_b) ++mixed;
  });
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(mixed, 0) << "the body ran on with an inconsistent pair";
  EXPECT_EQ(seen_a, 2u);
  EXPECT_EQ(seen_b, 2u);
}

// Two threads on one B+-tree (upserts that split leaves and inner nodes, lookups, on shared keys): every
// attempt either commits or is abandoned at its first inconsistent read, so both threads finish (a doomed
// attempt that ran on over a mix of old and new nodes could loop), the tree keeps its invariants and
// every loaded key, and the recovered heap holds the same tree.
TEST(PtmStress, RedoConcurrentBPTreeFinishesAndKeepsItsInvariants) {
  workloads::Config c;
  c.records = 256;  // a small tree: splits are frequent, and so are conflicts
  c.lookup_pct = 20;
  stress_then_recover<workloads::BPTree, ds::BPTree>(c, 3000, 31, [&](RedoPtm&, uint64_t count) {
    EXPECT_GE(count, c.records);
    EXPECT_LE(count, 2 * c.records);
  });
}

}  // namespace
}  // namespace pmlab::ptm
