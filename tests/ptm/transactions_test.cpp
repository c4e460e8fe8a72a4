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
#include "pmlab/ptm/undo/undo_ptm.hpp"
#include "./memory.hpp"

namespace pmlab::ptm {
namespace {

template <class P>
class PtmTest : public ::testing::Test {};
using Ptms = ::testing::Types<UndoPtm, RedoPtm>;
TYPED_TEST_SUITE(PtmTest, Ptms);

TYPED_TEST(PtmTest, CommittedWritesSurviveReopenAndReadsSeeOwnWrites) {
  Memory m(1 << 16, 1, 4096);
  {
    TypeParam ptm(m.regions(), m.options());
    ASSERT_TRUE(ptm.format().ok());
    ptm.run(0, [&](auto& tx) {
      const uint64_t off = tx.alloc(64);
      ASSERT_NE(off, 0u);
      tx.write(tx.root(0), off);
      tx.write(tx.root(1), 7);
      EXPECT_EQ(tx.read(tx.root(1)), 7u);
      tx.write(tx.root(1), 8);
      EXPECT_EQ(tx.read(tx.root(1)), 8u);
      tx.write(tx.template at<uint64_t>(off), 42);
    });
  }
  TypeParam again(m.regions(), m.options());
  ASSERT_TRUE(again.recover().ok());
  again.run(0, [&](auto& tx) {
    EXPECT_EQ(tx.read(tx.root(1)), 8u);
    EXPECT_EQ(tx.read(tx.template at<uint64_t>(tx.read(tx.root(0)))), 42u);
  });
  auto st = again.heap().stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->allocated_blocks, 1u);
}

TYPED_TEST(PtmTest, AbandonedTransactionIsWhollyAbsentAfterRecovery) {
  Memory m(1 << 16, 1, 4096);
  uint64_t top_before = 0;
  {
    TypeParam ptm(m.regions(), m.options());
    ASSERT_TRUE(ptm.format().ok());
    ptm.run(0, [&](auto& tx) {
      for (int i = 0; i < 4; ++i) tx.write(tx.root(i), 100 + static_cast<uint64_t>(i));
    });
    top_before = ptm.heap().header().top;
    EXPECT_THROW(ptm.run(0,
                         [&](auto& tx) {
                           for (int i = 0; i < 4; ++i) tx.write(tx.root(i), 900);
                           const uint64_t off = tx.alloc(1000);
                           tx.write(tx.root(5), off);
                           throw Abandon{};
                         }),
                 Abandon);
  }
  TypeParam again(m.regions(), m.options());
  ASSERT_TRUE(again.recover().ok());
  again.run(0, [&](auto& tx) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(tx.read(tx.root(i)), 100u + static_cast<uint64_t>(i));
    EXPECT_EQ(tx.read(tx.root(5)), 0u);
  });
  EXPECT_EQ(again.heap().header().top, top_before) << "the abandoned allocation leaked";
}

TYPED_TEST(PtmTest, FreedBlocksAreReusedAndSurviveRecovery) {
  Memory m(1 << 16, 1, 4096);
  TypeParam ptm(m.regions(), m.options());
  ASSERT_TRUE(ptm.format().ok());
  uint64_t a = 0, b = 0;
  ptm.run(0, [&](auto& tx) { a = tx.alloc(40); });
  ptm.run(0, [&](auto& tx) { tx.free(a); });
  ptm.run(0, [&](auto& tx) { b = tx.alloc(40); });
  EXPECT_EQ(a, b);
  ptm.run(0, [&](auto& tx) { tx.free(b); });
  TypeParam again(m.regions(), m.options());
  ASSERT_TRUE(again.recover().ok());
  uint64_t c = 0;
  again.run(0, [&](auto& tx) { c = tx.alloc(40); });
  EXPECT_EQ(c, a) << "the free list was not rebuilt from the heap";
  auto st = again.heap().stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->allocated_blocks, 1u);
  EXPECT_EQ(st->free_blocks, 0u);
}

// Sequence numbers may start anywhere (Options::first_seq): across 2^32, commits, replay and retirement keep
// working, and 0 is refused.
template <class P>
void sequences_cross_2_to_32() {
  Memory m(1 << 16, 1, 4096);
  Options o = m.options();
  o.first_seq = (uint64_t{1} << 32) - 2;
  auto* heap = reinterpret_cast<HeapHeader*>(m.regions().heap);
  {
    P ptm(m.regions(), o);
    ASSERT_TRUE(ptm.format().ok());
    for (uint64_t i = 1; i <= 5; ++i) ptm.run(0, [&](auto& tx) { tx.write(tx.root(2), i); });
  }
  EXPECT_EQ(heap->root[2], 5u);
  {
    P again(m.regions(), o);
    ASSERT_TRUE(again.recover().ok());
    again.run(0, [&](auto& tx) { tx.write(tx.root(2), tx.read(tx.root(2)) + 1); });
  }
  EXPECT_EQ(heap->root[2], 6u);
  P reopened(m.regions(), o);
  ASSERT_TRUE(reopened.recover().ok());
  EXPECT_EQ(heap->root[2], 6u);
  o.first_seq = 0;
  P refused(m.regions(), o);
  EXPECT_EQ(refused.format().code(), Errc::invalid_argument);
}
TEST(UndoPtm, SequencesCrossTwoToThe32) { sequences_cross_2_to_32<UndoPtm>(); }
TEST(RedoPtm, SequencesCrossTwoToThe32) { sequences_cross_2_to_32<RedoPtm>(); }

}  // namespace
}  // namespace pmlab::ptm
