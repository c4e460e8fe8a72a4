// The persist B+-tree's reopen (the index kept when it still routes every key, rebuilt otherwise) and its
// splits when the arena runs out of room (nothing the tree holds is lost or misrouted).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/media/region.hpp"

namespace pmlab::ds {
namespace {

using Tree = BPTree<Arena<Durable>>;

const std::byte* bytes_of(const uint64_t& v) { return reinterpret_cast<const std::byte*>(&v); }

// A tree of small leaves (many splits, three inner levels) over a DRAM buffer, with keys 2, 4, … and
// two runs of them removed.
class BPTreeReopen : public ::testing::Test {
 protected:
  void SetUp() override {
    o_.value_bytes = 8;
    o_.capacity = 4000;
    o_.leaf_slots = 4;
    ASSERT_TRUE(buffer_.reserve(Tree::bytes_needed(o_) + (1 << 20)).ok());
    arena_.emplace(buffer_.region().base, buffer_.region().size, p_);
    tree_ = std::make_unique<Tree>(*arena_, o_);
    ASSERT_TRUE(tree_->create(o_.capacity).ok());
    for (uint64_t k = 2; k <= 6000; k += 2) insert(k);
    for (uint64_t k = 2; k < 200; k += 2) erase(k);
    for (uint64_t k = 3000; k < 3300; k += 2) erase(k);
    ASSERT_GE(*arena_->root(2), 2u) << "the index has inner levels";
  }

  void insert(uint64_t k) {
    ASSERT_TRUE(tree_->insert(k, 0, bytes_of(k)));
    model_.insert(k);
  }
  void erase(uint64_t k) {
    ASSERT_TRUE(tree_->remove(k, 0));
    model_.erase(k);
  }
  // A new tree over the same bytes, reopened; whether it kept the index (took no arena space).
  bool reopen() {
    const uint64_t used = arena_->used();
    tree_ = std::make_unique<Tree>(*arena_, o_);
    EXPECT_TRUE(tree_->reopen().ok());
    return arena_->used() == used;
  }
  // Every key of the model found with its value, the scan in key order, inserts routed anew.
  void expect_whole() {
    uint64_t v = 0;
    for (const uint64_t k : model_) {
      ASSERT_TRUE(tree_->read(k, 0, reinterpret_cast<std::byte*>(&v))) << k;
      ASSERT_EQ(v, k);
    }
    for (uint64_t k = 1; k < 6100; k += 10) insert(k);
    std::vector<uint64_t> scanned;
    std::byte out[8];
    tree_->scan_with(0, 100000, out, [&](uint64_t key) { scanned.push_back(key); });
    ASSERT_EQ(scanned, std::vector<uint64_t>(model_.begin(), model_.end()));
    ASSERT_TRUE(tree_->check().ok()) << tree_->check().message();
  }
  uint64_t* word(uint64_t offset) { return arena_->at<uint64_t>(offset); }

  Options o_;
  const persist::Persister p_ = persist::Persister::volatile_memory();
  media::DramBuffer buffer_;
  std::optional<Arena<Durable>> arena_;
  std::unique_ptr<Tree> tree_;
  std::set<uint64_t> model_;
};

TEST_F(BPTreeReopen, KeepsAnIndexThatRoutesEveryKey) {
  EXPECT_TRUE(reopen());
  expect_whole();
  EXPECT_TRUE(reopen()) << "the index kept grew by the inserts' splits and still routes";
  expect_whole();
}

// Each damage a crash or a bad file can leave in the index or the fingerprints: reopen rebuilds them.
TEST_F(BPTreeReopen, RebuildsAnIndexThatDoesNot) {
  // Inner node: [count][31 separators][32 children]. Each damage finds the index the last reopen left.
  const auto root = [&] { return *arena_->root(1); };
  const auto first_kid = [&] { return root() + 8 + 8 * 31; };
  const std::vector<std::pair<const char*, std::function<void()>>> damages = {
      {"a separator that misroutes the keys below it", [&] { *word(root() + 8) = 0; }},
      {"separators out of order", [&] { *word(root() + 16) = *word(root() + 8) - 1; }},
      {"a child outside the arena", [&] { *word(first_kid()) = arena_->size() + 64; }},
      {"a child off the block grid", [&] { *word(first_kid()) += 8; }},
      {"a child count past the fanout", [&] { *word(root()) = 33; }},
      {"one level too many", [&] { *arena_->root(2) += 1; }},
      {"the root naming a leaf", [&] { *arena_->root(1) = *arena_->root(0); }},
      {"a stale fingerprint",
       [&] {
         uint64_t leaf = *arena_->root(0);
         while (static_cast<uint32_t>(*word(leaf)) == 0) leaf = (*word(leaf) >> 32) * kBlockAlign;
         const auto first_live = static_cast<uint32_t>(std::countr_zero(static_cast<uint32_t>(*word(leaf))));
         *word(leaf + 8 + first_live / 8 * 8) ^= uint64_t{0xff} << (8 * (first_live % 8));
       }},
  };
  for (const auto& [what, damage] : damages) {
    SCOPED_TRACE(what);
    damage();
    EXPECT_FALSE(reopen()) << "kept a damaged index";
    expect_whole();
  }
}

// A first-leaf link whose end wraps around 2^64 (a damaged image) names no block of the arena: the leaf
// walk reports it instead of reading the bytes before the arena as a leaf.
TEST_F(BPTreeReopen, ALeafLinkThatWrapsIsOutsideTheArena) {
  const uint64_t wraps = uint64_t{0} - 3 * kBlockAlign;
  EXPECT_FALSE(arena_->contains(wraps, 4 * kBlockAlign));
  *arena_->root(0) = wraps;
  const Status st = tree_->check();
  EXPECT_EQ(st.code(), Errc::corrupted);
  EXPECT_NE(st.message().find("outside the arena"), std::string::npos) << st.message();
}

// A first-leaf link zeroed (a damaged image): no leaf list to rebuild an index over, so reported.
TEST_F(BPTreeReopen, ATreeWithoutALeafIsCorrupted) {
  *arena_->root(0) = 0;
  EXPECT_EQ(tree_->check().code(), Errc::corrupted);
  Tree again(*arena_, o_);
  EXPECT_EQ(again.recover().code(), Errc::corrupted);
}

// An arena too small for every insert: the inserts that fail change nothing, and every key the tree took
// stays found, before and after reopening (a split must not reach the leaves without its index entry).
TEST(BPTreeFull, FailedInsertsLoseAndMisrouteNothing) {
  // Arenas a block apart: the last split fails at each step of its allocations in one or another.
  for (uint64_t room = 16 << 10; room < (48 << 10); room += kBlockAlign) {
    SCOPED_TRACE(room);
    Options o;
    o.value_bytes = 8;
    o.leaf_slots = 4;
    const persist::Persister p = persist::Persister::volatile_memory();
    media::DramBuffer buffer;
    ASSERT_TRUE(buffer.reserve(room).ok());
    Arena<Durable> arena(buffer.region().base, room, p);
    auto tree = std::make_unique<Tree>(arena, o);
    ASSERT_TRUE(tree->create(0).ok());
    std::set<uint64_t> taken;
    uint64_t failed = 0;
    for (uint64_t i = 0; i < 2000; ++i) {
      const uint64_t k = (i * 0x9E3779B97F4A7C15ull) >> 20;
      if (tree->insert(k, 0, bytes_of(k))) taken.insert(k);
      else ++failed;
    }
    ASSERT_GT(failed, 0u) << "the arena never filled";
    for (int pass = 0; pass < 2; ++pass) {
      uint64_t v = 0;
      for (const uint64_t k : taken) ASSERT_TRUE(tree->read(k, 0, reinterpret_cast<std::byte*>(&v))) << k;
      ASSERT_EQ(tree->count(), taken.size());
      ASSERT_TRUE(tree->check().ok()) << tree->check().message();
      tree = std::make_unique<Tree>(arena, o);
      ASSERT_TRUE(tree->reopen().ok());
    }
  }
}

}  // namespace
}  // namespace pmlab::ds
