// pmlab::Ptm and the C API's pmlab_ptm as a user sees them: pools, transactions, aborts, recovery on
// open, errors.
#include <pmlab/pmlab.h>
#include <pmlab/ptm.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../support/api_error.hpp"
#include "../support/temp_dir.hpp"

namespace {

using pmlab::testing::code_of;
using pmlab::testing::TempDir;

class PtmApi : public ::testing::TestWithParam<pmlab::PtmKind> {
 protected:
  pmlab::Ptm make(const std::string& name, unsigned threads = 2) {
    return pmlab::Ptm::create(dir_.file(name), 4 << 20, {GetParam(), threads, 16 << 10});
  }
  TempDir dir_;
};

TEST_P(PtmApi, CommittedWritesSurviveReopening) {
  {
    auto ptm = make("heap");
    EXPECT_TRUE(ptm.run([](pmlab::Transaction& tx) {
      const uint64_t node = tx.alloc(24);
      tx.write(node, 7);
      tx.write_bytes(node + 8, "hello, pmem", 11);
      tx.write(tx.root(3), node);
    }));
    EXPECT_EQ(ptm.stats().transactions, 1u);
  }
  auto ptm = pmlab::Ptm::open(dir_.file("heap"));
  EXPECT_EQ(ptm.stats().recovered, 0u) << "a clean close leaves nothing to recover";
  EXPECT_EQ(ptm.kind(), GetParam());
  EXPECT_EQ(ptm.threads(), 2u);
  ptm.run([](pmlab::Transaction& tx) {
    const uint64_t node = tx.read(tx.root(3));
    ASSERT_NE(node, 0u);
    EXPECT_EQ(tx.read(node), 7u);
    char text[12] = {};
    tx.read_bytes(node + 8, text, 11);
    EXPECT_STREQ(text, "hello, pmem");
  });
}

TEST_P(PtmApi, AbortAndExceptionsLeaveNothingBehind) {
  auto ptm = make("heap");
  ptm.run([](pmlab::Transaction& tx) { tx.write(tx.root(0), 1); });
  EXPECT_FALSE(ptm.run([](pmlab::Transaction& tx) {
    tx.write(tx.root(0), 2);
    tx.write(tx.root(1), tx.alloc(64));
    tx.abort();
  }));
  EXPECT_THROW(ptm.run([](pmlab::Transaction& tx) {
    tx.write(tx.root(0), 3);
    throw std::runtime_error("the user's own");
  }),
               std::runtime_error);
  uint64_t root0 = 0, root1 = 0;
  ptm.run([&](pmlab::Transaction& tx) {
    root0 = tx.read(tx.root(0));
    root1 = tx.read(tx.root(1));
  });
  EXPECT_EQ(root0, 1u);
  EXPECT_EQ(root1, 0u);
  // The aborted allocation left the heap as it was: the same block comes back.
  uint64_t first = 0, again = 0;
  ptm.run([&](pmlab::Transaction& tx) { first = tx.alloc(64); });
  ptm.run([&](pmlab::Transaction& tx) { tx.free(first); });
  ptm.run([&](pmlab::Transaction& tx) { again = tx.alloc(64); });
  EXPECT_EQ(first, again);
}

TEST_P(PtmApi, BadOffsetsAndAFullHeapAreErrors) {
  auto ptm = make("heap");
  const uint64_t heap_bytes = ptm.stats().heap_bytes;
  ptm.run([&](pmlab::Transaction& tx) {
    EXPECT_EQ(code_of([&] { (void)tx.read(3); }), PMLAB_E_INVALID_ARGUMENT);  // unaligned
    EXPECT_EQ(code_of([&] { (void)tx.read(8); }), PMLAB_E_INVALID_ARGUMENT);  // the heap's header
    EXPECT_EQ(code_of([&] { tx.write(uint64_t{1} << 40, 1); }), PMLAB_E_INVALID_ARGUMENT);
    EXPECT_EQ(code_of([&] { (void)tx.root(pmlab::Transaction::kRoots); }), PMLAB_E_INVALID_ARGUMENT);
    // The edges of what a transaction may name: the roots and the heap past them, up to its last word.
    EXPECT_EQ(code_of([&] { (void)tx.read(tx.root(0) - 8); }), PMLAB_E_INVALID_ARGUMENT);
    EXPECT_EQ(code_of([&] { (void)tx.read(UINT64_MAX - 7); }), PMLAB_E_INVALID_ARGUMENT);
    EXPECT_EQ(code_of([&] { (void)tx.read(heap_bytes); }), PMLAB_E_INVALID_ARGUMENT);
    EXPECT_EQ(tx.read(tx.root(pmlab::Transaction::kRoots - 1)), 0u);
    tx.write(heap_bytes - 8, 7);
    EXPECT_EQ(tx.read(heap_bytes - 8), 7u);
    EXPECT_EQ(code_of([&] { (void)tx.alloc(uint64_t{1} << 30); }), PMLAB_E_POOL_FULL);
    EXPECT_EQ(code_of([&] { tx.free(tx.root(0)); }), PMLAB_E_INVALID_ARGUMENT);
  });
}

TEST_P(PtmApi, PoolsAreNeverOverwrittenOpenedTwiceOrMistaken) {
  auto ptm = make("heap");
  EXPECT_EQ(code_of([&] { make("heap"); }), PMLAB_E_ALREADY_EXISTS);
  EXPECT_EQ(code_of([&] { pmlab::Ptm::open(dir_.file("heap")); }), PMLAB_E_BUSY);
  EXPECT_EQ(code_of([&] { pmlab::Ptm::open(dir_.file("absent")); }), PMLAB_E_NOT_FOUND);
  EXPECT_EQ(code_of([&] {
              pmlab::Ptm::create(dir_.file("small"), 2 << 20, {GetParam(), 64, 64 << 10});
            }),
            PMLAB_E_NO_SPACE);
  EXPECT_FALSE(std::filesystem::exists(dir_.file("small")));
  EXPECT_EQ(code_of([&] {
              pmlab::Ptm::create(dir_.file("odd"), 4 << 20, {GetParam(), 0, 64 << 10});
            }),
            PMLAB_E_INVALID_ARGUMENT);
}

// A run, a session or a session's run from inside a body of the same Ptm would wait forever for the slot or
// lock the outer transaction holds (undo, or one slot) or commit apart from it: each is refused, and the
// Error undoes the outer transaction as any exception does. Another Ptm's transaction may run inside.
// The log slot bounds the words one transaction writes as ptm.hpp says, about log_bytes_per_thread / 32; writes
// into a block the transaction allocated do not count; one word more ends the process, naming the option.
TEST_P(PtmApi, ATransactionBeyondItsLogSlotEndsTheProcessNamingTheOption) {
  auto ptm = pmlab::Ptm::create(dir_.file("heap"), 4 << 20, {GetParam(), 1, 65536});
  const uint64_t words = GetParam() == pmlab::PtmKind::redo ? 2042 : 2046;
  uint64_t block = 0;
  EXPECT_TRUE(ptm.run([&](pmlab::Transaction& tx) {
    block = tx.alloc((words + 1) * 8);
    for (uint64_t i = 0; i <= words; ++i) tx.write(block + 8 * i, i);
  }));
  EXPECT_TRUE(ptm.run([&](pmlab::Transaction& tx) {
    for (uint64_t i = 0; i < words; ++i) tx.write(block + 8 * i, i + 1);
  }));
  EXPECT_DEATH(ptm.run([&](pmlab::Transaction& tx) {
    for (uint64_t i = 0; i <= words; ++i) tx.write(block + 8 * i, i + 2);
  }),
               "more than " + std::to_string(words) + " words .*log_bytes_per_thread");
}

TEST_P(PtmApi, TransactionsDoNotNest) {
  auto ptm = make("heap", /*threads=*/1);
  auto other = make("other", /*threads=*/2);
  auto session = other.session();
  int inner_code = PMLAB_OK, session_code = PMLAB_OK;
  EXPECT_TRUE(ptm.run([&](pmlab::Transaction& tx) {
    tx.write(tx.root(0), 1);
    inner_code = code_of([&] { ptm.run([](pmlab::Transaction& inner) { inner.write(inner.root(1), 1); }); });
    session_code = code_of([&] { (void)ptm.session(); });
    EXPECT_TRUE(other.run([](pmlab::Transaction& inner) { inner.write(inner.root(0), 5); }));
    EXPECT_EQ(code_of([&] { session.run([](pmlab::Transaction&) {}); }), PMLAB_OK) << "another Ptm's session";
  }));
  EXPECT_EQ(inner_code, PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(session_code, PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] {
              ptm.run([&](pmlab::Transaction& tx) {
                tx.write(tx.root(0), 2);
                ptm.run([](pmlab::Transaction&) {});
              });
            }),
            PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { session.run([&](pmlab::Transaction&) { session.run([](pmlab::Transaction&) {}); }); }),
            PMLAB_E_INVALID_ARGUMENT);
  ptm.run([](pmlab::Transaction& tx) {
    EXPECT_EQ(tx.read(tx.root(0)), 1u) << "the refused inner run undid the outer transaction around it";
    EXPECT_EQ(tx.read(tx.root(1)), 0u) << "the refused inner body never ran";
  });
  session.run([](pmlab::Transaction& tx) { EXPECT_EQ(tx.read(tx.root(0)), 5u); });
}

// A thread whose sessions hold every slot would wait for itself in run() or session(): refused. With a
// slot left, or once a session is gone, both go on.
TEST_P(PtmApi, AThreadHoldingEverySlotIsNotLeftWaitingForItself) {
  auto ptm = make("heap", /*threads=*/2);
  {
    auto first = ptm.session();
    EXPECT_TRUE(ptm.run([](pmlab::Transaction& tx) { tx.write(tx.root(0), 1); })) << "one slot is free";
    auto second = ptm.session();
    EXPECT_EQ(code_of([&] { ptm.run([](pmlab::Transaction&) {}); }), PMLAB_E_INVALID_ARGUMENT);
    EXPECT_EQ(code_of([&] { (void)ptm.session(); }), PMLAB_E_INVALID_ARGUMENT);
    EXPECT_TRUE(second.run([](pmlab::Transaction& tx) { tx.write(tx.root(0), 2); }));
  }
  EXPECT_TRUE(ptm.run([](pmlab::Transaction& tx) { EXPECT_EQ(tx.read(tx.root(0)), 2u); }));
}

TEST_P(PtmApi, ConcurrentTransfersKeepTheTotal) {
  constexpr int kThreads = 4, kAccounts = 16, kTransfers = 2000;
  auto ptm = make("heap", 3);  // fewer slots than threads: the fourth waits its turn
  uint64_t accounts = 0;
  ptm.run([&](pmlab::Transaction& tx) {
    accounts = tx.alloc(8 * kAccounts);
    for (int i = 0; i < kAccounts; ++i) tx.write(accounts + 8 * i, 100);
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      uint64_t x = 0x9e3779b97f4a7c15ull * (t + 1);
      for (int i = 0; i < kTransfers; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const uint64_t from = accounts + 8 * (x % kAccounts), to = accounts + 8 * ((x >> 20) % kAccounts);
        ptm.run([&](pmlab::Transaction& tx) {
          const uint64_t a = tx.read(from);
          if (a == 0 || from == to) return;
          tx.write(from, a - 1);
          tx.write(to, tx.read(to) + 1);
        });
      }
    });
  for (auto& th : threads) th.join();
  uint64_t total = 0;
  ptm.run([&](pmlab::Transaction& tx) {
    total = 0;
    for (int i = 0; i < kAccounts; ++i) total += tx.read(accounts + 8 * i);
  });
  EXPECT_EQ(total, 100u * kAccounts);
  EXPECT_EQ(ptm.stats().transactions, 2u + kThreads * kTransfers);
}

TEST_P(PtmApi, ConcurrentSessionsKeepTheirSlots) {
  auto ptm = make("heap", 2);
  uint64_t counter = 0;
  ptm.run([&](pmlab::Transaction& tx) {
    counter = tx.alloc(8);
    tx.write(counter, 0);
  });
  {
    pmlab::Ptm::Session mine = ptm.session();  // one of the two slots; run() and other sessions share the other
    std::thread other([&] {
      auto theirs = ptm.session();
      for (int i = 0; i < 500; ++i)
        theirs.run([&](pmlab::Transaction& tx) { tx.write(counter, tx.read(counter) + 1); });
    });
    for (int i = 0; i < 500; ++i) mine.run([&](pmlab::Transaction& tx) { tx.write(counter, tx.read(counter) + 1); });
    other.join();
    pmlab::Ptm::Session moved = std::move(mine);
    EXPECT_FALSE(moved.run([](pmlab::Transaction& tx) { tx.abort(); }));
  }
  // Both slots are free again: two sessions at once, and they stay valid when their Ptm is moved (they
  // still end before it does).
  pmlab::Ptm holder = make("other");
  uint64_t total = 0;
  {
    auto a = ptm.session();
    auto b = ptm.session();
    holder = std::move(ptm);
    b.run([&](pmlab::Transaction& tx) { total = tx.read(counter); });
  }
  EXPECT_EQ(total, 1000u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, PtmApi, ::testing::Values(pmlab::PtmKind::redo, pmlab::PtmKind::undo),
                         [](const auto& param_info) {
                           return param_info.param == pmlab::PtmKind::redo ? "redo" : "undo";
                         });

// ------------------------------------------------------------------------------------------------ C API

struct Transfer {
  uint64_t from, to;
};

int move_one(pmlab_tx* tx, void* arg) {
  const auto* t = static_cast<const Transfer*>(arg);
  uint64_t a = 0, b = 0;
  int rc = pmlab_tx_read(tx, t->from, &a);
  if (rc == 0) rc = pmlab_tx_read(tx, t->to, &b);
  if (rc != 0) return rc;
  if (a == 0) return 42;  // the body's own refusal: an abort
  rc = pmlab_tx_write(tx, t->from, a - 1);
  return rc != 0 ? rc : pmlab_tx_write(tx, t->to, b + 1);
}

TEST(PtmCApi, RunsCommitsAbortsAndReportsErrors) {
  TempDir dir;
  pmlab_ptm* ptm = nullptr;
  const pmlab_ptm_config config{PMLAB_PTM_UNDO, 1, 0};
  ASSERT_EQ(pmlab_ptm_create(dir.file("heap").c_str(), 4 << 20, &config, &ptm), PMLAB_OK) << pmlab_errormsg();
  struct Words {
    uint64_t a, b;
  } words{};
  ASSERT_EQ(pmlab_ptm_run(
                ptm,
                [](pmlab_tx* tx, void* arg) {
                  auto* w = static_cast<Words*>(arg);
                  int rc = pmlab_tx_alloc(tx, 16, &w->a);
                  w->b = w->a + 8;
                  if (rc == 0) rc = pmlab_tx_write(tx, w->a, 1);
                  if (rc == 0) rc = pmlab_tx_write(tx, w->b, 0);
                  return rc;
                },
                &words),
            PMLAB_OK);
  Transfer t{words.a, words.b};
  EXPECT_EQ(pmlab_ptm_run(ptm, move_one, &t), PMLAB_OK);
  EXPECT_EQ(pmlab_ptm_run(ptm, move_one, &t), 42);  // a is 0 now
  pmlab_ptm_stats stats{};
  ASSERT_EQ(pmlab_ptm_get_stats(ptm, &stats), PMLAB_OK);
  EXPECT_EQ(stats.transactions, 2u);
  EXPECT_EQ(stats.heap_bytes > 0, true);

  EXPECT_EQ(pmlab_ptm_run(
                ptm,
                [](pmlab_tx* tx, void*) {
                  uint64_t v = 0;
                  return pmlab_tx_read(tx, 12, &v);
                },
                nullptr),
            PMLAB_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pmlab_errormsg()).find("offset 12"), std::string::npos) << pmlab_errormsg();
  // A session runs the same bodies on a slot of its own.
  pmlab_session* session = nullptr;
  ASSERT_EQ(pmlab_session_open(ptm, &session), PMLAB_OK) << pmlab_errormsg();
  Transfer back{words.b, words.a};
  EXPECT_EQ(pmlab_session_run(session, move_one, &back), PMLAB_OK);
  EXPECT_EQ(pmlab_session_run(session, move_one, &back), 42);  // b is 0 again
  pmlab_session_close(session);
  pmlab_ptm_close(ptm);

  pmlab_ptm* again = nullptr;
  ASSERT_EQ(pmlab_ptm_open(dir.file("heap").c_str(), &again), PMLAB_OK) << pmlab_errormsg();
  pmlab_ptm* twice = nullptr;
  EXPECT_EQ(pmlab_ptm_open(dir.file("heap").c_str(), &twice), PMLAB_E_BUSY);
  EXPECT_EQ(twice, nullptr);
  EXPECT_EQ(pmlab_exit_code(PMLAB_E_BUSY), 3);
  EXPECT_STREQ(pmlab_strerror(PMLAB_E_BUSY), "in use");
  pmlab_ptm_close(again);
  EXPECT_EQ(pmlab_ptm_open(dir.file("absent").c_str(), &again), PMLAB_E_NOT_FOUND);
}

// A nested pmlab_ptm_run returns its code to the outer body, which may go on and commit; a kind outside
// the enumerators, as a C caller may store one, is refused.
TEST(PtmCApi, NestedRunsAndUnknownKindsAreRefused) {
  TempDir dir;
  pmlab_ptm* ptm = nullptr;
  pmlab_ptm_config config{PMLAB_PTM_UNDO, 1, 0};
  ASSERT_EQ(pmlab_ptm_create(dir.file("heap").c_str(), 4 << 20, &config, &ptm), PMLAB_OK) << pmlab_errormsg();
  struct Nest {
    pmlab_ptm* ptm;
    int inner, session;
  } nest{ptm, PMLAB_OK, PMLAB_OK};
  EXPECT_EQ(pmlab_ptm_run(
                ptm,
                [](pmlab_tx* tx, void* arg) {
                  auto* n = static_cast<Nest*>(arg);
                  n->inner = pmlab_ptm_run(
                      n->ptm, [](pmlab_tx*, void*) { return 0; }, nullptr);
                  pmlab_session* s = nullptr;
                  n->session = pmlab_session_open(n->ptm, &s);
                  return pmlab_tx_write(tx, pmlab_tx_root(tx, 0), 9);
                },
                &nest),
            PMLAB_OK);
  EXPECT_EQ(nest.inner, PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(nest.session, PMLAB_E_INVALID_ARGUMENT);
  uint64_t root = 0;
  EXPECT_EQ(
      pmlab_ptm_run(
          ptm,
          [](pmlab_tx* tx, void* arg) { return pmlab_tx_read(tx, pmlab_tx_root(tx, 0), static_cast<uint64_t*>(arg)); },
          &root),
      PMLAB_OK);
  EXPECT_EQ(root, 9u) << "the outer transaction committed";
  pmlab_ptm_close(ptm);

  const int seven = 7;
  std::memcpy(&config.kind, &seven, sizeof seven);  // what a C caller may store
  EXPECT_EQ(pmlab_ptm_create(dir.file("odd").c_str(), 4 << 20, &config, &ptm), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_FALSE(std::filesystem::exists(dir.file("odd")));
}

}  // namespace
