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

namespace pmlab::ptm {
namespace {

// The PMDK adapter keeps the interface the workloads are written against (the undo and redo PTMs assert
// it where they are defined).
static_assert(Ptm<pmdk::ObjPtm>);

// 64-byte aligned memory for a log and a heap, with the persisters of a durability model.
class Memory {
 public:
  Memory(uint64_t heap_bytes, int slots, uint64_t slot_bytes, Durability d = Durability::adr, bool logging = true)
      : heap_(heap_bytes / 8 + 8), log_(static_cast<uint64_t>(slots) * slot_bytes / 8 + 8) {
    const persist::Config base{persist::Domain::adr, persist::best_line_flush(platform::CpuFeatures::host()), false,
                               false};
    log_p_ = std::make_unique<persist::Persister>(persist::Persister::create(log_config(d, base)).value());
    data_p_ = std::make_unique<persist::Persister>(persist::Persister::create(data_config(d, base)).value());
    regions_.heap = align(heap_.data());
    regions_.heap_bytes = heap_bytes;
    regions_.log = align(log_.data());
    regions_.log_bytes = static_cast<uint64_t>(slots) * slot_bytes;
    regions_.log_persister = log_p_.get();
    regions_.data_persister = data_p_.get();
    options_.slots = slots;
    options_.slot_bytes = slot_bytes;
    options_.logging = logging;
  }
  const Regions& regions() const { return regions_; }
  const Options& options() const { return options_; }

 private:
  static std::byte* align(uint64_t* p) {
    return reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t{63});
  }
  std::vector<uint64_t> heap_, log_;
  std::unique_ptr<persist::Persister> log_p_, data_p_;
  Regions regions_;
  Options options_;
};

TEST(Durability, ModelsMapToPerRegionDomains) {
  const persist::Config base{persist::Domain::adr, persist::FlushInstruction::clwb, false, true};
  for (Durability d : {Durability::adr, Durability::eadr, Durability::pdram, Durability::pdram_lite}) {
    auto parsed = parse_durability(to_string(d));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
    EXPECT_TRUE(log_config(d, base).elide_fence) << "the breakdown switches must survive the model";
  }
  EXPECT_FALSE(parse_durability("nvram").ok());
  EXPECT_EQ(data_config(Durability::pdram_lite, base).domain, persist::Domain::eadr);
  EXPECT_EQ(log_config(Durability::pdram_lite, base).domain, persist::Domain::none);
  EXPECT_EQ(data_config(Durability::pdram, base).domain, persist::Domain::none);
  EXPECT_EQ(log_config(Durability::eadr, base).domain, persist::Domain::eadr);
  EXPECT_TRUE(log_on_dram(Durability::pdram_lite));
  EXPECT_FALSE(data_on_dram(Durability::pdram_lite));
  EXPECT_TRUE(data_on_dram(Durability::pdram));
}

template <class P>
class PtmTest : public ::testing::Test {};
using Ptms = ::testing::Types<UndoPtm, RedoPtm>;
TYPED_TEST_SUITE(PtmTest, Ptms);

struct Abandon {};  // thrown from a transaction body: the process "dies" before commit

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

TEST(UndoPtm, FencesPerTransactionAreLoggedWordsPlusTwoUnderAdr) {
  Memory m(1 << 16, 1, 4096);
  UndoPtm ptm(m.regions(), m.options());
  ASSERT_TRUE(ptm.format().ok());
  const persist::Counters before = persist::thread_counters();
  ptm.run(0, [&](auto& tx) {
    for (int i = 0; i < 5; ++i) tx.write(tx.root(i), 1);
    tx.write(tx.root(0), 2);  // a second write to a logged word logs nothing
  });
  const persist::Counters d = persist::thread_counters() - before;
  EXPECT_EQ(d.fences, 5u + 2u);
  EXPECT_EQ(ptm.counters().log_entries, 5u);
}

// One fence per writing transaction (the commit record's), under ADR and eADR; none where the log is on
// DRAM declared persistent. Under ADR one flush per modified data line (nine roots in two lines: two),
// issued by the next commit; the record itself written with non-temporal stores as whole lines
// (9 entries + 32 B: three lines) under ADR.
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

TYPED_TEST(PtmTest, EveryWorkloadKeepsItsInvariants) {
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

TYPED_TEST(PtmTest, DsStructuresMatchAMapAndRecoverWhole) {
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

// --- crash tests ---------------------------------------------------------------------------------

crash::SimReport simulate(const std::string& name, persist::Domain d, crash::Granularity g) {
  const crash::SubjectInfo* info = crash::SubjectRegistry::instance().find(name);
  EXPECT_NE(info, nullptr) << name;
  if (info == nullptr) return {};
  crash::SimOptions o;
  o.domain = d;
  o.granularity = g;
  o.budget = 400;
  o.subject.ops = 12;
  auto r = crash::simulate(*info, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : crash::SimReport{};
}

TEST(PtmCrash, EveryPtmSubjectSurvivesEveryDomainAndGranularity) {
  for (const char* name : {"ptm.undo", "ptm.redo", "ptm.redo-one-slot", "ptm.redo-threads"})
    for (auto d : {persist::Domain::adr, persist::Domain::eadr})
      for (auto g : {crash::Granularity::line, crash::Granularity::word}) {
        const crash::SimReport r = simulate(name, d, g);
        EXPECT_EQ(r.failures, 0u) << name << " " << persist::to_string(d) << ": "
                                  << (r.details.empty() ? "" : r.details[0].property + " at " + r.details[0].site);
        EXPECT_GT(r.crash_points, 12u) << name;
        EXPECT_GT(r.states_checked, 50u) << name;
      }
}

TEST(PtmCrash, UnloggedTwinsAreCaught) {
  for (const char* name : {"ptm.broken.undo-unlogged", "ptm.broken.redo-unlogged"}) {
    const crash::SimReport r = simulate(name, persist::Domain::adr, crash::Granularity::line);
    EXPECT_GT(r.failures, 0u) << name << " was not caught";
  }
}

}  // namespace
}  // namespace pmlab::ptm
