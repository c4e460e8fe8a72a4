// pmlab::Pool and the public persistence vocabulary as a user's own design sees them: a layout of its own,
// bytes made durable through the pool's Persister and found again after reopening, and every misuse
// refused with its code.
#include <pmlab/pmlab.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "../support/api_error.hpp"
#include "../support/temp_dir.hpp"

namespace {

using pmlab::testing::code_of;
using pmlab::testing::TempDir;

TEST(PoolApi, WhatAPersisterMadeDurableIsThereAfterReopening) {
  TempDir dir;
  const std::string path = dir.file("mine");
  {
    auto pool = pmlab::Pool::create(path, 1 << 20, "mine.stack", 3);
    EXPECT_TRUE(pool.created());
    EXPECT_EQ(pool.layout_version(), 3u);
    EXPECT_FALSE(pool.is_pmem());  // a file under the test's directory: emulated
    ASSERT_GE(pool.data_size(), 512u << 10);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pool.data()) % 4096, 0u);
    for (uint64_t i = 0; i < 64; ++i) EXPECT_EQ(pool.data()[i], std::byte{0});
    const pmlab::Persister& p = pool.persister();
    auto* words = reinterpret_cast<uint64_t*>(pool.data());
    const pmlab::PersistCounters before = pmlab::thread_persist_counters();
    std::memcpy(words + 8, "a record", 8);
    p.persist(words + 8, 8);
    p.store8(&words[0], 42);
    p.persist(&words[0], 8);
    uint64_t expected = 42;
    EXPECT_TRUE(p.compare_exchange(&words[0], expected, 43));
    EXPECT_EQ(p.fetch_add(&words[1], 5), 0u);
    const pmlab::PersistCounters after = pmlab::thread_persist_counters();
    EXPECT_EQ(after.fences - before.fences, 2u);  // the two persists'; the atomic words need none
    if (pool.domain() == pmlab::Domain::adr) {
      EXPECT_EQ(after.flushes - before.flushes, 2u);  // one line each
    }
  }
  auto pool = pmlab::Pool::open_or_create(path, 1 << 20, "mine.stack");
  EXPECT_FALSE(pool.created());
  const auto* words = reinterpret_cast<const uint64_t*>(pool.data());
  EXPECT_EQ(words[0], 43u);
  EXPECT_EQ(words[1], 5u);
  EXPECT_EQ(std::memcmp(words + 8, "a record", 8), 0);
  EXPECT_EQ(pool.persister().domain(), pool.domain());
}

TEST(PoolApi, TheDomainAndFlushAskedForAreTheOnesUsed) {
  TempDir dir;
  auto pool = pmlab::Pool::create(dir.file("eadr"), 1 << 20, "mine.kv", 1,
                                  {pmlab::Domain::eadr, pmlab::FlushInstruction::clflush});
  EXPECT_EQ(pool.domain(), pmlab::Domain::eadr);
  EXPECT_EQ(pool.flush(), pmlab::FlushInstruction::clflush);
  const pmlab::PersistCounters before = pmlab::thread_persist_counters();
  pool.persister().persist(pool.data(), 256);
  const pmlab::PersistCounters after = pmlab::thread_persist_counters();
  EXPECT_EQ(after.flushes, before.flushes) << "under eADR a fence alone persists";
  EXPECT_EQ(after.fences, before.fences + 1);
}

// Asking for one thing leaves the other the mapping's: a flush asked for does not reset the domain.
TEST(PoolApi, AFlushAskedForKeepsTheMappingsDomain) {
  TempDir dir;
  ::setenv("PMLAB_FORCE_DOMAIN", "eadr", 1);  // what the mapping's default becomes here
  auto pool = pmlab::Pool::create(dir.file("forced"), 1 << 20, "mine.kv", 1, {{}, pmlab::FlushInstruction::clflush});
  ::unsetenv("PMLAB_FORCE_DOMAIN");
  EXPECT_EQ(pool.domain(), pmlab::Domain::eadr);
  EXPECT_EQ(pool.flush(), pmlab::FlushInstruction::clflush);
  { pmlab::Pool closed = std::move(pool); }
  auto reopened = pmlab::Pool::open(dir.file("forced"), "mine.kv", {pmlab::Domain::adr, {}});
  EXPECT_EQ(reopened.domain(), pmlab::Domain::adr);
  EXPECT_NE(reopened.flush(), pmlab::FlushInstruction::ntstore) << "the CPU's best line write-back, as by default";
}

TEST(PoolApiErrors, EachMisuseIsRefusedWithItsCodeAndLosesNothing) {
  TempDir dir;
  const std::string path = dir.file("mine");
  auto pool = pmlab::Pool::create(path, 1 << 20, "mine.stack");
  reinterpret_cast<uint64_t*>(pool.data())[0] = 7;
  pool.persister().persist(pool.data(), 8);
  EXPECT_EQ(code_of([&] { pmlab::Pool::create(path, 1 << 20, "mine.stack"); }), PMLAB_E_ALREADY_EXISTS);
  EXPECT_EQ(code_of([&] { pmlab::Pool::open(path, "mine.stack"); }), PMLAB_E_BUSY);  // open here already
  EXPECT_EQ(code_of([&] { pmlab::Pool::open(dir.file("absent"), "mine.stack"); }), PMLAB_E_NOT_FOUND);
  EXPECT_EQ(code_of([&] { pmlab::Pool::create(dir.file("x"), 1 << 20, ""); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::Pool::create(dir.file("x"), 1 << 20, std::string(32, 'a')); }),
            PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::Pool::create(dir.file("x"), 1 << 20, "with space"); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { pmlab::Pool::create(dir.file("x"), 1 << 20, "ptm"); }), PMLAB_E_INVALID_ARGUMENT)
      << "pmlab's own layouts are opened by pmlab::Ptm, pmlab::Log, ...";
  EXPECT_EQ(code_of([&] { pmlab::Pool::create(dir.file("x"), 1 << 20, "mine", 0); }), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] {
              pmlab::Pool::create(dir.file("x"), 1 << 20, "mine", 1, {pmlab::Domain{7}, {}});
            }),
            PMLAB_E_INVALID_ARGUMENT);
  {
    std::ofstream(dir.file("text")) << "not a pool, and long enough to have a header's room" << std::string(8192, '.');
  }
  EXPECT_EQ(code_of([&] { pmlab::Pool::open(dir.file("text"), "mine.stack"); }), PMLAB_E_NOT_A_POOL);
  pool = pmlab::Pool::create(dir.file("other"), 1 << 20, "mine.other");  // closes the first
  EXPECT_EQ(code_of([&] { pmlab::Pool::open(path, "mine.other"); }), PMLAB_E_WRONG_LAYOUT);
  auto reopened = pmlab::Pool::open(path, "mine.stack");
  EXPECT_EQ(reinterpret_cast<const uint64_t*>(reopened.data())[0], 7u) << "no refusal touched the pool";
  pmlab::Pool moved = std::move(reopened);
  EXPECT_EQ(code_of([&] { (void)reopened.data(); }), PMLAB_E_INVALID_ARGUMENT);
}

}  // namespace

namespace {

// Counts what it sees, by kind, and remembers the last call site.
class Counting final : public pmlab::PersistObserver {
 public:
  void on_writeback(const void*, size_t len, bool non_temporal, pmlab::Persister::Site where) noexcept override {
    (non_temporal ? nt_bytes : flushed_bytes) += len;
    line = where.line();
  }
  void on_fence(pmlab::Persister::Site where) noexcept override {
    ++fences;
    line = where.line();
  }
  void on_atomic_store(const void*, pmlab::Persister::Site) noexcept override { ++atomics; }
  size_t flushed_bytes = 0, nt_bytes = 0, fences = 0, atomics = 0;
  unsigned line = 0;
};

TEST(PoolApi, AnObserverSeesEveryCallAtItsSiteAndAPmWordIsOneWord) {
  TempDir dir;
  auto pool = pmlab::Pool::create(dir.file("observed"), 1 << 20, "mine.observed");
  Counting seen;
  pool.observe(&seen);
  const pmlab::Persister& p = pool.persister();
  const pmlab::PmWord head(reinterpret_cast<uint64_t*>(pool.data()), p);
  head.store(7);
  uint64_t expected = 7;
  EXPECT_TRUE(head.compare_exchange(expected, 9));
  EXPECT_EQ(head.fetch_add(1), 9u);
  const unsigned persist_line = __LINE__ + 1;
  head.persist();
  EXPECT_EQ(seen.line, persist_line) << "the design's own call site, not pmlab's";
  EXPECT_EQ(head.load(), 10u);
  std::vector<char> block(256, 'x');
  p.copy_nt(pool.data() + 4096, block.data(), block.size());
  p.fence();
  EXPECT_EQ(seen.atomics, 3u);
  EXPECT_EQ(seen.flushed_bytes, 64u);  // the word's line
  EXPECT_EQ(seen.nt_bytes, 256u);
  EXPECT_EQ(seen.fences, 2u);
  pool.observe(nullptr);
  head.persist();
  EXPECT_EQ(seen.fences, 2u) << "detached";
}

}  // namespace
