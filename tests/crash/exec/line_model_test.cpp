#include "pmlab/crash/exec/line_model.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "pmlab/crash/enumerator.hpp"

namespace pmlab::crash::exec {
namespace {

LineBytes filled(uint8_t v) {
  LineBytes b;
  b.fill(static_cast<std::byte>(v));
  return b;
}

std::vector<std::byte> line_of(const LineModel& m, size_t line) {
  const auto* p = m.durable().data() + line * kLineBytes;
  return {p, p + kLineBytes};
}

TEST(ExecLineModel, AdrLineIsDurableOnlyAfterItsThreadWritesBackAndFences) {
  LineModel m(persist::Domain::adr);
  ASSERT_TRUE(m.resize(4 * kLineBytes).ok());
  m.store(1, filled(7), false, 0);
  ASSERT_EQ(m.pending().size(), 1u);
  EXPECT_FALSE(m.fence_orders(0));  // nothing written back yet
  m.writeback(1, 1, 0, 0x10);
  EXPECT_FALSE(m.fence_orders(1));  // another thread's fence orders nothing of thread 0
  EXPECT_TRUE(m.fence_orders(0));
  m.fence(1, 0);
  ASSERT_EQ(m.pending().size(), 1u) << "thread 1's fence made thread 0's write-back durable";
  EXPECT_EQ(line_of(m, 1)[0], std::byte{0});
  m.fence(0, 0);
  EXPECT_TRUE(m.pending().empty());
  EXPECT_EQ(line_of(m, 1)[0], std::byte{7});
}

TEST(ExecLineModel, AdrMakesDurableTheContentAtTheWriteBackNotTheLatest) {
  LineModel m(persist::Domain::adr);
  ASSERT_TRUE(m.resize(2 * kLineBytes).ok());
  m.store(0, filled(1), false, 0);
  m.writeback(0, 1, 0, 0);
  m.store(0, filled(2), false, 0);
  const auto pending = m.pending();
  ASSERT_EQ(pending.size(), 1u);
  ASSERT_EQ(pending[0].values.size(), 2u);
  EXPECT_EQ(pending[0].values[static_cast<size_t>(pending[0].written_back)], filled(1));
  EXPECT_EQ(pending[0].values[static_cast<size_t>(pending[0].latest)], filled(2));
  m.fence(0, 0);
  EXPECT_EQ(line_of(m, 0)[0], std::byte{1});
  const auto after = m.pending();
  ASSERT_EQ(after.size(), 1u) << "the store after the write-back is still pending";
  EXPECT_EQ(after[0].values.size(), 1u);
}

TEST(ExecLineModel, EadrMakesEveryStoreDurableAtAnyFence) {
  LineModel m(persist::Domain::eadr);
  ASSERT_TRUE(m.resize(2 * kLineBytes).ok());
  EXPECT_FALSE(m.fence_orders(0));
  m.store(1, filled(9), false, 0);
  EXPECT_TRUE(m.fence_orders(3));
  m.fence(3, 0);
  EXPECT_TRUE(m.pending().empty());
  EXPECT_EQ(line_of(m, 1)[0], std::byte{9});
}

TEST(ExecLineModel, CountsWriteBacksThatHadNothingNewToWriteBack) {
  LineModel m(persist::Domain::adr);
  ASSERT_TRUE(m.resize(4 * kLineBytes).ok());
  EXPECT_EQ(m.writeback(0, 2, 0, 0), 2u) << "clean lines";
  m.store(0, filled(3), false, 0);
  EXPECT_EQ(m.writeback(0, 1, 0, 0), 0u);
  EXPECT_EQ(m.writeback(0, 1, 0, 0), 1u) << "the same content again";
  EXPECT_EQ(m.writeback(0, 1, 1, 0), 0u) << "another thread's first write-back of it";
}

TEST(ExecLineModel, PlainAndNonTemporalBytesAreKeptApart) {
  LineModel m(persist::Domain::adr);
  ASSERT_TRUE(m.resize(kLineBytes).ok());
  LineBytes v{};
  v[0] = std::byte{1};
  m.store(0, v, true, 0);
  EXPECT_EQ(m.pending()[0].plain_bytes, 0u);
  v[9] = std::byte{1};
  m.store(0, v, false, 0);
  EXPECT_EQ(m.pending()[0].plain_bytes, uint64_t{1} << 9);
}

TEST(ExecLineModel, KeepsTheDurableHashOfItsImage) {
  LineModel m(persist::Domain::adr);
  ASSERT_TRUE(m.resize(8 * kLineBytes).ok());
  std::vector<std::byte> base(kLineBytes * 2, std::byte{5});
  m.set_base(2 * kLineBytes, base.data(), base.size());
  m.store(3, filled(6), false, 0);
  m.writeback(3, 1, 0, 0);
  m.fence(0, 0);
  ASSERT_TRUE(m.resize(16 * kLineBytes).ok());
  EXPECT_EQ(m.durable_hash(), image_hash(m.durable().data(), m.durable().size()));
}

TEST(ExecLineModel, NamesLinesWhoseLatestContentWasNeverWrittenBack) {
  LineModel m(persist::Domain::adr);
  ASSERT_TRUE(m.resize(4 * kLineBytes).ok());
  m.store(0, filled(1), false, 0);
  m.store(2, filled(1), false, 0);
  m.writeback(2, 1, 0, 0);
  m.store(3, filled(1), false, 0);
  m.writeback(3, 1, 0, 0);
  m.store(3, filled(2), false, 0);
  EXPECT_EQ(m.never_written_back(), (std::vector<size_t>{0, 3}));
}

TEST(ExecLineModel, OriginNamesTheFenceThatFirstSawAStore) {
  LineModel m(persist::Domain::adr);
  ASSERT_TRUE(m.resize(2 * kLineBytes).ok());
  m.store(0, filled(1), false, 0);
  m.fence(0, 7);
  ASSERT_NE(m.origin(0), nullptr);
  EXPECT_EQ(m.origin(0)->stored_before_fence, 1u);
  EXPECT_EQ(m.origin(0)->stored_stack, 7u);
  m.writeback(0, 1, 0, 0x1234);
  EXPECT_EQ(m.origin(0)->written_back_site, 0x1234u);
  EXPECT_EQ(m.origin(0)->written_back_after_fence, 1u);
}

// A model of a 1 GiB image knows the pages the run gave content, in the order it did, and no other: a
// starting page, and a page a store changed (not one a store left as it was); it reads zero elsewhere.
TEST(ExecLineModel, TheImagesPagesWithContentAreTheOnesTheRunGaveContent) {
  LineModel m(persist::Domain::adr);
  constexpr size_t kPage = 4096, kBytes = size_t{1} << 30;
  ASSERT_TRUE(m.resize(kBytes).ok());
  std::vector<std::byte> page(kPage, std::byte{9});
  m.set_base(5 * kPage, page.data(), kPage);
  m.store(3 * kPage / kLineBytes, filled(1), false, 0);
  m.store(7 * kPage / kLineBytes, filled(0), false, 0);  // zero over zero: no change
  m.store(kBytes / kLineBytes - 1, filled(2), false, 0);
  EXPECT_EQ(m.content_pages(), (std::vector<size_t>{5, 3, kBytes / kPage - 1}));
  for (size_t p = 0; p < 8; ++p) EXPECT_EQ(m.has_content()[p], p == 5 || p == 3) << p;
  EXPECT_EQ(m.durable()[5 * kPage], std::byte{9});
  EXPECT_EQ(m.durable()[(kBytes / kPage / 2) * kPage], std::byte{0});
  uint64_t expected = 0;  // the base page's words; a zero word adds nothing, and the stores are not durable
  for (size_t w = 0; w < kPage / 8; ++w) expected += word_hash_term(5 * kPage / 8 + w, 0x0909090909090909ULL);
  EXPECT_EQ(m.durable_hash(), expected) << "a zero word adds nothing to the hash";
}

// Growing the image keeps what its pages with content hold, and the new pages read zero.
TEST(ExecLineModel, GrowingTheImageKeepsItsContent) {
  LineModel m(persist::Domain::eadr);
  constexpr size_t kPage = 4096;
  ASSERT_TRUE(m.resize(2 * kPage).ok());
  std::vector<std::byte> page(kPage, std::byte{5});
  m.set_base(kPage, page.data(), kPage);
  m.store(0, filled(3), false, 0);
  m.fence(0, 0);  // eADR: the store is durable
  const uint64_t hash = m.durable_hash();
  ASSERT_TRUE(m.resize(8 * kPage).ok());
  EXPECT_EQ(m.size(), 8 * kPage);
  EXPECT_EQ(line_of(m, 0)[0], std::byte{3});
  EXPECT_EQ(m.durable()[kPage + 100], std::byte{5});
  EXPECT_EQ(m.durable()[5 * kPage], std::byte{0});
  EXPECT_EQ(m.durable_hash(), hash) << "zeros add nothing";
}

}  // namespace
}  // namespace pmlab::crash::exec
