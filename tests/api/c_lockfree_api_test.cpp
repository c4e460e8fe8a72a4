// The C API of the lock-free set and ring (pmlab/pmlab.h) as a C program uses it: codes and messages,
// yes/no answers, recovery on open, defaults for zero members, and threads.
#include <pmlab/pmlab.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../support/temp_dir.hpp"

namespace {

using pmlab::testing::TempDir;

TEST(CSetApi, AnswersYesOrNoAndKeepsItsKeysThroughReopen) {
  TempDir dir;
  const std::string path = dir.file("set.pool");
  pmlab_set* set = nullptr;
  const pmlab_set_config config{PMLAB_SET_LINKFREE, 2, 1024};
  ASSERT_EQ(pmlab_set_create(path.c_str(), &config, &set), PMLAB_OK) << pmlab_errormsg();
  EXPECT_EQ(pmlab_set_insert(set, 0, 7), 1);
  EXPECT_EQ(pmlab_set_insert(set, 1, 7), 0) << "present already";
  EXPECT_EQ(pmlab_set_insert(set, 0, 3), 1);
  EXPECT_EQ(pmlab_set_contains(set, 1, 3), 1);
  EXPECT_EQ(pmlab_set_remove(set, 0, 3), 1);
  EXPECT_EQ(pmlab_set_remove(set, 0, 3), 0) << "absent";
  EXPECT_EQ(pmlab_set_contains(set, 1, 3), 0);
  EXPECT_EQ(pmlab_set_insert(set, 0, 0), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pmlab_errormsg()).find("key"), std::string::npos) << pmlab_errormsg();
  EXPECT_EQ(pmlab_set_insert(set, 2, 5), PMLAB_E_INVALID_ARGUMENT) << "thread index 2 of 2";
  EXPECT_EQ(pmlab_set_insert(set, 0, PMLAB_SET_MAX_KEY + 1), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_set_insert(set, 0, PMLAB_SET_MAX_KEY), 1);
  pmlab_set* again = nullptr;
  EXPECT_EQ(pmlab_set_open(path.c_str(), &again), PMLAB_E_BUSY);
  EXPECT_EQ(again, nullptr);
  pmlab_set_close(set);

  ASSERT_EQ(pmlab_set_open(path.c_str(), &set), PMLAB_OK) << pmlab_errormsg();
  size_t count = 0;
  uint64_t one[1];
  EXPECT_EQ(pmlab_set_keys(set, one, 1, &count), PMLAB_E_NO_SPACE);
  EXPECT_EQ(count, 2u) << "how many there are";
  uint64_t keys[4] = {};
  ASSERT_EQ(pmlab_set_keys(set, keys, 4, &count), PMLAB_OK);
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(keys[0], 7u);
  EXPECT_EQ(keys[1], PMLAB_SET_MAX_KEY);
  EXPECT_EQ(pmlab_set_check(set), PMLAB_OK);
  pmlab_set_config got{};
  ASSERT_EQ(pmlab_set_get_config(set, &got), PMLAB_OK);
  EXPECT_EQ(got.design, PMLAB_SET_LINKFREE);
  EXPECT_EQ(got.threads, 2u);
  EXPECT_EQ(got.capacity, 1024u);
  pmlab_set_close(set);
  pmlab_set_close(nullptr);
}

TEST(CSetApi, ZeroMembersTakeTheDefaultsAndBadDesignsAreRefused) {
  TempDir dir;
  pmlab_set* set = nullptr;
  const pmlab_set_config zero{};
  ASSERT_EQ(pmlab_set_create(dir.file("default.pool").c_str(), &zero, &set), PMLAB_OK) << pmlab_errormsg();
  pmlab_set_config got{};
  ASSERT_EQ(pmlab_set_get_config(set, &got), PMLAB_OK);
  EXPECT_EQ(got.design, PMLAB_SET_LINKFREE);
  EXPECT_EQ(got.threads, 8u);
  EXPECT_EQ(got.capacity, 65536u);
  pmlab_set_close(set);
  // A C caller may store any int in an enum member.
  pmlab_set_config unknown{PMLAB_SET_LINKFREE, 1, 64};
  const int nine = 9;
  std::memcpy(&unknown.design, &nine, sizeof nine);
  EXPECT_EQ(pmlab_set_create(dir.file("unknown.pool").c_str(), &unknown, &set), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(set, nullptr);
  EXPECT_EQ(pmlab_set_insert(nullptr, 0, 1), PMLAB_E_INVALID_ARGUMENT);
  EXPECT_EQ(pmlab_set_create(nullptr, nullptr, &set), PMLAB_E_INVALID_ARGUMENT);
}

TEST(CRingApi, RecordsComeOutInOrderAndSurviveReopen) {
  TempDir dir;
  const std::string path = dir.file("ring.pool");
  pmlab_ring* ring = nullptr;
  const pmlab_ring_config config{PMLAB_RING_TX, 1, 8, 16};
  ASSERT_EQ(pmlab_ring_create(path.c_str(), &config, &ring), PMLAB_OK) << pmlab_errormsg();
  for (uint64_t i = 1; i <= 3; ++i) {
    char record[16] = {};
    std::memcpy(record, &i, sizeof i);
    ASSERT_EQ(pmlab_ring_push(ring, 0, record), PMLAB_OK);
  }
  char out[16];
  ASSERT_EQ(pmlab_ring_pop(ring, 0, out), PMLAB_OK);
  uint64_t first = 0;
  std::memcpy(&first, out, sizeof first);
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(pmlab_ring_push(ring, 0, nullptr), PMLAB_E_INVALID_ARGUMENT);
  pmlab_ring_close(ring);

  ASSERT_EQ(pmlab_ring_open(path.c_str(), &ring), PMLAB_OK) << pmlab_errormsg();
  uint64_t size = 0;
  ASSERT_EQ(pmlab_ring_size(ring, &size), PMLAB_OK);
  EXPECT_EQ(size, 2u);
  for (uint64_t want = 2; want <= 3; ++want) {
    ASSERT_EQ(pmlab_ring_pop(ring, 0, out), PMLAB_OK);
    uint64_t got = 0;
    std::memcpy(&got, out, sizeof got);
    EXPECT_EQ(got, want);
  }
  pmlab_ring_config got{};
  ASSERT_EQ(pmlab_ring_get_config(ring, &got), PMLAB_OK);
  EXPECT_EQ(got.design, PMLAB_RING_TX);
  EXPECT_EQ(got.capacity, 8u);
  EXPECT_EQ(got.record_bytes, 16u);
  pmlab_ring_close(ring);
  const pmlab_ring_config odd{PMLAB_RING_TX, 1, 6, 16};
  EXPECT_EQ(pmlab_ring_create(dir.file("odd.pool").c_str(), &odd, &ring), PMLAB_E_INVALID_ARGUMENT)
      << "a capacity that is not a power of two";
}

// Two producers and two consumers through the C handles: every record comes out once.
TEST(CRingApi, ConcurrentProducersAndConsumersLoseNothing) {
  TempDir dir;
  pmlab_ring* ring = nullptr;
  const pmlab_ring_config config{PMLAB_RING_TX, 4, 16, 8};
  ASSERT_EQ(pmlab_ring_create(dir.file("ring.pool").c_str(), &config, &ring), PMLAB_OK) << pmlab_errormsg();
  constexpr uint64_t kPerProducer = 500;
  std::vector<uint64_t> popped[2];
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < 2; ++p)
    threads.emplace_back([&, p] {
      for (uint64_t i = 1; i <= kPerProducer; ++i) {
        const uint64_t record = p * kPerProducer + i;
        ASSERT_EQ(pmlab_ring_push(ring, p, &record), PMLAB_OK);
      }
    });
  for (unsigned c = 0; c < 2; ++c)
    threads.emplace_back([&, c] {
      for (uint64_t i = 0; i < kPerProducer; ++i) {
        uint64_t record = 0;
        ASSERT_EQ(pmlab_ring_pop(ring, 2 + c, &record), PMLAB_OK);
        popped[c].push_back(record);
      }
    });
  for (auto& t : threads) t.join();
  std::vector<bool> seen(2 * kPerProducer + 1, false);
  for (const auto& list : popped)
    for (uint64_t r : list) {
      ASSERT_TRUE(r >= 1 && r <= 2 * kPerProducer) << r;
      EXPECT_FALSE(seen[r]) << r << " popped twice";
      seen[r] = true;
    }
  uint64_t size = 1;
  ASSERT_EQ(pmlab_ring_size(ring, &size), PMLAB_OK);
  EXPECT_EQ(size, 0u);
  pmlab_ring_close(ring);
}

}  // namespace
