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
#include "../../support/temp_dir.hpp"
#include "../memory.hpp"

namespace pmlab::ptm {
namespace {

// The PMDK adapter keeps the interface the workloads are written against (the undo and redo PTMs assert
// it where they are defined).
static_assert(Ptm<pmdk::ObjPtm>);

template <class P>
class PtmWorkloads : public ::testing::Test {};
using Ptms = ::testing::Types<UndoPtm, RedoPtm>;
TYPED_TEST_SUITE(PtmWorkloads, Ptms);

// --- workloads on every PTM ------------------------------------------------------------------------

template <template <class> class W, class P>
void run_workload(P& ptm, const workloads::Config& c, int ops) {
  W<P> w;
  ASSERT_TRUE(w.load(ptm, c).ok());
  workloads::Rng rng(3);
  for (int i = 0; i < ops; ++i) w.op(ptm, 0, rng);
  Status st = w.check(ptm);
  EXPECT_TRUE(st.ok()) << st.message();
}

TYPED_TEST(PtmWorkloads, EveryWorkloadKeepsItsInvariants) {
  workloads::Config c;
  c.records = 2000;
  c.swaps = 8;
  Memory m(8 << 20, 1, 1 << 20);
  {
    TypeParam p(m.regions(), m.options());
    ASSERT_TRUE(p.format().ok());
    run_workload<workloads::Sps>(p, c, 500);
  }
  {
    TypeParam p(m.regions(), m.options());
    ASSERT_TRUE(p.format().ok());
    run_workload<workloads::Queue>(p, c, 500);
    auto st = p.heap().stats();
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->allocated_blocks, c.records) << "queue nodes leaked or lost";
  }
  {
    TypeParam p(m.regions(), m.options());
    ASSERT_TRUE(p.format().ok());
    run_workload<workloads::HashMap>(p, c, 3000);
  }
  {
    TypeParam p(m.regions(), m.options());
    ASSERT_TRUE(p.format().ok());
    run_workload<workloads::BPTree>(p, c, 3000);
  }
  {
    TypeParam p(m.regions(), m.options());
    ASSERT_TRUE(p.format().ok());
    run_workload<workloads::Bank>(p, c, 3000);
  }
}

// A check that passes whatever it is given proves nothing: damage made behind each structure workload's
// back, through a second binding of its structure, must fail its check.
template <template <class> class W, template <class> class S, class P, class Damage>
std::string check_after(P& ptm, const workloads::Config& c, Damage&& damage) {
  W<P> w;
  EXPECT_TRUE(w.load(ptm, c).ok());
  workloads::PtmStructure<P, S> behind(ptm, W<P>::kRoot, workloads::word_values(2 * c.records));
  Status recovered = behind.recover(ptm);
  EXPECT_TRUE(recovered.ok()) << recovered.message();
  behind.run(ptm, 0, damage);
  const Status st = w.check(ptm);
  return st.ok() ? "passed" : st.message();
}

TYPED_TEST(PtmWorkloads, StructureWorkloadChecksFailOnDamage) {
  workloads::Config c;
  c.records = 500;
  Memory m(8 << 20, 1, 1 << 20);
  {
    TypeParam p(m.regions(), m.options());
    ASSERT_TRUE(p.format().ok());
    const std::string why = check_after<workloads::BPTree, ds::BPTree>(p, c, [](auto& t) { (void)t.remove(0, 0); });
    EXPECT_EQ(why, "bptree: loaded key 0 is missing or holds a foreign value");
  }
  {
    TypeParam p(m.regions(), m.options());
    ASSERT_TRUE(p.format().ok());
    // records + 1 keys outside the key space [0, 2 * records): one more than it holds in all.
    const std::string why = check_after<workloads::HashMap, ds::Hashtable>(p, c, [&](auto& h) {
      for (uint64_t k = 2 * c.records; k < 3 * c.records + 1; ++k) {
        uint64_t v = k;
        ASSERT_TRUE(h.insert(k, 0, workloads::word_bytes(v)));
      }
    });
    EXPECT_EQ(why, "hashmap: 1001 keys from a key space of 1000");
  }
}

TEST(PmdkObjPtm, EveryWorkloadKeepsItsInvariants) {
  if (!pmdk::ObjPtm::available()) GTEST_SKIP() << "built without libpmemobj";
  setenv("PMEM_IS_PMEM_FORCE", "1", 0);
  testing::TempDir dir;
  workloads::Config c;
  c.records = 2000;
  auto p = pmdk::ObjPtm::create(dir.file("pmdk.pool"), 16 << 20);
  ASSERT_TRUE(p.ok()) << p.status().message();
  run_workload<workloads::Sps>(**p, c, 200);
  run_workload<workloads::HashMap>(**p, c, 2000);
  run_workload<workloads::BPTree>(**p, c, 2000);
}

// --- the ds structures on every PTM ----------------------------------------------------------------

constexpr uint32_t kStructValue = 12;  // not whole words: TxArena's byte copies keep a last word's other bytes
constexpr uint64_t kStructKeys = 400;
using StructValue = std::array<std::byte, kStructValue>;

StructValue struct_value(uint64_t key, uint64_t version) {
  StructValue v;
  for (uint32_t i = 0; i < kStructValue; ++i) v[i] = static_cast<std::byte>((key >> (i % 8)) + version * 31 + i);
  return v;
}

ds::Options struct_options() {
  ds::Options o;
  o.value_bytes = kStructValue;
  o.capacity = kStructKeys;
  o.leaf_slots = 4;  // B+-tree leaf and inner splits within a few hundred keys
  return o;
}

// The ds hashtable's readers walk without a lock when it is shared, which memory that reuses freed blocks
// (a PTM's heap) cannot allow: create(), recover() and set_concurrent() refuse, before touching the memory.
TEST(PtmStructures, SharedHashtableNeedsBlocksNeverReused) {
  using Arena = workloads::PtmStructure<RedoPtm, ds::Hashtable>::Arena;
  Arena arena(nullptr, 0, 0);
  ds::Options o = struct_options();
  o.concurrent = true;
  ds::Hashtable<Arena> table(arena, o);
  const Status created = table.create(16);
  EXPECT_EQ(created.code(), Errc::invalid_argument) << created.message();
  EXPECT_EQ(table.recover().code(), Errc::invalid_argument);
  o.concurrent = false;
  ds::Hashtable<Arena> alone(arena, o);
  EXPECT_EQ(alone.set_concurrent(true).code(), Errc::invalid_argument);
  EXPECT_TRUE(alone.set_concurrent(false).ok());
}

// Random inserts, updates, reads, scans and (the hashtable) removes against std::map, one to eight per
// transaction, so later operations read words earlier ones wrote (the redo PTM's write set); then check().
template <class P, template <class> class S>
void structure_matches_a_map(P& ptm, workloads::PtmStructure<P, S>& on, std::map<uint64_t, uint64_t>& model,
                             uint64_t seed, int transactions) {
  using Structure = typename workloads::PtmStructure<P, S>::Structure;
  constexpr bool kOrdered = std::is_same_v<Structure, ds::BPTree<typename workloads::PtmStructure<P, S>::Arena>>;
  workloads::Rng rng(seed);
  for (int t = 0; t < transactions; ++t) {
    const uint64_t ops = 1 + rng.below(8);
    on.run(ptm, 0, [&](Structure& s) {
      for (uint64_t i = 0; i < ops; ++i) {
        const uint64_t key = 1 + rng.below(kStructKeys) * 7919;
        const uint64_t version = static_cast<uint64_t>(t) * 8 + i + 1;
        const StructValue v = struct_value(key, version);
        StructValue out{};
        switch (rng.below(ds::Removable<Structure> ? 5 : 4)) {
          case 0:
            EXPECT_TRUE(s.insert(key, 0, v.data()));
            model[key] = version;
            break;
          case 1:
            EXPECT_EQ(s.update(key, 0, v.data()), model.contains(key));
            if (model.contains(key)) model[key] = version;
            break;
          case 2:
            EXPECT_EQ(s.read(key, 0, out.data()), model.contains(key));
            if (model.contains(key)) { EXPECT_EQ(out, struct_value(key, model[key])); }
            break;
          case 3: {
            const uint32_t n = 1 + static_cast<uint32_t>(rng.below(6));
            const uint32_t seen = s.scan(key, 0, n, out.data());
            EXPECT_LE(seen, n);
            if (kOrdered) {
              EXPECT_EQ(seen, std::min<uint64_t>(
                                  n, static_cast<uint64_t>(std::distance(model.lower_bound(key), model.end()))));
            }
            break;
          }
          default:
            if constexpr (ds::Removable<Structure>) { EXPECT_EQ(s.remove(key, 0), model.erase(key) == 1); }
        }
      }
    });
  }
}

template <class P, template <class> class S>
void holds_the_model(P& ptm, workloads::PtmStructure<P, S>& on, const std::map<uint64_t, uint64_t>& model) {
  on.run(ptm, 0, [&](typename workloads::PtmStructure<P, S>::Structure& s) {
    const Status st = s.check();
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(s.count(), model.size());
    StructValue out{};
    for (const auto& [key, version] : model) {
      EXPECT_TRUE(s.read(key, 0, out.data()));
      EXPECT_EQ(out, struct_value(key, version));
    }
  });
}

// The structure matches a map through many transactions; a transaction of many operations (splits and
// removes included) that dies before its commit is wholly absent after the PTM's recovery; and the
// recovered structure, reopened over the heap, holds exactly the committed contents and runs on.
template <template <class> class S, class P>
void shared_structure_on(int root) {
  Memory m(8 << 20, 1, 1 << 20);
  std::map<uint64_t, uint64_t> model;
  {
    P ptm(m.regions(), m.options());
    ASSERT_TRUE(ptm.format().ok());
    workloads::PtmStructure<P, S> on(ptm, root, struct_options());
    ASSERT_TRUE(on.create(ptm, kStructKeys).ok());
    structure_matches_a_map(ptm, on, model, 17, 300);
    holds_the_model(ptm, on, model);
    EXPECT_THROW(on.run(ptm, 0,
                        [&](auto& s) {
                          for (uint64_t k = 0; k < kStructKeys; k += 3) {
                            const StructValue v = struct_value(k * 7919 + 1, 1u << 20);
                            s.insert(k * 7919 + 1, 0, v.data());
                            if constexpr (ds::Removable<std::decay_t<decltype(s)>>) s.remove(k * 7919 + 7920, 0);
                          }
                          throw Abandon{};
                        }),
                 Abandon);
  }
  P again(m.regions(), m.options());
  ASSERT_TRUE(again.recover().ok());
  workloads::PtmStructure<P, S> on(again, root, struct_options());
  const Status st = on.recover(again);
  ASSERT_TRUE(st.ok()) << st.message();
  holds_the_model(again, on, model);
  structure_matches_a_map(again, on, model, 18, 100);
  holds_the_model(again, on, model);
}

TYPED_TEST(PtmWorkloads, DsStructuresMatchAMapAndRecoverWhole) {
  shared_structure_on<ds::BPTree, TypeParam>(9);
  shared_structure_on<ds::Hashtable, TypeParam>(6);
}

TEST(PmdkObjPtm, DsStructuresMatchAMap) {
  if (!pmdk::ObjPtm::available()) GTEST_SKIP() << "built without libpmemobj";
  setenv("PMEM_IS_PMEM_FORCE", "1", 0);
  testing::TempDir dir;
  auto p = pmdk::ObjPtm::create(dir.file("pmdk.pool"), 16 << 20);
  ASSERT_TRUE(p.ok()) << p.status().message();
  std::map<uint64_t, uint64_t> tree_model, map_model;
  workloads::PtmStructure<pmdk::ObjPtm, ds::BPTree> tree(**p, 9, struct_options());
  workloads::PtmStructure<pmdk::ObjPtm, ds::Hashtable> map(**p, 6, struct_options());
  ASSERT_TRUE(tree.create(**p, kStructKeys).ok());
  ASSERT_TRUE(map.create(**p, kStructKeys).ok());
  structure_matches_a_map(**p, tree, tree_model, 17, 300);
  structure_matches_a_map(**p, map, map_model, 17, 300);
  holds_the_model(**p, tree, tree_model);
  holds_the_model(**p, map, map_model);
}

}  // namespace
}  // namespace pmlab::ptm
