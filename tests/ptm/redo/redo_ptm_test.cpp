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

#include "pmlab/ptm/common/heap.hpp"
#include "pmlab/ptm/redo/redo_ptm.hpp"
#include "../memory.hpp"

namespace pmlab::ptm {
namespace {

TEST(RedoPtm, OneFencePerWritingTransactionAndOneFlushPerModifiedLine) {
  const std::pair<Durability, uint64_t> cases[] = {
      {Durability::adr, 1}, {Durability::eadr, 1}, {Durability::pdram_lite, 0}, {Durability::pdram, 0}};
  for (auto [d, fences] : cases) {
    Memory m(1 << 16, 1, 4096, d);
    RedoPtm ptm(m.regions(), m.options());
    ASSERT_TRUE(ptm.format().ok());
    for (int t = 0; t < 3; ++t) {
      const persist::Counters before = persist::thread_counters();
      ptm.run(0, [&](auto& tx) {
        for (int i = 0; i < 9; ++i) tx.write(tx.root(i), static_cast<uint64_t>(t * 10 + i));
      });
      const persist::Counters delta = persist::thread_counters() - before;
      EXPECT_EQ(delta.fences, fences) << to_string(d);
      if (d == Durability::adr) {
        EXPECT_EQ(delta.flushes, t == 0 ? 0u : 2u) << "the previous transaction's lines";
      } else {
        EXPECT_EQ(delta.flushes, 0u) << to_string(d);
      }
      // Non-temporal under ADR; with durable caches plain stores suffice (the fence drains them).
      EXPECT_EQ(delta.nt_bytes, d == Durability::adr ? 3u * 64 : 0u) << to_string(d);
    }
  }
}

// A word written with the value it already holds changes nothing in memory: its line is not written back
// for it (a write-back of an unchanged line is a media write for nothing), while the record still names it,
// so recovery replays it as the transaction wrote it. (Roots 0-3 share line 0 with the top; 4-11 are line 1.)
TEST(RedoPtm, AWordWrittenWithTheValueItHoldsIsNotWrittenBack) {
  Memory m(1 << 16, 1, 4096);
  auto* heap = reinterpret_cast<HeapHeader*>(m.regions().heap);
  {
    RedoPtm ptm(m.regions(), m.options());
    ASSERT_TRUE(ptm.format().ok());
    ptm.run(0, [&](auto& tx) {
      tx.write(tx.root(1), 5);
      tx.write(tx.root(6), 6);
    });
    auto flushes_of_next_commit = [&] {
      const persist::Counters before = persist::thread_counters();
      ptm.run(0, [&](auto& tx) { tx.write(tx.root(2), tx.read(tx.root(2)) + 1); });
      return (persist::thread_counters() - before).flushes;
    };
    EXPECT_EQ(flushes_of_next_commit(), 2u) << "both lines of the first transaction";
    ptm.run(0, [&](auto& tx) {
      tx.write(tx.root(6), 6);  // line 1: the value it holds
      tx.write(tx.root(8), 0);  // line 1: the value it holds
      tx.write(tx.root(1), 7);  // line 0: changed
    });
    EXPECT_EQ(flushes_of_next_commit(), 1u) << "line 1 did not change";
    ptm.run(0, [&](auto& tx) { tx.write(tx.root(6), 6); });
    EXPECT_EQ(flushes_of_next_commit(), 0u) << "the transaction before changed nothing";
  }
  EXPECT_EQ(heap->root[6], 6u);
  EXPECT_EQ(heap->root[1], 7u);
  heap->root[6] = 0;  // as if line 1 had never been written back
  RedoPtm again(m.regions(), m.options());
  ASSERT_TRUE(again.recover().ok());
  EXPECT_EQ(heap->root[6], 6u) << "the newest record names root 6 and is replayed";
}

TEST(RedoPtm, ReadOnlyTransactionIssuesNothing) {
  Memory m(1 << 16, 1, 4096);
  RedoPtm ptm(m.regions(), m.options());
  ASSERT_TRUE(ptm.format().ok());
  ptm.run(0, [&](auto& tx) { tx.write(tx.root(3), 5); });
  const persist::Counters before = persist::thread_counters();
  uint64_t v = 1;
  ptm.run(0, [&](auto& tx) { v = tx.read(tx.root(3)); });
  EXPECT_EQ(v, 5u);
  const persist::Counters d = persist::thread_counters() - before;
  EXPECT_EQ(d.fences, 0u);
  EXPECT_EQ(d.flushes, 0u);
  EXPECT_EQ(d.nt_bytes, 0u);
}

// The newest record stays live until the thread's next fence: a crash before its write-backs reached
// memory is repaired by replaying it; a torn record (checksum mismatch) is not replayed.
TEST(RedoPtm, RecoveryReplaysALiveRecordAndNotATornOne) {
  Memory m(1 << 16, 1, 4096);
  {
    RedoPtm ptm(m.regions(), m.options());
    ASSERT_TRUE(ptm.format().ok());
    ptm.run(0, [&](auto& tx) { tx.write(tx.root(2), 77); });
  }
  auto* heap = reinterpret_cast<HeapHeader*>(m.regions().heap);
  ASSERT_EQ(heap->root[2], 77u);
  heap->root[2] = 0;  // the write-back that never reached memory
  {
    RedoPtm again(m.regions(), m.options());
    ASSERT_TRUE(again.recover().ok());
    EXPECT_EQ(again.replayed(), 1u);
    EXPECT_EQ(heap->root[2], 77u);
  }
  // Recovery retired the record: a second recovery replays nothing over later writes.
  heap->root[2] = 5;
  {
    RedoPtm twice(m.regions(), m.options());
    ASSERT_TRUE(twice.recover().ok());
    EXPECT_EQ(twice.replayed(), 0u);
    EXPECT_EQ(heap->root[2], 5u);
    twice.run(0, [&](auto& tx) { tx.write(tx.root(2), 78); });
  }
  heap->root[2] = 0;
  auto* record = reinterpret_cast<uint64_t*>(m.regions().log + sizeof(RedoRetireLine));
  ASSERT_EQ(record[1], 1u) << "one entry";
  record[3] = 79;  // the entry's value, torn
  RedoPtm torn(m.regions(), m.options());
  ASSERT_TRUE(torn.recover().ok());
  EXPECT_EQ(torn.replayed(), 0u);
  EXPECT_EQ(heap->root[2], 0u);
}

// Slot 0 writes a word, slot 1 overwrites it and then runs until both its areas hold other records: slot
// 0's record is still valid, and only its retirement by slot 1's commit keeps recovery from replaying it
// over slot 1's value.
TEST(RedoPtm, AnotherSlotsRecordIsRetiredBeforeItsWordsAreOverwritten) {
  Memory m(1 << 16, 2, 4096);
  auto* heap = reinterpret_cast<HeapHeader*>(m.regions().heap);
  {
    RedoPtm ptm(m.regions(), m.options());
    ASSERT_TRUE(ptm.format().ok());
    ptm.run(0, [&](auto& tx) { tx.write(tx.root(7), 1); });
    ptm.run(1, [&](auto& tx) { tx.write(tx.root(7), 2); });
    ptm.run(1, [&](auto& tx) { tx.write(tx.root(9), 3); });
    ptm.run(1, [&](auto& tx) { tx.write(tx.root(10), 4); });
  }
  ASSERT_EQ(heap->root[7], 2u);
  RedoPtm again(m.regions(), m.options());
  ASSERT_TRUE(again.recover().ok());
  EXPECT_EQ(heap->root[7], 2u) << "slot 0's stale record was replayed";
  EXPECT_EQ(heap->root[10], 4u);
}

// A line whose previous writer is another thread that has not fenced since: the committing thread writes
// that transaction's lines back itself and fences once more before retiring it. Once that thread has
// fenced (its next commit), no help is needed. (Roots 0-3 share line 0 with the top; 4-11 are line 1.)
TEST(RedoPtm, AnUnfencedPredecessorInAnotherSlotCostsOneMoreFence) {
  Memory m(1 << 16, 2, 4096);
  RedoPtm ptm(m.regions(), m.options());
  ASSERT_TRUE(ptm.format().ok());
  auto fences_of = [&](int slot, int root, uint64_t v) {
    const persist::Counters before = persist::thread_counters();
    ptm.run(slot, [&](auto& tx) { tx.write(tx.root(root), v); });
    return (persist::thread_counters() - before).fences;
  };
  EXPECT_EQ(fences_of(0, 0, 5), 1u);  // line 0
  EXPECT_EQ(fences_of(0, 4, 6), 1u);  // line 1; slot 0's line-0 transaction is durable from here on
  EXPECT_EQ(fences_of(1, 5, 8), 2u) << "slot 0's last transaction (line 1) was not yet durable";
  EXPECT_EQ(fences_of(1, 1, 7), 1u) << "slot 0's line-0 transaction was durable";
  RedoPtm again(m.regions(), m.options());
  ASSERT_TRUE(again.recover().ok());
  again.run(0, [&](auto& tx) {
    EXPECT_EQ(tx.read(tx.root(0)), 5u);
    EXPECT_EQ(tx.read(tx.root(1)), 7u);
    EXPECT_EQ(tx.read(tx.root(4)), 6u);
    EXPECT_EQ(tx.read(tx.root(5)), 8u);
  });
}

}  // namespace
}  // namespace pmlab::ptm
