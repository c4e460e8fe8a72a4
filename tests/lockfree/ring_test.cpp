// The ring buffer: FIFO order, blocking at full and empty, recovery rolling back in-flight operations
// (crafted crash images) and consolidating, and a concurrent stress run that must lose or duplicate
// no element and keep each producer's order (run under ThreadSanitizer: --gtest_filter='*Stress*').
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "../primitives/aligned_region.hpp"
#include "../support/write_back_judge.hpp"
#include "pmlab/lockfree/ring/ring_buffer.hpp"

namespace pmlab::lockfree {
namespace {

persist::Persister persister_for(persist::Domain d) {
  persist::Config c;
  c.domain = d;
  c.flush = persist::best_line_flush(platform::CpuFeatures::host());
  return persist::Persister::create(c).value();
}

struct Element {
  uint64_t producer;
  uint64_t seq;
  uint64_t check[6];
};
Element element(uint64_t producer, uint64_t seq) {
  Element e{producer, seq, {}};
  for (int k = 0; k < 6; ++k) e.check[k] = producer * 1000003 + seq * 31 + static_cast<uint64_t>(k);
  return e;
}
bool intact(const Element& e) {
  const Element want = element(e.producer, e.seq);
  return std::memcmp(&e, &want, sizeof e) == 0;
}

struct Case {
  RingDesign design;
  persist::Domain domain;
  bool flush_slots;
};
std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  return std::string(to_string(info.param.design)) + "_" + persist::to_string(info.param.domain) +
         (info.param.flush_slots ? "_slotflush" : "");
}

class LockfreeRingStress : public ::testing::TestWithParam<Case> {};

const auto kCases = ::testing::Values(
    Case{RingDesign::volatile_ring, persist::Domain::none, false}, Case{RingDesign::tx, persist::Domain::adr, false},
    Case{RingDesign::tx, persist::Domain::eadr, true}, Case{RingDesign::txfree, persist::Domain::eadr, false},
    Case{RingDesign::txfree, persist::Domain::eadr, true});
INSTANTIATE_TEST_SUITE_P(Designs, LockfreeRingStress, kCases, name_of);

// From ticket 0, and from tickets that cross 2^32 in the first lap (a ring formatted to go on from there).
class LockfreeRingFrom : public ::testing::TestWithParam<std::tuple<Case, uint64_t>> {};
INSTANTIATE_TEST_SUITE_P(Designs, LockfreeRingFrom,
                         ::testing::Combine(kCases, ::testing::Values(0, (uint64_t{1} << 32) - 8)),
                         [](const auto& from) {
                           return name_of({std::get<0>(from.param), from.index}) +
                                  (std::get<1>(from.param) == 0 ? "_from0" : "_across2to32");
                         });

TEST_P(LockfreeRingFrom, FifoAcrossLapsAndACleanReopen) {
  const Case c = std::get<0>(GetParam());
  const persist::Persister p = persister_for(c.domain);
  testing::AlignedRegion region(RingBuffer::bytes_needed(8, sizeof(Element), 2));
  RingBuffer ring(c.design, region.base, region.size, p);
  ASSERT_TRUE(ring.format(8, sizeof(Element),
                          {.flush_slots = c.flush_slots, .max_threads = 2, .first_ticket = std::get<1>(GetParam())}));
  uint64_t pushed = 0, popped = 0;
  Element out{};
  for (int round = 0; round < 50; ++round) {  // ~6 laps of the 8 slots, size varying 0..8
    const int n = 1 + round % 8;
    for (int i = 0; i < n && ring.size() < 8; ++i) {
      const Element e = element(round % 2, pushed++);
      ring.push(round % 2, &e);
    }
    while (ring.size() > static_cast<uint64_t>(round % 3)) {
      ring.pop(1 - round % 2, &out);
      ASSERT_TRUE(intact(out));
      ASSERT_EQ(out.seq, popped++);
    }
  }
  if (c.design == RingDesign::volatile_ring) return;
  const uint64_t left = ring.size();
  RingBuffer reopened(c.design, region.base, region.size, p);
  ASSERT_TRUE(reopened.recover({c.flush_slots, 2}));
  ASSERT_EQ(reopened.size(), left);
  for (uint64_t i = 0; i < left; ++i) {
    reopened.pop(0, &out);
    ASSERT_TRUE(intact(out));
    EXPECT_EQ(out.seq, popped++);
  }
}

// A format of a new pool's region (zeros), with the recovery it ends in, writes back only lines it
// changed and fences only after writing: `pmlab crash exec` finds neither a redundant write-back nor an
// empty fence in a program that makes a ring.
TEST(LockfreeRingFormat, WritesBackOnlyWhatItChanges) {
  for (const RingDesign design : {RingDesign::volatile_ring, RingDesign::tx, RingDesign::txfree}) {
    testing::AlignedRegion region(RingBuffer::bytes_needed(8, sizeof(Element), 2));
    std::memset(region.base, 0, region.size);
    testing::WriteBackJudge judge(region.span());
    persist::Persister judged = persister_for(persist::Domain::adr);
    judged.attach(&judge);
    RingBuffer ring(design, region.base, region.size, judged);
    ASSERT_TRUE(ring.format(8, sizeof(Element), {.max_threads = 2}));
    EXPECT_EQ(judge.redundant_lines, 0u) << to_string(design);
    EXPECT_EQ(judge.empty_fences, 0u) << to_string(design);
    EXPECT_EQ(judge.outside, 0u) << to_string(design);
    EXPECT_EQ(judge.lines_with_news, 1u + 2u) << "the root and the two threads' lines";
  }
}

TEST(LockfreeRingFormat, RefusesAFirstTicketOffTheCapacity) {
  const persist::Persister p = persister_for(persist::Domain::eadr);
  testing::AlignedRegion region(RingBuffer::bytes_needed(8, sizeof(Element), 2));
  RingBuffer ring(RingDesign::txfree, region.base, region.size, p);
  EXPECT_EQ(ring.format(8, sizeof(Element), {.max_threads = 2, .first_ticket = 12}).code(), Errc::invalid_argument);
  EXPECT_EQ(ring.format(8, sizeof(Element), {.max_threads = 2, .first_ticket = uint64_t{1} << 62}).code(),
            Errc::invalid_argument);
}

// Offsets of the layout documented in ring_buffer.hpp, for crafting crash images.
uint64_t* thread_line(std::byte* base, int tid) { return reinterpret_cast<uint64_t*>(base + 3 * 64 + tid * 64); }

TEST(LockfreeRingRecovery, TxFreeRollsBackAnInFlightPushAndConsolidatesAroundIt) {
  const persist::Persister p = persister_for(persist::Domain::eadr);
  testing::AlignedRegion region(RingBuffer::bytes_needed(8, sizeof(Element), 2));
  {
    RingBuffer ring(RingDesign::txfree, region.base, region.size, p);
    ASSERT_TRUE(ring.format(8, sizeof(Element), {false, 2}));
    for (uint64_t s = 0; s < 4; ++s) {
      const Element e = element(0, s);
      ring.push(0, &e);
    }
  }
  // Thread 1 was pushing ticket 1 when the power failed: its data and stamp may have landed.
  thread_line(region.base, 1)[2] = 1;
  RingBuffer ring(RingDesign::txfree, region.base, region.size, p);
  ASSERT_TRUE(ring.recover({false, 2}));
  ASSERT_EQ(ring.size(), 3u);
  Element out{};
  for (uint64_t s : {0, 2, 3}) {
    ring.pop(0, &out);
    ASSERT_TRUE(intact(out));
    EXPECT_EQ(out.seq, s);
  }
}

TEST(LockfreeRingRecovery, TxRollsBackAnUncommittedPush) {
  const persist::Persister p = persister_for(persist::Domain::adr);
  const uint64_t bytes = RingBuffer::bytes_needed(4, sizeof(Element), 1);
  testing::AlignedRegion region(bytes);
  RingBuffer ring(RingDesign::tx, region.base, region.size, p);
  ASSERT_TRUE(ring.format(4, sizeof(Element), {false, 1}));
  const Element a = element(0, 0), b = element(0, 1);
  ring.push(0, &a);
  std::vector<std::byte> before(region.base, region.base + bytes);
  ring.push(0, &b);
  // Crash image: b's slot written, but its transaction's log still valid (the commit never landed).
  const uint64_t undo = 3 * 64 + 64;
  std::vector<std::byte> crashed(region.base, region.base + bytes);
  std::memcpy(crashed.data() + undo + 64, before.data() + (bytes - 4 * 128) + 128, 128);  // saved old slot 1
  const uint64_t valid = 2 | (uint64_t{1} << 62);
  std::memcpy(crashed.data() + undo, &valid, 8);
  std::memcpy(region.base, crashed.data(), bytes);
  RingBuffer recovered(RingDesign::tx, region.base, region.size, p);
  ASSERT_TRUE(recovered.recover({false, 1}));
  ASSERT_EQ(recovered.size(), 1u);
  Element out{};
  recovered.pop(0, &out);
  EXPECT_EQ(out.seq, 0u);
}

// Two producers push numbered elements, two consumers pop them all: every element arrives exactly once,
// intact, and each consumer sees each producer's elements in increasing order.
TEST_P(LockfreeRingStress, ProducersAndConsumersLoseNothingAndKeepPerProducerFifo) {
  const Case c = GetParam();
  const persist::Persister p = persister_for(c.domain);
  constexpr int kProducers = 2, kConsumers = 2;
  constexpr uint64_t kPerProducer = 4000;
  testing::AlignedRegion region(RingBuffer::bytes_needed(16, sizeof(Element), kProducers + kConsumers));
  RingBuffer ring(c.design, region.base, region.size, p);
  ASSERT_TRUE(ring.format(16, sizeof(Element), {c.flush_slots, kProducers + kConsumers}));
  std::vector<std::atomic<int>> seen(kProducers * kPerProducer);
  std::atomic<int> disorder{0}, torn{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kProducers; ++t)
    threads.emplace_back([&, t] {
      for (uint64_t s = 0; s < kPerProducer; ++s) {
        const Element e = element(static_cast<uint64_t>(t), s);
        ring.push(t, &e);
      }
    });
  for (int t = 0; t < kConsumers; ++t)
    threads.emplace_back([&, t] {
      std::vector<int64_t> last(kProducers, -1);
      Element out{};
      for (uint64_t i = 0; i < kProducers * kPerProducer / kConsumers; ++i) {
        ring.pop(kProducers + t, &out);
        if (!intact(out) || out.producer >= kProducers || out.seq >= kPerProducer) {
          torn.fetch_add(1);
          continue;
        }
        if (static_cast<int64_t>(out.seq) <= last[out.producer]) disorder.fetch_add(1);
        last[out.producer] = static_cast<int64_t>(out.seq);
        seen[out.producer * kPerProducer + out.seq].fetch_add(1);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(disorder.load(), 0);
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "element " << i;
  EXPECT_EQ(ring.size(), 0u);
}

}  // namespace
}  // namespace pmlab::lockfree
