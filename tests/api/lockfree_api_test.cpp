// pmlab::Set and pmlab::Ring as a user sees them: pool files, operations against std::set and a FIFO,
// recovery on open, threads, and the errors (designs the pool's domain cannot carry, full sets, bad
// keys and indexes, pools opened twice or as the other kind).
#include <pmlab/lockfree.hpp>
#include <pmlab/pmlab.h>

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "../support/api_error.hpp"
#include "../support/temp_dir.hpp"

namespace {

using pmlab::testing::code_of;
using pmlab::testing::TempDir;

class SetApi : public ::testing::TestWithParam<pmlab::SetDesign> {
 protected:
  TempDir dir_;
};

std::string set_name(const ::testing::TestParamInfo<pmlab::SetDesign>& info) {
  switch (info.param) {
    case pmlab::SetDesign::linkfree: return "Linkfree";
    case pmlab::SetDesign::soft: return "Soft";
    case pmlab::SetDesign::tlog: return "TLog";
    case pmlab::SetDesign::logfree: return "Logfree";
  }
  return "Unknown";
}

// Random inserts, removes and lookups against std::set; reopened, the same keys.
TEST_P(SetApi, MatchesAStdSetAcrossReopening) {
  std::set<uint64_t> model;
  {
    auto set = pmlab::Set::create(dir_.file("set"), {GetParam(), 2, 512});
    std::mt19937_64 rng(3);
    for (int i = 0; i < 3000; ++i) {
      const uint64_t key = 1 + rng() % 400;
      switch (rng() % 3) {
        case 0: ASSERT_EQ(set.insert(0, key), model.insert(key).second); break;
        case 1: ASSERT_EQ(set.remove(1, key), model.erase(key) == 1); break;
        default: ASSERT_EQ(set.contains(0, key), model.contains(key));
      }
    }
    EXPECT_EQ(set.keys(), std::vector<uint64_t>(model.begin(), model.end()));
    set.check();
  }
  auto set = pmlab::Set::open(dir_.file("set"));
  EXPECT_EQ(set.design(), GetParam());
  EXPECT_EQ(set.threads(), 2u);
  EXPECT_EQ(set.capacity(), 512u);
  EXPECT_EQ(set.keys(), std::vector<uint64_t>(model.begin(), model.end()));
  set.check();
}

// Threads insert disjoint keys and remove every third: each thread's survivors are there.
TEST_P(SetApi, ConcurrentThreadsLoseNothing) {
  constexpr unsigned kThreads = 3;
  constexpr uint64_t kKeys = 400;
  auto set = pmlab::Set::create(dir_.file("set"), {GetParam(), kThreads, kThreads * kKeys});
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < kKeys; ++i) {
        const uint64_t key = 1 + i * kThreads + t;
        EXPECT_TRUE(set.insert(t, key));
        if (i % 3 == 0) { EXPECT_TRUE(set.remove(t, key)); }
      }
    });
  for (auto& thread : threads) thread.join();
  std::vector<uint64_t> expected;
  for (uint64_t key = 1; key <= kThreads * kKeys; ++key)
    if (((key - 1) / kThreads) % 3 != 0) expected.push_back(key);
  EXPECT_EQ(set.keys(), expected);
  set.check();
}

TEST_P(SetApi, BadKeysIndexesAndAFullSetAreErrors) {
  auto set = pmlab::Set::create(dir_.file("set"), {GetParam(), 2, 8});
  EXPECT_EQ(code_of([&] { set.insert(0, 0); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { set.insert(0, pmlab::Set::kMaxKey + 1); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { set.contains(2, 1); }), PMLAB_E_INVALID_ARGUMENT);
  for (uint64_t key = 1; key <= 8; ++key) ASSERT_TRUE(set.insert(0, key));
  EXPECT_FALSE(set.insert(1, 8)) << "a present key in a full set is present, not a full set";
  EXPECT_EQ(code_of([&] { set.insert(0, 9); }), PMLAB_E_POOL_FULL);
  EXPECT_TRUE(set.remove(1, 3));
  EXPECT_TRUE(set.insert(0, 9)) << "a removed key's node is taken again";
  EXPECT_EQ(code_of([&] { pmlab::Set::open(dir_.file("set")); }), PMLAB_E_BUSY);
}

INSTANTIATE_TEST_SUITE_P(Designs, SetApi,
                         ::testing::Values(pmlab::SetDesign::linkfree, pmlab::SetDesign::soft, pmlab::SetDesign::tlog),
                         set_name);

// A pool file on tmpfs is mapped with the ADR domain: the eADR-only designs are refused, and leave no file.
TEST(LockfreeApi, EadrOnlyDesignsAreRefusedUnderAdr) {
  unsetenv("PMLAB_FORCE_DOMAIN");
  TempDir dir;
  EXPECT_EQ(code_of([&] {
              pmlab::Set::create(dir.file("set"), {pmlab::SetDesign::logfree, 2, 8});
            }),
            PMLAB_E_UNSUPPORTED);
  EXPECT_FALSE(std::filesystem::exists(dir.file("set")));
  pmlab::RingOptions o;
  o.design = pmlab::RingDesign::txfree;
  EXPECT_EQ(code_of([&] { pmlab::Ring::create(dir.file("ring"), o); }), PMLAB_E_UNSUPPORTED);
  EXPECT_FALSE(std::filesystem::exists(dir.file("ring")));
}

// Pools mapped with the eADR domain (real eADR PMEM, or PMLAB_FORCE_DOMAIN=eadr for a platform the user
// knows to flush its caches on power failure) carry the eADR-only designs, across reopening too.
TEST(LockfreeApi, EadrOnlyDesignsRunOnAnEadrPool) {
  setenv("PMLAB_FORCE_DOMAIN", "eadr", 1);
  TempDir dir;
  {
    auto set = pmlab::Set::create(dir.file("set"), {pmlab::SetDesign::logfree, 2, 64});
    EXPECT_TRUE(set.insert(0, 7));
    EXPECT_TRUE(set.insert(1, 3));
    EXPECT_TRUE(set.remove(0, 7));
    pmlab::RingOptions o;
    o.design = pmlab::RingDesign::txfree;
    o.capacity = 4;
    o.record_bytes = 8;
    o.threads = 2;
    auto ring = pmlab::Ring::create(dir.file("ring"), o);
    for (uint64_t v : {uint64_t{11}, uint64_t{12}, uint64_t{13}}) ring.push(0, &v);
    uint64_t out = 0;
    ring.pop(1, &out);
    EXPECT_EQ(out, 11u);
  }
  auto set = pmlab::Set::open(dir.file("set"));
  EXPECT_EQ(set.design(), pmlab::SetDesign::logfree);
  EXPECT_EQ(set.keys(), std::vector<uint64_t>{3});
  auto ring = pmlab::Ring::open(dir.file("ring"));
  EXPECT_EQ(ring.design(), pmlab::RingDesign::txfree);
  ASSERT_EQ(ring.size(), 2u);
  uint64_t out = 0;
  ring.pop(0, &out);
  EXPECT_EQ(out, 12u);
  unsetenv("PMLAB_FORCE_DOMAIN");
}

TEST(LockfreeApi, PoolsOfTheOtherKindAndBadOptionsAreErrors) {
  TempDir dir;
  { pmlab::Set::create(dir.file("set"), {pmlab::SetDesign::linkfree, 2, 8}); }
  EXPECT_EQ(code_of([&] { pmlab::Ring::open(dir.file("set")); }), PMLAB_E_WRONG_LAYOUT);
  EXPECT_EQ(code_of([&] { pmlab::Set::create(dir.file("set")); }), PMLAB_E_ALREADY_EXISTS);
  EXPECT_EQ(code_of([&] { pmlab::Set::open(dir.file("none")); }), PMLAB_E_NOT_FOUND);
  pmlab::RingOptions o;
  o.capacity = 12;
  EXPECT_EQ(code_of([&] { pmlab::Ring::create(dir.file("ring"), o); }), PMLAB_E_INVALID_ARGUMENT);
  o.capacity = 16;
  o.threads = 0;
  EXPECT_EQ(code_of([&] { pmlab::Ring::create(dir.file("ring"), o); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_FALSE(std::filesystem::exists(dir.file("ring")));
}

// Flips one bit of the 8-byte word at `offset` of a closed pool's data area (past its 4 KiB header).
void flip_low_bit(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  uint64_t word = 0;
  f.seekg(static_cast<std::streamoff>(4096 + offset));
  f.read(reinterpret_cast<char*>(&word), 8);
  word ^= 1;
  f.seekp(static_cast<std::streamoff>(4096 + offset));
  f.write(reinterpret_cast<const char*>(&word), 8);
}

// A root whose geometry lost a bit is refused, though the damaged value still fits the pool: a set one
// node short would drop the nodes past it, a ring one byte longer would copy past the caller's records.
TEST(LockfreeApi, ADamagedRootIsRefused) {
  TempDir dir;
  {
    auto set = pmlab::Set::create(dir.file("set"), {pmlab::SetDesign::linkfree, 2, 64});
    for (uint64_t k = 1; k <= 64; ++k) set.insert(0, k);
  }
  flip_low_bit(dir.file("set"), 16);  // the root's capacity
  EXPECT_EQ(code_of([&] { pmlab::Set::open(dir.file("set")); }), PMLAB_E_CORRUPTED);
  pmlab::RingOptions o;
  o.capacity = 16;
  o.record_bytes = 32;
  { pmlab::Ring::create(dir.file("ring"), o); }
  flip_low_bit(dir.file("ring"), 24);  // the root's record size
  EXPECT_EQ(code_of([&] { pmlab::Ring::open(dir.file("ring")); }), PMLAB_E_CORRUPTED);
}

// Records come out in the order they went in, and a reopened ring holds what was left, in order.
TEST(RingApi, IsAFifoAcrossReopening) {
  TempDir dir;
  pmlab::RingOptions o;
  o.capacity = 32;
  o.record_bytes = 24;
  o.threads = 2;
  {
    auto ring = pmlab::Ring::create(dir.file("ring"), o);
    char record[24] = {};
    for (int i = 0; i < 40; ++i) {
      std::snprintf(record, sizeof record, "record %d", i);
      ring.push(static_cast<unsigned>(i % 2), record);
      if (i % 4 != 3) continue;
      char out[24];
      ring.pop(1, out);
      EXPECT_STREQ(out, ("record " + std::to_string(i / 4)).c_str());
    }
    EXPECT_EQ(ring.size(), 30u);
    EXPECT_EQ(code_of([&] { ring.push(2, record); }), PMLAB_E_INVALID_ARGUMENT);
  }
  auto ring = pmlab::Ring::open(dir.file("ring"));
  EXPECT_EQ(ring.design(), pmlab::RingDesign::tx);
  EXPECT_EQ(ring.threads(), 2u);
  EXPECT_EQ(ring.capacity(), 32u);
  EXPECT_EQ(ring.record_bytes(), 24u);
  ASSERT_EQ(ring.size(), 30u);
  for (int i = 10; i < 40; ++i) {
    char out[24];
    ring.pop(0, out);
    EXPECT_STREQ(out, ("record " + std::to_string(i)).c_str());
  }
}

// Two producers and two consumers through a small ring: every record comes out once.
TEST(RingApi, ConcurrentProducersAndConsumersLoseNothing) {
  TempDir dir;
  pmlab::RingOptions o;
  o.capacity = 8;
  o.record_bytes = 8;
  o.threads = 4;
  auto ring = pmlab::Ring::create(dir.file("ring"), o);
  constexpr uint64_t kEach = 300;  // few: a preempted ticket holder stalls the others (lockfree/ring stresses it)
  std::atomic<uint64_t> sum{0};
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < 2; ++p)
    threads.emplace_back([&, p] {
      for (uint64_t i = 1; i <= kEach; ++i) {
        const uint64_t v = i * 2 + p;
        ring.push(p, &v);
      }
    });
  for (unsigned c = 2; c < 4; ++c)
    threads.emplace_back([&, c] {
      for (uint64_t i = 0; i < kEach; ++i) {
        uint64_t v = 0;
        ring.pop(c, &v);
        sum.fetch_add(v);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(sum.load(), kEach * (kEach + 1) * 2 + kEach);  // sum of 2i over both, plus p = 1 per record
  EXPECT_EQ(ring.size(), 0u);
}

}  // namespace
