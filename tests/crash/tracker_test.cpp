// The simulated durability domain and the crash states it yields: what a crash may leave of each line.
#include "pmlab/crash/durability_tracker.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "pmlab/crash/enumerator.hpp"
#include "pmlab/persist/config.hpp"
#include "pmlab/platform/cpu.hpp"

namespace pmlab::crash {
namespace {

using persist::Domain;

struct alignas(64) Region {
  std::byte bytes[256];
};

// By default the line write-back this CPU has: the tracker sees every kind alike.
persist::Persister make(Domain d,
                        persist::FlushInstruction f = persist::best_line_flush(platform::CpuFeatures::host())) {
  auto p = persist::Persister::create({.domain = d, .flush = f, .elide_flush = false, .elide_fence = false});
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

const PendingLine* line_at(const std::vector<PendingLine>& lines, size_t offset) {
  for (const auto& l : lines)
    if (l.offset == offset) return &l;
  return nullptr;
}

TEST(DurabilityTracker, AdrLineIsDurableOnlyAfterFlushAndFence) {
  Region r{};
  auto p = make(Domain::adr, persist::FlushInstruction::clflush);
  int crash_points = 0;
  DurabilityTracker t({r.bytes, sizeof r.bytes}, Domain::adr, [&](const std::source_location&) { ++crash_points; });
  p.attach(&t);
  r.bytes[0] = std::byte{1};   // stored, not flushed
  r.bytes[64] = std::byte{2};  // stored and flushed
  p.flush(&r.bytes[64], 1);
  r.bytes[64] = std::byte{3};  // stored again after the write-back
  t.capture();
  auto pending = t.pending();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].written_back, -1);
  ASSERT_EQ(pending[1].values.size(), 2u);  // the written-back snapshot and the latest
  EXPECT_EQ(pending[1].values[static_cast<size_t>(pending[1].written_back)][0], std::byte{2});
  EXPECT_EQ(pending[1].values[static_cast<size_t>(pending[1].latest)][0], std::byte{3});
  p.fence();
  p.detach();
  EXPECT_EQ(crash_points, 1);
  EXPECT_EQ(t.durable()[64], std::byte{2});  // what was written back, not what was stored later
  EXPECT_EQ(t.durable()[0], std::byte{0});
  pending = t.pending();
  ASSERT_EQ(pending.size(), 2u);  // the unflushed line and the re-stored line stay pending
  EXPECT_EQ(pending[1].values.size(), 1u);
}

TEST(DurabilityTracker, EadrMakesEveryStoreDurableAtTheFence) {
  Region r{};
  auto p = make(Domain::eadr);
  DurabilityTracker t({r.bytes, sizeof r.bytes}, Domain::eadr, nullptr);
  p.attach(&t);
  r.bytes[130] = std::byte{9};
  t.capture();
  EXPECT_EQ(t.pending().size(), 1u);
  p.fence();
  p.detach();
  EXPECT_EQ(t.durable()[130], std::byte{9});
  EXPECT_TRUE(t.pending().empty());
}

TEST(DurabilityTracker, NonTemporalStoresCountAsWrittenBack) {
  Region r{};
  unsigned char src[128];
  std::memset(src, 7, sizeof src);
  auto p = make(Domain::adr, persist::FlushInstruction::ntstore);
  DurabilityTracker t({r.bytes, sizeof r.bytes}, Domain::adr, nullptr);
  p.attach(&t);
  p.copy_persist(r.bytes, src, sizeof src);
  p.detach();
  EXPECT_EQ(t.durable()[127], std::byte{7});
}

// A value the line held only between two fences, at some other persistence call, is a crash candidate:
// the cache may have evicted it then.
TEST(DurabilityTracker, ValuesBetweenFencesAreCandidates) {
  Region r{};
  auto p = make(Domain::adr);
  DurabilityTracker t({r.bytes, sizeof r.bytes}, Domain::adr, nullptr);
  p.attach(&t);
  r.bytes[0] = std::byte{1};  // transient
  p.flush(&r.bytes[128], 8);  // a call elsewhere: the tracker looks here
  r.bytes[0] = std::byte{2};
  p.flush(&r.bytes[0], 8);
  t.capture();
  const auto pending = t.pending();
  const PendingLine* l = line_at(pending, 0);
  ASSERT_NE(l, nullptr);
  ASSERT_EQ(l->values.size(), 2u);
  EXPECT_EQ(l->values[0][0], std::byte{1});
  EXPECT_EQ(l->values[1][0], std::byte{2});
  p.detach();
}

// Only the vocabulary's atomic and non-temporal stores hold together; plain stores may tear by byte.
TEST(DurabilityTracker, Store8IsAtomicPlainStoresAreNot) {
  Region r{};
  auto p = make(Domain::adr);
  DurabilityTracker t({r.bytes, sizeof r.bytes}, Domain::adr, nullptr);
  p.attach(&t);
  p.store8(reinterpret_cast<uint64_t*>(r.bytes), 0x1122334455667788ULL);
  const uint64_t plain = 0x0102030405060708ULL;
  std::memcpy(r.bytes + 8, &plain, 8);
  t.capture();
  const auto pending = t.pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].plain_bytes, uint64_t{0xff} << 8);
  const CrashSpace bytes = make_space(pending, t.durable(), Granularity::byte);
  EXPECT_EQ(bytes.pieces.size(), 9u);  // the atomic word whole, the plain word byte by byte
  const CrashSpace words = make_space(pending, t.durable(), Granularity::word);
  EXPECT_EQ(words.pieces.size(), 2u);
  const CrashSpace lines = make_space(pending, t.durable(), Granularity::line);
  EXPECT_EQ(lines.pieces.size(), 1u);
  p.detach();
}

TEST(DurabilityTracker, DeclaredVolatileBytesAreNotExplored) {
  Region r{};
  auto p = make(Domain::adr);
  DurabilityTracker t({r.bytes, sizeof r.bytes}, Domain::adr, nullptr);
  p.attach(&t);
  p.declare_volatile(r.bytes + 8, 8);
  r.bytes[8] = std::byte{5};  // volatile only: nothing to explore
  t.capture();
  EXPECT_TRUE(t.pending().empty());
  r.bytes[0] = std::byte{6};
  t.capture();
  const auto pending = t.pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].values[0][8], std::byte{0});  // the volatile byte keeps its durable content
  p.detach();
}

// --- exploration -------------------------------------------------------------------------------

// n pending lines with `values` contents each (all different from durable zeros).
CrashSpace space_of(size_t n, size_t values, Granularity g = Granularity::line, size_t image = 0) {
  std::vector<PendingLine> lines(n);
  for (size_t i = 0; i < n; ++i) {
    lines[i].offset = i * 64;
    lines[i].size = 64;
    lines[i].order = n - i;  // written in reverse address order
    for (size_t v = 0; v < values; ++v) {
      LineBytes b{};
      b.fill(std::byte{static_cast<unsigned char>(v + 1)});
      lines[i].values.push_back(b);
    }
    lines[i].latest = static_cast<int>(values - 1);
  }
  std::vector<std::byte> durable(std::max(image, n * 64), std::byte{0});
  return make_space(std::move(lines), durable, g);
}

TEST(Explore, NoneAndAllFirstThenEverythingWhenFew) {
  const CrashSpace s = space_of(3, 1);
  const Exploration e = explore(s, 100, 1);
  ASSERT_EQ(e.states.size(), 8u);  // 2^3
  EXPECT_TRUE(e.exhaustive);
  EXPECT_EQ(e.states[0].strategy, Strategy::none);
  EXPECT_EQ(e.states[0].choice, (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(e.states[1].strategy, Strategy::all);
  EXPECT_EQ(e.states[1].choice, (std::vector<uint8_t>{1, 1, 1}));
}

TEST(Explore, EveryStrategyGetsAShareAndTheSequenceReplays) {
  const CrashSpace s = space_of(40, 2);
  const Exploration a = explore(s, 300, 7), b = explore(s, 300, 7);
  ASSERT_EQ(a.states.size(), 300u);
  EXPECT_FALSE(a.exhaustive);
  std::set<Strategy> seen;
  std::set<std::vector<uint8_t>> distinct;
  for (size_t i = 0; i < a.states.size(); ++i) {
    ASSERT_EQ(a.states[i].choice, b.states[i].choice);
    seen.insert(a.states[i].strategy);
    distinct.insert(a.states[i].choice);
  }
  EXPECT_EQ(distinct.size(), a.states.size());
  for (Strategy st : {Strategy::prefix, Strategy::deviation, Strategy::random})
    EXPECT_TRUE(seen.contains(st)) << to_string(st);
  // Word granularity gives half the budget to torn lines.
  const Exploration w = explore(space_of(40, 1, Granularity::word), 300, 7);
  size_t torn = 0;
  for (const auto& st : w.states) torn += st.strategy == Strategy::torn;
  EXPECT_GE(torn, 100u);
}

TEST(Explore, DeviationLevelsCompleteWhenTheyFit) {
  // 12 lines: depth 2 from none and from all is 2 * (12 + 66) states.
  const Exploration e = explore(space_of(12, 1), 2000, 3);
  EXPECT_GE(e.deviation_depth, 2u);
  EXPECT_FALSE(explore(space_of(12, 1), 40, 3).deviation_depth >= 2u);
}

TEST(Explore, StateHashMatchesTheBuiltImage) {
  for (Granularity g : {Granularity::line, Granularity::word, Granularity::byte}) {
    std::vector<PendingLine> lines(3);
    for (size_t i = 0; i < 3; ++i) {
      lines[i].offset = i * 64;
      lines[i].size = 64;
      lines[i].plain_bytes = ~uint64_t{0};
      for (int v = 0; v < 2; ++v) {
        LineBytes b{};
        for (size_t k = 0; k < 64; ++k) b[k] = std::byte{static_cast<unsigned char>((k * 7 + i + v) % 5)};
        lines[i].values.push_back(b);
      }
    }
    std::vector<std::byte> durable(3 * 64 + 40, std::byte{1});
    const CrashSpace s = make_space(lines, durable, g);
    const uint64_t dh = image_hash(durable.data(), durable.size());
    std::vector<std::byte> img(durable.size());
    for (const auto& st : explore(s, 200, 5).states) {
      build_image(durable, s, st, img.data());
      EXPECT_EQ(state_hash(dh, durable, s, st), image_hash(img.data(), img.size())) << to_string(g);
    }
  }
}

TEST(Explore, DescribesWholeAndTornLines) {
  const CrashSpace s = space_of(2, 1, Granularity::word);
  CrashState st;
  st.choice.assign(s.pieces.size(), 0);
  for (size_t p = 0; p < 8; ++p) st.choice[p] = 1;  // line 0 whole
  st.choice[8] = 1;                                 // line 1: one word
  EXPECT_EQ(describe(s, st), "0x0 (latest), 0x40 torn (+0:8 latest)");
}

}  // namespace
}  // namespace pmlab::crash
