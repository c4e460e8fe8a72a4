// Every structure in every mode policy against std::map: inserts (new and repeated keys), updates,
// reads, scans, removes (the structures that delete), recovery, and a two-thread run that must lose no insert.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "pmlab/common/hash.hpp"
#include "pmlab/ds/array/array.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/common/chain.hpp"
#include "pmlab/ds/common/structure.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ds/list/list.hpp"
#include "pmlab/ds/skiplist/skiplist.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/workload/random.hpp"

namespace pmlab::ds {
namespace {

constexpr uint32_t kValue = 40;

std::vector<std::byte> value_of(uint64_t key, uint64_t version) {
  std::vector<std::byte> v(kValue);
  for (uint32_t i = 0; i < kValue; ++i) v[i] = static_cast<std::byte>((key >> (i % 8)) + version * 31 + i);
  return v;
}

template <template <class> class S, class M>
void matches_a_map(bool ordered_scan) {
  using Tree = S<Arena<M>>;
  static_assert(Structure<Tree>);
  constexpr uint64_t kRecords = 600;
  Options o;
  o.value_bytes = kValue;
  o.capacity = kRecords;
  o.leaf_slots = 8;
  const persist::Persister p = persist::Persister::volatile_memory();
  media::DramBuffer buffer;
  ASSERT_TRUE(buffer.reserve(Tree::bytes_needed(o) + 64 * 1024).ok());
  Arena<M> arena(buffer.region().base, buffer.region().size, p);
  auto tree = std::make_unique<Tree>(arena, o);
  ASSERT_TRUE(tree->create(kRecords).ok());

  std::map<uint64_t, uint64_t> model;  // key -> version
  std::map<uint64_t, uint64_t> record_of;
  workload::Random rng(1234);
  std::vector<std::byte> out(kValue);
  for (uint64_t i = 1; i <= 4000; ++i) {
    const uint64_t record = rng.next_below(kRecords);
    const uint64_t key = fnv1a64_word(record);
    record_of[key] = record;
    const auto v = value_of(key, i);
    switch (rng.next_below(Removable<Tree> ? 5 : 4)) {
      case 0:
        ASSERT_TRUE(tree->insert(key, record, v.data()));
        model[key] = i;
        break;
      case 1:
        ASSERT_EQ(tree->update(key, record, v.data()), model.contains(key));
        if (model.contains(key)) model[key] = i;
        break;
      case 2: {
        const bool found = tree->read(key, record, out.data());
        ASSERT_EQ(found, model.contains(key));
        if (found) { ASSERT_EQ(out, value_of(key, model[key])); }
        break;
      }
      case 3: {
        const uint32_t n = 1 + static_cast<uint32_t>(rng.next_below(10));
        const uint32_t seen = tree->scan(key, record, n, out.data());
        ASSERT_LE(seen, n);
        if (ordered_scan) {
          const auto from = model.lower_bound(key);
          ASSERT_EQ(seen, std::min<uint64_t>(n, static_cast<uint64_t>(std::distance(from, model.end()))));
        }
        break;
      }
      default:
        if constexpr (Removable<Tree>) {
          ASSERT_EQ(tree->remove(key, record), model.erase(key) == 1);
          ASSERT_FALSE(tree->read(key, record, out.data()));
        }
    }
  }
  ASSERT_EQ(tree->count(), model.size());
  ASSERT_TRUE(tree->check().ok()) << tree->check().message();
  // Reopened, as after a restart: the same contents.
  tree = std::make_unique<Tree>(arena, o);
  ASSERT_TRUE(tree->recover().ok());
  for (const auto& [key, version] : model) {
    ASSERT_TRUE(tree->read(key, record_of[key], out.data()));
    ASSERT_EQ(out, value_of(key, version));
  }
}

TEST(Structures, ArrayMatchesAMap) {
  matches_a_map<Array, Volatile>(false);
  matches_a_map<Array, Durable>(false);
}
TEST(Structures, HashtableMatchesAMap) {
  matches_a_map<Hashtable, Volatile>(false);
  matches_a_map<Hashtable, Durable>(false);
}
TEST(Structures, SkiplistMatchesAMap) {
  matches_a_map<Skiplist, Volatile>(true);
  matches_a_map<Skiplist, Durable>(true);
}
TEST(Structures, BPTreeMatchesAMap) {
  matches_a_map<BPTree, Volatile>(true);
  matches_a_map<BPTree, Durable>(true);
}
TEST(Structures, ListMatchesAMap) {
  matches_a_map<List, Volatile>(false);
  matches_a_map<List, Durable>(false);
}

TEST(Structures, BPTreeScanIsInKeyOrder) {
  Options o;
  o.value_bytes = 8;
  o.capacity = 3000;
  o.leaf_slots = 6;
  const persist::Persister p = persist::Persister::volatile_memory();
  media::DramBuffer buffer;
  ASSERT_TRUE(buffer.reserve(BPTree<Arena<Volatile>>::bytes_needed(o)).ok());
  Arena<Volatile> arena(buffer.region().base, buffer.region().size, p);
  BPTree<Arena<Volatile>> tree(arena, o);
  ASSERT_TRUE(tree.create(o.capacity).ok());
  for (uint64_t r = 0; r < o.capacity; ++r) {
    const uint64_t key = fnv1a64_word(r) >> 8;
    const uint64_t value = key;
    ASSERT_TRUE(tree.insert(key, r, reinterpret_cast<const std::byte*>(&value)));
  }
  // Scan writes each value over the last; read them one by one through a 1-record scan from each key.
  std::vector<uint64_t> keys;
  for (uint64_t r = 0; r < o.capacity; ++r) keys.push_back(fnv1a64_word(r) >> 8);
  std::sort(keys.begin(), keys.end());
  for (size_t i = 0; i + 1 < keys.size(); i += 97) {
    uint64_t got = 0;
    ASSERT_EQ(tree.scan(keys[i] + 1, 0, 1, reinterpret_cast<std::byte*>(&got)), 1u);
    EXPECT_EQ(got, keys[i + 1]);
  }
  ASSERT_TRUE(tree.check().ok());
}

// Removes that empty whole leaves in the middle and at the start of the list: after recovery rebuilds the
// index over them, every key left is found, scans report keys in order, and the emptied ranges take
// inserts again (an emptied leaf's separator routes its range to it, and no other leaf's range).
TEST(Structures, BPTreeRecoversOverEmptiedLeaves) {
  Options o;
  o.value_bytes = 8;
  o.capacity = 2000;
  o.leaf_slots = 4;
  const persist::Persister p = persist::Persister::volatile_memory();
  media::DramBuffer buffer;
  ASSERT_TRUE(buffer.reserve(BPTree<Arena<Durable>>::bytes_needed(o) + 64 * 1024).ok());
  Arena<Durable> arena(buffer.region().base, buffer.region().size, p);
  auto tree = std::make_unique<BPTree<Arena<Durable>>>(arena, o);
  ASSERT_TRUE(tree->create(o.capacity).ok());
  std::set<uint64_t> model;
  const auto value_bytes = [](const uint64_t& v) { return reinterpret_cast<const std::byte*>(&v); };
  for (uint64_t k = 10; k < 1010; k += 2) {
    ASSERT_TRUE(tree->insert(k, 0, value_bytes(k)));
    model.insert(k);
  }
  // Two runs of keys removed, each wider than a leaf: the first from the smallest key on.
  for (uint64_t k = 10; k < 100; k += 2) {
    ASSERT_TRUE(tree->remove(k, 0));
    model.erase(k);
  }
  for (uint64_t k = 400; k < 520; k += 2) {
    ASSERT_TRUE(tree->remove(k, 0));
    model.erase(k);
  }
  ASSERT_FALSE(tree->remove(400, 0));
  ASSERT_EQ(tree->count(), model.size());
  tree = std::make_unique<BPTree<Arena<Durable>>>(arena, o);
  ASSERT_TRUE(tree->recover().ok());
  uint64_t v = 0;
  auto* out = reinterpret_cast<std::byte*>(&v);
  for (const uint64_t k : model) ASSERT_TRUE(tree->read(k, 0, out)) << k;
  // Odd keys into the emptied ranges and around them, then everything found and in order.
  for (uint64_t k = 1; k < 1020; k += 6) {
    ASSERT_TRUE(tree->insert(k, 0, value_bytes(k)));
    model.insert(k);
  }
  for (const uint64_t k : model) {
    ASSERT_TRUE(tree->read(k, 0, out)) << k;
    ASSERT_EQ(v, k);
  }
  std::vector<uint64_t> scanned;
  ASSERT_EQ(tree->scan_with(0, 5000, out, [&](uint64_t key) { scanned.push_back(key); }), model.size());
  ASSERT_EQ(scanned, std::vector<uint64_t>(model.begin(), model.end()));
  ASSERT_TRUE(tree->check().ok()) << tree->check().message();
}

// A structure threads share (Options::concurrent), created empty on a volatile DRAM arena sized for
// `capacity` records of `value_bytes`.
template <template <class> class S>
class SharedOnDram {
 public:
  using Tree = S<Arena<Volatile>>;
  SharedOnDram(uint32_t value_bytes, uint64_t capacity) {
    options_.value_bytes = value_bytes;
    options_.capacity = capacity;
    options_.concurrent = true;
  }
  // False when the arena or the structure could not be made.
  bool create() {
    if (!buffer_.reserve(Tree::bytes_needed(options_)).ok()) return false;
    arena_.emplace(buffer_.region().base, buffer_.region().size, persister_);
    tree_.emplace(*arena_, options_);
    return tree_->create(options_.capacity).ok();
  }
  Tree& tree() { return *tree_; }

 private:
  Options options_;
  persist::Persister persister_ = persist::Persister::volatile_memory();
  media::DramBuffer buffer_;
  std::optional<Arena<Volatile>> arena_;
  std::optional<Tree> tree_;
};

// A formatted 64 KiB volatile arena, for the chain's and the cell's own tests.
struct SmallArena {
  SmallArena() {
    if (buffer.reserve(64 * 1024).ok()) arena.emplace(buffer.region().base, buffer.region().size, persister);
    if (arena && !arena->format(0x5eed).ok()) arena.reset();
  }
  bool ok() const { return arena.has_value(); }
  persist::Persister persister = persist::Persister::volatile_memory();
  media::DramBuffer buffer;
  std::optional<Arena<Volatile>> arena;
};

// A walk without a lock may stand on a node that writers unlink meanwhile (and on the one after it): it
// goes on through the links the unlinked nodes kept, to every node still linked behind them, and ends.
TEST(Structures, SharedChainWalkGoesOnFromUnlinkedNodes) {
  const ValueCell cell(kValue);
  SmallArena small;
  ASSERT_TRUE(small.ok());
  Arena<Volatile>& arena = *small.arena;
  uint64_t* head = arena.root(0);
  const auto v = value_of(1, 1);
  for (uint64_t key = 1; key <= 5; ++key) ASSERT_TRUE(push_on_chain(arena, cell, head, key, v.data()));  // 5 4 3 2 1
  for (uint64_t key = 1; key <= 5; ++key)
    EXPECT_EQ(find_in_chain_shared(arena, head, key), find_in_chain(arena, head, key));
  EXPECT_EQ(find_in_chain_shared(arena, head, 9), nullptr);

  // A reader standing on node 3 holds its link word; 3, then 2, are unlinked under it.
  const auto* at3 = reinterpret_cast<const uint64_t*>(find_in_chain(arena, head, 3));
  const std::byte* node2 = find_in_chain(arena, head, 2);
  ASSERT_TRUE(unlink_from_chain(arena, cell, head, 3));
  ASSERT_TRUE(unlink_from_chain(arena, cell, head, 2));
  EXPECT_EQ(find_in_chain_shared(arena, head, 2), nullptr);
  EXPECT_EQ(find_in_chain_shared(arena, head, 3), nullptr);
  EXPECT_EQ(find_in_chain_shared(arena, at3, 2), node2);  // linked when the reader reached node 3
  EXPECT_EQ(find_in_chain_shared(arena, at3, 1), find_in_chain(arena, head, 1));
  EXPECT_EQ(find_in_chain_shared(arena, at3, 9), nullptr);
}

// The cell's selector: the buffer in use in its low bits, the update count above them, so no word repeats.
// Cells written before the count (selector 1 or 2) read and update as before.
TEST(Structures, ValueCellCountsItsUpdates) {
  const ValueCell cell(kValue);
  SmallArena small;
  ASSERT_TRUE(small.ok());
  Arena<Volatile>& arena = *small.arena;
  const uint64_t off = arena.alloc(cell.bytes());
  ASSERT_NE(off, 0u);
  std::byte* c = arena.bytes(off);
  auto* word = reinterpret_cast<uint64_t*>(c);
  std::vector<std::byte> out(kValue);
  EXPECT_FALSE(cell.present(arena, c));
  EXPECT_FALSE(cell.read_unlocked(arena, c, out.data()));
  std::vector<uint64_t> seen;
  for (uint64_t version = 1; version <= 6; ++version) {
    cell.store(arena, c, value_of(7, version).data());
    seen.push_back(*word);
    ASSERT_TRUE(cell.read(arena, c, out.data()));
    EXPECT_EQ(out, value_of(7, version));
    ASSERT_TRUE(cell.read_unlocked(arena, c, out.data()));
    EXPECT_EQ(out, value_of(7, version));
    EXPECT_TRUE(cell.valid(arena, c));
  }
  EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), seen.size()) << "a selector word repeated";

  cell.init(arena, c, value_of(8, 1).data());  // a cell as written before the count: selector 1
  EXPECT_EQ(*word, 1u);
  cell.store(arena, c, value_of(8, 2).data());
  ASSERT_TRUE(cell.read(arena, c, out.data()));
  EXPECT_EQ(out, value_of(8, 2));
  *word = 2;  // buffer 1, count 0: what the old store() left
  ASSERT_TRUE(cell.read(arena, c, out.data()));
  EXPECT_EQ(out, value_of(8, 2));

  for (const uint64_t bad : {uint64_t{3}, uint64_t{4 + 3}, uint64_t{4}}) {  // buffer "3"; empty with a count
    *word = bad;
    EXPECT_FALSE(cell.valid(arena, c)) << bad;
    EXPECT_FALSE(cell.read(arena, c, out.data())) << bad;
  }
}

template <template <class> class S>
void two_threads_lose_nothing() {
  constexpr uint64_t kRecords = 4000;
  SharedOnDram<S> shared(kValue, kRecords);
  ASSERT_TRUE(shared.create());
  auto& tree = shared.tree();
  auto worker = [&](uint64_t first) {
    std::vector<std::byte> out(kValue);
    for (uint64_t r = first; r < kRecords; r += 2) {
      const uint64_t key = fnv1a64_word(r);
      const auto v = value_of(key, 1);
      EXPECT_TRUE(tree.insert(key, r, v.data()));
      EXPECT_TRUE(tree.read(key, r, out.data()));
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  EXPECT_EQ(tree.count(), kRecords);
  EXPECT_TRUE(tree.check().ok());
}

// Readers beside writers on shared hot keys: an updater rewrites a few keys (one B+-tree leaf, one
// chain) with versioned values of 512 bytes, so a read overlapping a write of the same slot or buffer
// would copy two versions, and inserts new keys, which split B+-tree leaves; a reader looks the hot keys
// up meanwhile. Every value read is one a writer wrote whole, and the structure ends with every key at
// its last version.
std::vector<std::byte> wide_value(uint64_t key, uint64_t version, uint32_t bytes) {
  std::vector<std::byte> v(bytes);
  for (uint32_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>(key * 7 + version * 31 + i);
  return v;
}
// Whether `v` holds one version of a wide_value: its bytes step by 1 from byte 0 (two versions' v apart
// differ by 31 v).
bool one_version(const std::vector<std::byte>& v) {
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] != static_cast<std::byte>(static_cast<uint32_t>(v[0]) + i)) return false;
  return true;
}

template <template <class> class S>
void readers_beside_writers_see_whole_values() {
  constexpr uint64_t kHot = 6, kInserted = 2000, kVersions = 20000;
  constexpr uint32_t kWide = 512;
  SharedOnDram<S> shared(kWide, kHot + kInserted);
  ASSERT_TRUE(shared.create());
  auto& tree = shared.tree();
  for (uint64_t k = 0; k < kHot; ++k) ASSERT_TRUE(tree.insert(k, k, wide_value(k, 0, kWide).data()));
  std::atomic<bool> writing{true};
  std::atomic<uint64_t> torn{0}, reads{0};
  std::thread writer([&] {
    uint64_t inserted = 0;
    for (uint64_t v = 1; v <= kVersions; ++v) {
      for (uint64_t k = 0; k < kHot; ++k) EXPECT_TRUE(tree.update(k, k, wide_value(k, v, kWide).data()));
      for (; inserted < v * kInserted / kVersions; ++inserted) {
        const uint64_t key = 1000 + fnv1a64_word(inserted) % (uint64_t{1} << 40);
        EXPECT_TRUE(tree.insert(key, kHot + inserted, wide_value(key, 0, kWide).data()));
      }
    }
    writing.store(false);
  });
  std::thread reader([&] {
    std::vector<std::byte> out(kWide);
    while (writing.load() || reads.load() < 1000) {
      for (uint64_t k = 0; k < kHot; ++k) {
        reads.fetch_add(1, std::memory_order_relaxed);
        if (!tree.read(k, k, out.data())) {
          torn.fetch_add(1);
          continue;
        }
        if (!one_version(out)) torn.fetch_add(1);
      }
    }
  });
  writer.join();
  reader.join();
  EXPECT_EQ(torn.load(), 0u) << "of " << reads.load() << " reads";
  EXPECT_EQ(tree.count(), kHot + kInserted);
  EXPECT_TRUE(tree.check().ok());
  std::vector<std::byte> out(kWide);
  for (uint64_t k = 0; k < kHot; ++k) {
    ASSERT_TRUE(tree.read(k, k, out.data()));
    EXPECT_EQ(out, wide_value(k, kVersions, kWide));
  }
}

// A hashtable reader holds no lock, so it may stand on a node a writer unlinks, or walk on from one. A
// writer removes and re-inserts some keys (a new node, a new version, each time) and updates others, in a
// table of few buckets so that chains mix both; a reader meanwhile finds every key never removed, and
// every value it reads is whole.
TEST(Structures, ConcurrentHashtableReadersBesideRemovesSeeWholeValues) {
  constexpr uint64_t kKept = 8, kChurned = 16, kRounds = 1500, kBuckets = 16;
  constexpr uint32_t kWide = 512;
  Options o;
  o.value_bytes = kWide;
  o.capacity = kKept + kChurned * (kRounds + 1);  // the arena keeps every unlinked node
  o.concurrent = true;
  const persist::Persister p = persist::Persister::volatile_memory();
  media::DramBuffer buffer;
  ASSERT_TRUE(buffer.reserve(Hashtable<Arena<Volatile>>::bytes_needed(o)).ok());
  Arena<Volatile> arena(buffer.region().base, buffer.region().size, p);
  Hashtable<Arena<Volatile>> table(arena, o);
  ASSERT_TRUE(table.create(kBuckets).ok());
  for (uint64_t k = 0; k < kKept + kChurned; ++k) ASSERT_TRUE(table.insert(k, k, wide_value(k, 0, kWide).data()));

  std::atomic<bool> writing{true};
  std::atomic<uint64_t> torn{0}, lost{0}, reads{0};
  std::thread writer([&] {
    for (uint64_t v = 1; v <= kRounds; ++v) {
      for (uint64_t k = kKept; k < kKept + kChurned; ++k) {
        EXPECT_TRUE(table.remove(k, k));
        EXPECT_TRUE(table.insert(k, k, wide_value(k, v, kWide).data()));
      }
      for (uint64_t k = 0; k < kKept; ++k) EXPECT_TRUE(table.update(k, k, wide_value(k, v, kWide).data()));
    }
    writing.store(false);
  });
  std::thread reader([&] {
    std::vector<std::byte> out(kWide);
    while (writing.load() || reads.load() < 1000) {
      for (uint64_t k = 0; k < kKept + kChurned; ++k) {
        reads.fetch_add(1, std::memory_order_relaxed);
        if (!table.read(k, k, out.data())) {
          if (k < kKept) lost.fetch_add(1);
          continue;
        }
        if (!one_version(out)) torn.fetch_add(1);
      }
    }
  });
  writer.join();
  reader.join();
  EXPECT_EQ(torn.load(), 0u) << "of " << reads.load() << " reads";
  EXPECT_EQ(lost.load(), 0u) << "of " << reads.load() << " reads";
  EXPECT_EQ(table.count(), kKept + kChurned);
  EXPECT_TRUE(table.check().ok());
  std::vector<std::byte> out(kWide);
  for (uint64_t k = 0; k < kKept + kChurned; ++k) {
    ASSERT_TRUE(table.read(k, k, out.data()));
    EXPECT_EQ(out, wide_value(k, kRounds, kWide));
  }
}

// Updates beside the inserts that split their leaves: one thread rewrites a few keys with versioned values
// until the other has inserted thousands of keys right next to them, so the B+-tree keeps splitting the
// very leaves the updates commit into (an update holds only its leaf's stripe; a split holds the tree and
// that stripe). No update may be lost to a split's copy of the leaf, and no insert to an update's commit.
template <template <class> class S>
void updates_beside_splits_lose_nothing() {
  constexpr uint64_t kUpdated = 8, kInserted = 20000, kApart = uint64_t{1} << 32;
  SharedOnDram<S> shared(kValue, kUpdated + kInserted);
  ASSERT_TRUE(shared.create());
  auto& tree = shared.tree();
  for (uint64_t i = 0; i < kUpdated; ++i) ASSERT_TRUE(tree.insert(i * kApart, i, value_of(i, 0).data()));
  std::atomic<bool> inserting{true};
  uint64_t last = 0;
  std::thread updater([&] {
    for (uint64_t v = 1; inserting.load(std::memory_order_relaxed) || v < 100; ++v) {
      for (uint64_t i = 0; i < kUpdated; ++i) EXPECT_TRUE(tree.update(i * kApart, i, value_of(i, v).data()));
      last = v;
    }
  });
  std::thread inserter([&] {
    for (uint64_t j = 0; j < kInserted; ++j) {  // beside the updated keys, in turn, on both sides
      const uint64_t near = (j % kUpdated) * kApart, step = j / kUpdated + 1;
      const uint64_t key = j % 2 == 0 ? near + step : near - step;
      EXPECT_TRUE(tree.insert(key, kUpdated + j, value_of(key, 0).data()));
    }
    inserting.store(false);
  });
  updater.join();
  inserter.join();
  EXPECT_EQ(tree.count(), kUpdated + kInserted);
  EXPECT_TRUE(tree.check().ok());
  std::vector<std::byte> out(kValue);
  for (uint64_t i = 0; i < kUpdated; ++i) {
    ASSERT_TRUE(tree.read(i * kApart, i, out.data())) << "key " << i * kApart;
    EXPECT_EQ(out, value_of(i, last)) << "key " << i * kApart;
  }
}

TEST(Structures, ConcurrentUpdatesBesideSplitsLoseNothing) {
  updates_beside_splits_lose_nothing<Hashtable>();
  updates_beside_splits_lose_nothing<Skiplist>();
  updates_beside_splits_lose_nothing<BPTree>();
}

// B+-tree removes beside the inserts that split their leaves, and a reader: one thread removes and
// re-inserts a few keys over and over (a remove holds only its leaf's stripe, as an update), another
// inserts thousands of keys right next to them, a third reads keys that are never removed. No insert is
// lost to a remove's commit or a remove to a split's copy, and the never-removed keys are always found.
TEST(Structures, ConcurrentBPTreeRemovesBesideSplitsLoseNothing) {
  constexpr uint64_t kChurned = 8, kInserted = 12000, kApart = uint64_t{1} << 32;
  SharedOnDram<BPTree> shared(kValue, kChurned + kInserted);
  ASSERT_TRUE(shared.create());
  auto& tree = shared.tree();
  constexpr uint64_t kRead = 64;  // the inserter's first keys, in before the threads start
  const auto inserted_key = [&](uint64_t j) {
    const uint64_t near = (j % kChurned) * kApart, step = j / kChurned + 1;
    return j % 2 == 0 ? near + step : near - step;
  };
  for (uint64_t i = 0; i < kChurned; ++i) ASSERT_TRUE(tree.insert(i * kApart, i, value_of(i, 0).data()));
  for (uint64_t j = 0; j < kRead; ++j) ASSERT_TRUE(tree.insert(inserted_key(j), kChurned + j, value_of(j, 0).data()));
  std::atomic<bool> inserting{true};
  std::atomic<uint64_t> missing{0};
  std::thread churner([&] {
    for (uint64_t round = 0; inserting.load(std::memory_order_relaxed) || round < 50; ++round)
      for (uint64_t i = 0; i < kChurned; ++i) {
        EXPECT_TRUE(tree.remove(i * kApart, i));
        EXPECT_FALSE(tree.remove(i * kApart, i));
        EXPECT_TRUE(tree.insert(i * kApart, i, value_of(i, round).data()));
      }
  });
  std::thread inserter([&] {
    for (uint64_t j = kRead; j < kInserted; ++j) {
      const uint64_t key = inserted_key(j);
      EXPECT_TRUE(tree.insert(key, kChurned + j, value_of(key, 0).data()));
    }
    inserting.store(false);
  });
  std::thread reader([&] {
    std::vector<std::byte> out(kValue);
    while (inserting.load(std::memory_order_relaxed))
      for (uint64_t j = 0; j < kRead; ++j)
        if (!tree.read(inserted_key(j), 0, out.data())) missing.fetch_add(1);
  });
  churner.join();
  inserter.join();
  reader.join();
  EXPECT_EQ(missing.load(), 0u) << "reads missed keys that were never removed";
  EXPECT_EQ(tree.count(), kChurned + kInserted);
  EXPECT_TRUE(tree.check().ok()) << tree.check().message();
}

TEST(Structures, ConcurrentReadersBesideWritersSeeWholeValues) {
  readers_beside_writers_see_whole_values<Array>();
  readers_beside_writers_see_whole_values<Hashtable>();
  readers_beside_writers_see_whole_values<Skiplist>();
  readers_beside_writers_see_whole_values<BPTree>();
}

TEST(Structures, ConcurrentInsertsLoseNothing) {
  two_threads_lose_nothing<Array>();
  two_threads_lose_nothing<Hashtable>();
  two_threads_lose_nothing<Skiplist>();
  two_threads_lose_nothing<BPTree>();
}

}  // namespace
}  // namespace pmlab::ds
