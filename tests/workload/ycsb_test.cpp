// The workload generators against their definitions: frequencies of the hottest items against the
// theoretical probabilities, chi-square for the uniform ones, operation mixes against the proportions.
// Seeds are fixed, so each test is deterministic; the bounds are 5 standard deviations (or the documented
// error of Gray's approximation), wide enough never to flake and narrow enough to catch a wrong formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "pmlab/workload/hotspot.hpp"
#include "pmlab/workload/latest.hpp"
#include "pmlab/workload/scrambled_zipfian.hpp"
#include "pmlab/workload/uniform.hpp"
#include "pmlab/workload/ycsb.hpp"
#include "pmlab/workload/zipfian.hpp"

namespace pmlab::workload {
namespace {

double sigma(double p, double n) { return std::sqrt(p * (1 - p) / n); }

TEST(Zeta, IncrementalMatchesDirect) {
  EXPECT_NEAR(zeta_extend(100, 1000, 0.99, zeta(100, 0.99)), zeta(1000, 0.99), 1e-9);
  EXPECT_DOUBLE_EQ(zeta(1, 0.99), 1.0);
  EXPECT_NEAR(zeta(2, 0.99), 1.0 + std::pow(0.5, 0.99), 1e-12);
}

TEST(Zipfian, HottestRanksMatchTheDefinition) {
  constexpr uint64_t kItems = 1000;
  constexpr int kDraws = 400000;
  ZipfianGenerator zipf(0, kItems);
  Random rng(42);
  std::vector<double> seen(kItems, 0);
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = zipf.next(rng);
    ASSERT_LT(v, kItems);
    seen[v] += 1;
  }
  const double z = zeta(kItems, 0.99);
  // Ranks 0 and 1 are drawn exactly by Gray's method.
  for (int r = 0; r < 2; ++r) {
    const double p = std::pow(r + 1.0, -0.99) / z;
    EXPECT_NEAR(seen[r] / kDraws, p, 5 * sigma(p, kDraws)) << "rank " << r;
  }
  // The rest through the approximate inverse CDF: total variation distance from the exact law is small.
  double tv = 0;
  for (uint64_t r = 0; r < kItems; ++r) tv += std::abs(seen[r] / kDraws - std::pow(r + 1.0, -0.99) / z);
  EXPECT_LT(tv / 2, 0.03);
  // And popularity falls with rank: the top decile holds far more than the bottom one.
  double top = 0, bottom = 0;
  for (uint64_t r = 0; r < kItems / 10; ++r) top += seen[r], bottom += seen[kItems - 1 - r];
  EXPECT_GT(top, 10 * bottom);
}

TEST(Zipfian, GrowingItemCountStaysInRange) {
  ZipfianGenerator zipf(0, 10);
  Random rng(3);
  for (uint64_t items = 10; items < 2000; items += 7)
    for (int i = 0; i < 20; ++i) ASSERT_LT(zipf.next_over(rng, items), items);
}

// Java YCSB 0.17's Utils.fnvhash64 returns Math.abs of the FNV-1a hash: never a top bit set (but for
// Long.MIN_VALUE), and the negation where the raw hash has one.
TEST(YcsbHash, IsMathAbsOfFnv1a) {
  int flipped = 0;
  for (uint64_t v = 0; v < 4096; ++v) {
    const uint64_t raw = fnv1a64_word(v);
    const uint64_t h = fnv_hash64(v);
    EXPECT_EQ(h >> 63, 0u) << v;
    if (raw >> 63) {
      EXPECT_EQ(h, static_cast<uint64_t>(-static_cast<int64_t>(raw)));
      ++flipped;
    } else {
      EXPECT_EQ(h, raw);
    }
  }
  EXPECT_GT(flipped, 1000);  // about half of all hashes: the abs moves them
}

// CoreWorkload: expectednewkeys = (int) (insertproportion x operationcount x 2.0), raw proportion.
TEST(YcsbWorkload, ExpectedNewKeysAsCoreWorkload) {
  WorkloadSpec d = *workload_named("d");
  EXPECT_EQ(expected_new_keys(d, 10000, 2), 2000u);  // 0.05 x 20000 x 2
  WorkloadSpec mix = d;
  mix.read = 3;
  mix.insert = 1;  // not normalized: Java multiplies the proportion as written
  EXPECT_EQ(expected_new_keys(mix, 10, 1), 20u);
  mix.insert = 0.33;
  EXPECT_EQ(expected_new_keys(mix, 10, 1), 6u);  // (int) 6.6
}

TEST(ScrambledZipfian, HottestItemHasYcsbProbability) {
  constexpr uint64_t kItems = 10000;
  constexpr int kDraws = 400000;
  const ScrambledZipfianGenerator gen(0, kItems - 1);
  Random rng(7);
  std::vector<double> seen(kItems, 0);
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = gen.next(rng);
    ASSERT_LT(v, kItems);
    seen[v] += 1;
  }
  const double p0 = 1.0 / kScrambledZeta;  // rank 0 of the 10^10-item zipfian
  const double hottest = seen[gen.item_of_rank(0)] / kDraws;
  // Rank 0's mass, plus what other ranks hash onto the same item (about 1/kItems of the rest).
  EXPECT_GT(hottest, p0 - 5 * sigma(p0, kDraws));
  EXPECT_LT(hottest, p0 + 5 * sigma(p0, kDraws) + 5.0 / kItems);
  EXPECT_EQ(*std::max_element(seen.begin(), seen.end()), seen[gen.item_of_rank(0)]);
  // Scrambled: the hot items are not clustered at the low end of the range.
  double low_half = 0;
  for (uint64_t i = 0; i < kItems / 2; ++i) low_half += seen[i];
  EXPECT_NEAR(low_half / kDraws, 0.5, 0.1);
}

TEST(Uniform, ChiSquareAgainstFlat) {
  constexpr int kBins = 100, kDraws = 200000;
  const UniformGenerator gen(1000, 1000 + kBins - 1);
  Random rng(11);
  std::vector<double> seen(kBins, 0);
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = gen.next(rng);
    ASSERT_GE(v, 1000u);
    ASSERT_LT(v, 1000u + kBins);
    seen[v - 1000] += 1;
  }
  const double expected = static_cast<double>(kDraws) / kBins;
  double chi2 = 0;
  for (double s : seen) chi2 += (s - expected) * (s - expected) / expected;
  EXPECT_LT(chi2, 148.2);  // chi-square, 99 degrees of freedom, p = 0.001
}

TEST(Hotspot, HotSetGetsItsShare) {
  constexpr int kDraws = 200000;
  const HotspotGenerator gen(0, 9999, 0.2, 0.8);
  EXPECT_EQ(gen.hot_items(), 2000u);
  Random rng(5);
  double hot = 0;
  for (int i = 0; i < kDraws; ++i) hot += gen.next(rng) < 2000;
  EXPECT_NEAR(hot / kDraws, 0.8, 5 * sigma(0.8, kDraws));
}

TEST(Latest, NewestRecordIsHottest) {
  constexpr int kDraws = 200000;
  constexpr uint64_t kLast = 4999;
  LatestGenerator gen(kLast);
  Random rng(9);
  double newest = 0;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = gen.next(rng, kLast);
    ASSERT_LE(v, kLast);
    newest += v == kLast;
  }
  const double p = 1.0 / zeta(kLast + 1, 0.99);
  EXPECT_NEAR(newest / kDraws, p, 5 * sigma(p, kDraws));
}

TEST(Ycsb, WorkloadMixesMatchTheirProportions) {
  const KeySpace keys{10000, true};
  for (const char* name : {"a", "b", "c", "d", "e", "f", "write-only"}) {
    auto spec = workload_named(name);
    ASSERT_TRUE(spec.ok()) << name;
    constexpr uint64_t kOps = 50000;
    const auto ops = run_ops(*spec, keys, kOps, 1, 0, 1);
    ASSERT_EQ(ops.size(), kOps);
    double counts[5] = {};
    for (const Op& op : ops) {
      counts[static_cast<int>(op.type)] += 1;
      EXPECT_EQ(op.key, keys.key_of(op.record));
      if (op.type == OpType::scan) {
        EXPECT_GE(op.scan_length, 1u);
        EXPECT_LE(op.scan_length, spec->max_scan_length);
      }
    }
    const double want[5] = {spec->read, spec->update, spec->insert, spec->scan, spec->read_modify_write};
    for (int k = 0; k < 5; ++k)
      EXPECT_NEAR(counts[k] / kOps, want[k], 5 * sigma(want[k], kOps) + 1e-9) << name << " op " << k;
  }
}

TEST(Ycsb, TypesSpreadKeepsEveryOperationAndEachTypesOrder) {
  const KeySpace keys{10000, true};
  for (const char* name : {"a", "b", "c", "d", "e", "f", "write-only", "mix:30/30/20/10/10"}) {
    auto spec = workload_named(name);
    ASSERT_TRUE(spec.ok()) << name;
    constexpr uint64_t kOps = 20000;
    const auto ops = run_ops(*spec, keys, kOps, 7, 0, 1);
    const auto spread = with_types_spread(ops);
    ASSERT_EQ(spread.size(), ops.size()) << name;
    // Each type's subsequence is the original one, operation for operation.
    for (int t = 0; t < 5; ++t) {
      std::vector<uint64_t> before, after;
      for (const Op& op : ops)
        if (static_cast<int>(op.type) == t) before.push_back(op.record * 1000003 + op.scan_length);
      for (const Op& op : spread)
        if (static_cast<int>(op.type) == t) after.push_back(op.record * 1000003 + op.scan_length);
      EXPECT_EQ(before, after) << name << " type " << t;
      // Spread evenly: the first m places hold m x share of the type, within one.
      const double share = static_cast<double>(before.size()) / kOps;
      uint64_t seen = 0;
      for (uint64_t m = 0; m < kOps; ++m) {
        seen += static_cast<int>(spread[m].type) == t;
        ASSERT_LE(std::abs(static_cast<double>(seen) - share * static_cast<double>(m + 1)), 1.0 + 1e-9)
            << name << " type " << t << " at " << m;
      }
    }
  }
  // Two equal types alternate.
  std::vector<Op> two(8);
  for (size_t k = 0; k < two.size(); ++k) two[k].type = k < 4 ? OpType::read : OpType::update;
  const auto alternating = with_types_spread(two);
  for (size_t k = 0; k < alternating.size(); ++k)
    EXPECT_EQ(alternating[k].type, k % 2 == 0 ? OpType::read : OpType::update) << k;
}

TEST(Ycsb, StreamsAreReproduciblePerThreadAndInsertsNeverCollide) {
  const KeySpace keys{1000, true};
  const auto d = *workload_named("d");
  const auto a0 = run_ops(d, keys, 5000, 99, 0, 2), a0again = run_ops(d, keys, 5000, 99, 0, 2);
  const auto a1 = run_ops(d, keys, 5000, 99, 1, 2);
  ASSERT_EQ(a0.size(), a0again.size());
  EXPECT_TRUE(std::equal(a0.begin(), a0.end(), a0again.begin(),
                         [](const Op& x, const Op& y) { return x.type == y.type && x.record == y.record; }));
  std::set<uint64_t> inserted;
  uint64_t newest = keys.records - 1;
  for (const auto* stream : {&a0, &a1})
    for (const Op& op : *stream)
      if (op.type == OpType::insert) {
        EXPECT_GE(op.record, keys.records);
        EXPECT_TRUE(inserted.insert(op.record).second) << "record " << op.record << " inserted twice";
        newest = std::max(newest, op.record);
      }
  EXPECT_LT(newest, records_after_run(d, keys, 5000, 2));
  // A thread reads only records that exist by the time of its read (its own inserts and the loaded ones).
  uint64_t visible = keys.records - 1;
  for (const Op& op : a0) {
    if (op.type == OpType::insert) visible = op.record;
    else EXPECT_LE(op.record, visible);
  }
}

TEST(Ycsb, LoadPhaseCoversEveryRecordOnce) {
  const KeySpace keys{1001, false};
  std::set<uint64_t> seen;
  for (int t = 0; t < 3; ++t)
    for (const Op& op : load_ops(keys, t, 3)) {
      EXPECT_EQ(op.type, OpType::insert);
      EXPECT_EQ(op.key, op.record);  // ordered keys
      EXPECT_TRUE(seen.insert(op.record).second);
    }
  EXPECT_EQ(seen.size(), 1001u);
}

TEST(Ycsb, BadWorkloadsAreClearErrors) {
  EXPECT_FALSE(workload_named("g").ok());
  EXPECT_FALSE(workload_named("mix:50/50").ok());
  EXPECT_FALSE(workload_named("mix:0/0/0/0/0").ok());
  EXPECT_FALSE(workload_named("mix:50/50/0/0/x").ok());
  EXPECT_FALSE(workload_named("mix:150/0/0/0/0").ok());
  auto custom = workload_named("mix:10/20/30/40/0");
  ASSERT_TRUE(custom.ok());
  EXPECT_DOUBLE_EQ(custom->scan, 0.4);
  EXPECT_FALSE(parse_distribution("pareto").ok());
  EXPECT_EQ(*parse_distribution("hotspot"), Distribution::hotspot);
}

}  // namespace
}  // namespace pmlab::workload
