// The tx mode: every structure through PMDK transactions against std::map, across a close and reopen
// (PMDK's recovery, then the structure's); crash consistency by killing a forked child mid-transaction
// (_exit at every undo-log / flush-registration point of a stream, then reopening the pool: PMDK applies the
// undo log, the structure recovers, and the contents must be exactly the completed operations); a negative
// control (logging off) showing that check finds torn operations; and the libpmem interposer that counts
// and elides PMDK's flushes and fences.
//
// A process crash on /dev/shm keeps every store: these tests check the transactions' atomicity (undo log
// and rollback), not the order of flushes under power failure, which the in-process crash simulator covers
// for the persist mode and cannot cover for a libpmemobj pool.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <new>
#include <vector>

#ifdef PMLAB_HAVE_LIBPMEMOBJ
#include <libpmem.h>
#include <libpmemobj.h>
#endif

#include "pmlab/common/hash.hpp"
#include "pmlab/ds/array/array.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/common/structure.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ds/list/list.hpp"
#include "pmlab/ds/skiplist/skiplist.hpp"
#include "pmlab/pmdk/obj_pool.hpp"
#include "pmlab/pmdk/persistence.hpp"
#include "pmlab/pmdk/tx.hpp"
#include "pmlab/persist/counters.hpp"
#include "pmlab/workload/random.hpp"
#include "../support/temp_dir.hpp"

namespace pmlab::ds {
namespace {

using pmdk::ObjArenaPool;
using testing::TempDir;

constexpr uint32_t kValue = 72;  // spans two cache lines: a torn value is visible

std::vector<std::byte> value_of(uint64_t key, uint64_t version) {
  std::vector<std::byte> v(kValue);
  for (uint32_t i = 0; i < kValue; ++i) v[i] = static_cast<std::byte>((key >> (i % 8)) + version * 31 + i);
  return v;
}

Options small_options(uint64_t capacity) {
  Options o;
  o.value_bytes = kValue;
  o.capacity = capacity;
  o.leaf_slots = 4;  // B+-tree splits early
  return o;
}

template <template <class> class S>
uint64_t arena_for(const Options& o) {
  return S<Arena<Transactional>>::bytes_needed(o) + 64 * 1024;
}

#define SKIP_WITHOUT_PMEMOBJ() \
  if (!pmdk::tx::available()) GTEST_SKIP() << "built without libpmemobj"

template <template <class> class S>
void tx_matches_a_map() {
  using Tree = S<Arena<Transactional>>;
  static_assert(Structure<Tree>);
  constexpr uint64_t kRecords = 300;
  TempDir dir;
  const Options o = small_options(kRecords);
  const persist::Persister p = persist::Persister::volatile_memory();
  auto pool = ObjArenaPool::create(dir.file("tx.pool"), arena_for<S>(o));
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  std::map<uint64_t, uint64_t> model, record_of;
  {
    Arena<Transactional> arena((*pool)->arena(), (*pool)->arena_bytes(), p, (*pool)->handle());
    Tree tree(arena, o);
    ASSERT_TRUE(tree.create(kRecords).ok());
    workload::Random rng(99);
    std::vector<std::byte> out(kValue);
    for (uint64_t i = 1; i <= 1500; ++i) {
      const uint64_t record = rng.next_below(kRecords);
      const uint64_t key = fnv1a64_word(record);
      record_of[key] = record;
      const auto v = value_of(key, i);
      const uint64_t what = rng.next_below(Removable<Tree> ? 3 : 2);
      if (what == 0) {
        ASSERT_TRUE(tree.insert(key, record, v.data()));
        model[key] = i;
      } else if (what == 1) {
        ASSERT_EQ(tree.update(key, record, v.data()), model.contains(key));
        if (model.contains(key)) model[key] = i;
      } else if constexpr (Removable<Tree>) {
        ASSERT_EQ(tree.remove(key, record), model.erase(key) == 1);
      }
      ASSERT_FALSE(pmdk::tx::in_transaction());
    }
    ASSERT_EQ(tree.count(), model.size());
    ASSERT_TRUE(tree.check().ok());
  }
  pool->reset();
  auto reopened = ObjArenaPool::open(dir.file("tx.pool"));
  ASSERT_TRUE(reopened.ok()) << reopened.status().message();
  Arena<Transactional> arena((*reopened)->arena(), (*reopened)->arena_bytes(), p, (*reopened)->handle());
  Tree tree(arena, o);
  ASSERT_TRUE(tree.recover().ok());
  ASSERT_TRUE(tree.check().ok());
  ASSERT_EQ(tree.count(), model.size());
  std::vector<std::byte> out(kValue);
  for (const auto& [key, version] : model) {
    ASSERT_TRUE(tree.read(key, record_of[key], out.data()));
    ASSERT_EQ(out, value_of(key, version));
  }
}

TEST(TxMode, ArrayMatchesAMapAcrossReopen) {
  SKIP_WITHOUT_PMEMOBJ();
  tx_matches_a_map<Array>();
}
TEST(TxMode, HashtableMatchesAMapAcrossReopen) {
  SKIP_WITHOUT_PMEMOBJ();
  tx_matches_a_map<Hashtable>();
}
TEST(TxMode, SkiplistMatchesAMapAcrossReopen) {
  SKIP_WITHOUT_PMEMOBJ();
  tx_matches_a_map<Skiplist>();
}
TEST(TxMode, BPTreeMatchesAMapAcrossReopen) {
  SKIP_WITHOUT_PMEMOBJ();
  tx_matches_a_map<BPTree>();
}
TEST(TxMode, ListMatchesAMapAcrossReopen) {
  SKIP_WITHOUT_PMEMOBJ();
  tx_matches_a_map<List>();
}

// ---------------------------------------------------------------------------------------------- crashes

struct StreamOp {
  bool insert;
  uint64_t record, key, version;
};

std::vector<StreamOp> stream_of(uint64_t ops, uint64_t seed) {
  std::vector<StreamOp> s;
  workload::Random rng(seed);
  uint64_t inserted = 0;
  for (uint64_t i = 0; i < ops; ++i) {
    StreamOp op{};
    op.insert = inserted < 3 || rng.next_below(3) != 0;
    op.record = op.insert ? inserted++ : rng.next_below(inserted);
    op.key = fnv1a64_word(op.record ^ (seed << 32));
    op.version = i + 1;
    s.push_back(op);
  }
  return s;
}

// Shared with the forked child: how far its stream got.
struct Progress {
  std::atomic<uint64_t> completed;
  std::atomic<uint64_t> in_flight;
};

std::atomic<int64_t> g_countdown{0};
void crash_at_countdown() noexcept {
  if (g_countdown.fetch_sub(1, std::memory_order_relaxed) == 1) _exit(42);
}

struct CrashReport {
  int crash_points = 0;
  int violations = 0;
  std::string first;
};

// Kills a child at the k-th transaction hook of the stream, for k = 1, 2, … until the stream completes
// without reaching k; after each, reopens and checks the contents against the completed operations.
template <template <class> class S>
CrashReport crash_at_every_hook(uint64_t ops, bool logging) {
  using Tree = S<Arena<Transactional>>;
  CrashReport report;
  TempDir dir;
  const std::string path = dir.file("crash.pool");
  const Options o = small_options(ops + 1);
  const persist::Persister p = persist::Persister::volatile_memory();
  const auto stream = stream_of(ops, 7);
  void* shared = mmap(nullptr, sizeof(Progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(shared, MAP_FAILED);
  auto* progress = new (shared) Progress{};
  for (int64_t k = 1; k < 100000; ++k) {
    std::filesystem::remove(path);
    {
      auto pool = ObjArenaPool::create(path, arena_for<S>(o));
      EXPECT_TRUE(pool.ok()) << pool.status().message();
      if (!pool.ok()) break;
      Arena<Transactional> arena((*pool)->arena(), (*pool)->arena_bytes(), p, (*pool)->handle());
      Tree tree(arena, o);
      EXPECT_TRUE(tree.create(o.capacity).ok());
    }
    progress->completed = 0;
    progress->in_flight = 0;
    const pid_t child = fork();
    if (child == 0) {
      auto pool = ObjArenaPool::open(path);
      if (!pool.ok()) _exit(3);
      Arena<Transactional> arena((*pool)->arena(), (*pool)->arena_bytes(), p, (*pool)->handle());
      Tree tree(arena, o);
      if (!tree.recover().ok()) _exit(4);
      pmdk::tx::set_logging(logging);
      g_countdown = k;
      pmdk::tx::set_fault_hook(crash_at_countdown);
      for (uint64_t i = 0; i < stream.size(); ++i) {
        const StreamOp& op = stream[i];
        const auto v = value_of(op.key, op.version);
        progress->in_flight = 1;
        const bool done =
            op.insert ? tree.insert(op.key, op.record, v.data()) : tree.update(op.key, op.record, v.data());
        progress->in_flight = 0;
        if (!done) _exit(5);
        progress->completed = i + 1;
      }
      _exit(0);
    }
    int status = 0;
    EXPECT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status));
    if (!WIFEXITED(status)) break;
    if (WEXITSTATUS(status) == 0) break;  // the stream had fewer than k hooks: every point was tried
    EXPECT_EQ(WEXITSTATUS(status), 42) << "the child failed before its crash point";
    if (WEXITSTATUS(status) != 42) break;
    ++report.crash_points;

    auto violation = [&](const std::string& what) {
      if (report.violations++ == 0)
        report.first = "crash point " + std::to_string(k) + " (after " + std::to_string(progress->completed.load()) +
                       " operations): " + what;
    };
    auto pool = ObjArenaPool::open(path);
    EXPECT_TRUE(pool.ok()) << pool.status().message();
    if (!pool.ok()) break;
    Arena<Transactional> arena((*pool)->arena(), (*pool)->arena_bytes(), p, (*pool)->handle());
    Tree tree(arena, o);
    if (Status s = tree.recover(); !s) {
      violation("recovery failed: " + s.message());
      continue;
    }
    if (Status s = tree.check(); !s) {
      violation("check failed: " + s.message());
      continue;
    }
    // The crash came before the in-flight operation's commit: only the completed ones may be there.
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> model;  // key -> (record, version)
    for (uint64_t i = 0; i < progress->completed.load(); ++i)
      model[stream[i].key] = {stream[i].record, stream[i].version};
    std::vector<std::byte> out(kValue);
    for (const auto& [key, rv] : model) {
      if (!tree.read(key, rv.first, out.data())) {
        violation("a completed operation's key is missing");
        break;
      }
      if (out != value_of(key, rv.second)) {
        violation("a key holds a value other than its last committed one (the in-flight update leaked?)");
        break;
      }
    }
    if (tree.count() != model.size())
      violation("holds " + std::to_string(tree.count()) + " records, committed " + std::to_string(model.size()));
  }
  pmdk::tx::set_fault_hook(nullptr);
  munmap(shared, sizeof(Progress));
  return report;
}

template <template <class> class S>
void survives_every_crash_point() {
  const CrashReport r = crash_at_every_hook<S>(14, true);
  EXPECT_GT(r.crash_points, 14) << "too few crash points: the hooks are not reached";
  EXPECT_EQ(r.violations, 0) << r.first;
}

TEST(TxModeCrash, ArrayIsAtomicAtEveryCrashPoint) {
  SKIP_WITHOUT_PMEMOBJ();
  survives_every_crash_point<Array>();
}
TEST(TxModeCrash, HashtableIsAtomicAtEveryCrashPoint) {
  SKIP_WITHOUT_PMEMOBJ();
  survives_every_crash_point<Hashtable>();
}
TEST(TxModeCrash, SkiplistIsAtomicAtEveryCrashPoint) {
  SKIP_WITHOUT_PMEMOBJ();
  survives_every_crash_point<Skiplist>();
}
TEST(TxModeCrash, BPTreeIsAtomicAtEveryCrashPoint) {
  SKIP_WITHOUT_PMEMOBJ();
  survives_every_crash_point<BPTree>();
}
TEST(TxModeCrash, ListIsAtomicAtEveryCrashPoint) {
  SKIP_WITHOUT_PMEMOBJ();
  survives_every_crash_point<List>();
}

// The negative control: without the undo log an interrupted operation's commit store survives, and the
// same check must say so.
TEST(TxModeCrash, WithoutLoggingTheCheckFindsTornOperations) {
  SKIP_WITHOUT_PMEMOBJ();
  const CrashReport hashtable = crash_at_every_hook<Hashtable>(10, false);
  EXPECT_GT(hashtable.violations, 0);
  const CrashReport bptree = crash_at_every_hook<BPTree>(10, false);
  EXPECT_GT(bptree.violations, 0);
}

// ------------------------------------------------------------------------------------ PMDK's persistence

#ifdef PMLAB_HAVE_LIBPMEMOBJ
TEST(Persistence, CountsAndElidesPmdkFlushesAndFences) {
  TempDir dir;
  auto pool = ObjArenaPool::create(dir.file("count.pool"), 1 << 20);
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  auto* pop = static_cast<PMEMobjpool*>((*pool)->handle());
  std::byte* a = (*pool)->arena();
  auto cost_of_persist = [&](const pmdk::Persistence& setting) {
    pmdk::set_persistence(setting);
    const persist::Counters before = persist::thread_counters();
    pmemobj_persist(pop, a, 256);
    const persist::Counters d = persist::thread_counters() - before;
    pmdk::set_persistence({});
    return d;
  };
  const persist::Counters counted = cost_of_persist({true, false, false});
  EXPECT_TRUE(pmdk::interposed());
  EXPECT_EQ(counted.flushes, 4u);  // 256 aligned bytes: four lines
  EXPECT_EQ(counted.fences, 1u);
  const persist::Counters no_flush = cost_of_persist({true, true, false});
  EXPECT_EQ(no_flush.flushes, 0u);
  EXPECT_EQ(no_flush.fences, 1u);
  const persist::Counters no_fence = cost_of_persist({true, false, true});
  EXPECT_EQ(no_fence.flushes, 4u);
  EXPECT_EQ(no_fence.fences, 0u);
  const persist::Counters off = cost_of_persist({});
  EXPECT_EQ(off.flushes + off.fences, 0u);  // not counting: libpmem's own path, untouched

  // A persisting copy drains once: libpmem's own drain after it reaches this process's pmem_drain, and must
  // not be counted beside the copy's.
  pmdk::set_persistence({true, false, false});
  const persist::Counters before_copy = persist::thread_counters();
  pmemobj_memcpy_persist(pop, a + 1024, a, 256);
  const persist::Counters copied = persist::thread_counters() - before_copy;
  pmdk::set_persistence({});
  EXPECT_EQ(copied.fences, 1u);

  // Flushes switched off (eADR, the no-flush breakdown): a copy libpmem makes with non-temporal stores
  // stays non-temporal, a small cached copy is not written back, and both still drain.
  pmdk::set_persistence({.count = true, .elide_flush = true});
  const persist::Counters before_elided = persist::thread_counters();
  pmemobj_memcpy_persist(pop, a + 4096, a, 4096);
  const persist::Counters large = persist::thread_counters() - before_elided;
  pmemobj_memcpy_persist(pop, a + 1024, a, 64);
  const persist::Counters small = persist::thread_counters() - before_elided - large;
  pmdk::set_persistence({});
  EXPECT_EQ(large.flushes, 0u);
  EXPECT_EQ(large.nt_bytes, 4096u);
  EXPECT_EQ(large.fences, 1u);
  EXPECT_EQ(small.flushes, 0u);
  EXPECT_EQ(small.nt_bytes, 0u);
  EXPECT_EQ(small.fences, 1u);
  EXPECT_EQ(std::memcmp(a + 4096, a, 4096), 0);

  // A transaction's commit goes through the same entry points.
  pmdk::set_persistence({true, false, false});
  const persist::Counters before = persist::thread_counters();
  {
    pmdk::tx::Scope scope(pop);
    pmdk::tx::snapshot(a + 512, 8);
    *reinterpret_cast<uint64_t*>(a + 512) = 7;
  }
  const persist::Counters d = persist::thread_counters() - before;
  pmdk::set_persistence({});
  EXPECT_GE(d.fences, 2u);
  EXPECT_GE(d.flushes + d.nt_bytes / 64, 2u);
  EXPECT_EQ(pmdk::tx::aborts(), 0u);
}

// What the device model (or any observer) is told of libpmem's work, through the entry points libpmemobj,
// libpmemlog and libpmemblk call.
TEST(Persistence, TheObserverSeesWhatLibpmemWritesBackAndDrains) {
  struct Recorder final : persist::Observer {
    struct Event {
      uintptr_t addr;
      size_t len;
      persist::Writeback kind;
    };
    std::vector<Event> writebacks;
    int fences = 0;
    void on_writeback(const void* addr, size_t len, persist::Writeback kind,
                      const std::source_location&) noexcept override {
      writebacks.push_back({reinterpret_cast<uintptr_t>(addr), len, kind});
    }
    void on_fence(const std::source_location&) noexcept override { ++fences; }
  };
  alignas(64) static unsigned char buf[1024];
  static const unsigned char src[300] = {1, 2, 3};
  const auto at = [](size_t off) { return reinterpret_cast<uintptr_t>(buf) + off; };
  Recorder r;
  {
    pmdk::Persistence seen;
    seen.observer = &r;
    pmdk::ScopedPersistence scope(seen);
    pmem_persist(buf + 10, 100);              // bytes 10..110: lines 0 and 1, then a drain
    pmem_memcpy_nodrain(buf + 256, src, 64);  // below libpmem's non-temporal threshold: a flushed line
    pmem_memset_persist(buf + 512, 0, 300);   // at or above it: non-temporal stores, then a drain
  }
  pmem_persist(buf, 64);  // the scope ended: no observer any more
  ASSERT_EQ(r.writebacks.size(), 3u);
  EXPECT_EQ(r.writebacks[0].addr, at(0));
  EXPECT_EQ(r.writebacks[0].len, 128u);
  EXPECT_EQ(r.writebacks[0].kind, persist::Writeback::flush);
  EXPECT_EQ(r.writebacks[1].addr, at(256));
  EXPECT_EQ(r.writebacks[1].len, 64u);
  EXPECT_EQ(r.writebacks[1].kind, persist::Writeback::flush);
  EXPECT_EQ(r.writebacks[2].addr, at(512));
  EXPECT_EQ(r.writebacks[2].len, 300u);
  EXPECT_EQ(r.writebacks[2].kind, persist::Writeback::nt_store);
  EXPECT_EQ(r.fences, 2);
  EXPECT_EQ(pmdk::persistence().observer, nullptr);
  EXPECT_EQ(buf[256], 1);
}
#endif

}  // namespace
}  // namespace pmlab::ds
