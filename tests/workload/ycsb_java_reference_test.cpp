// pmlab's YCSB generator against Java YCSB 0.17's algorithms: the operation mix and the hot-set shares
// (the share of key-choosing operations that go to the 1, 1000 and 10000 most requested keys) of every
// core workload, a zipfian D and an insert mix, over 100,000 records and 500,000 operations, averaged over
// seeds 1-4. The reference values come from scripts/ycsb_java_reference.py, an independent Python port of
// Java's ZipfianGenerator, ScrambledZipfianGenerator, SkewedLatestGenerator and CoreWorkload key choice:
//     python3 scripts/ycsb_java_reference.py 100000 500000 --seeds 4
// Both sides sample, so a share agrees within 2% (and within 0.0005 absolute for D's tiny top-1 share,
// whose sampling spread across seeds is ~12%).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "pmlab/workload/ycsb.hpp"

namespace pmlab::workload {
namespace {

constexpr uint64_t kRecords = 100000;
constexpr uint64_t kOps = 500000;
constexpr int kSeeds = 4;

struct Reference {
  const char* workload;
  std::array<double, 5> mix;     // read, update, insert, scan, read-modify-write
  std::array<double, 3> shares;  // top 1, top 1000, top 10000
};

// Output of scripts/ycsb_java_reference.py (see above).
constexpr Reference kJava[] = {
    {"a", {0.5, 0.5, 0, 0, 0}, {0.03767, 0.30517, 0.47483}},
    {"b", {0.95, 0.05, 0, 0, 0}, {0.03767, 0.30517, 0.47483}},
    {"c", {1, 0, 0, 0, 0}, {0.03767, 0.30517, 0.47483}},
    {"d", {0.9498, 0, 0.0502, 0, 0}, {0.00009, 0.05439, 0.40833}},
    {"e", {0, 0, 0.0499, 0.9501, 0}, {0.04942, 0.33153, 0.49361}},
    {"f", {0.5, 0, 0, 0, 0.5}, {0.03767, 0.30517, 0.47483}},
    {"d-zipfian", {0.9499, 0, 0.0501, 0, 0}, {0.04944, 0.33132, 0.49339}},
    {"insert-mix", {0.5002, 0, 0.4998, 0, 0}, {0.04869, 0.31290, 0.46431}},
};

WorkloadSpec spec_of(const std::string& name) {
  if (name == "d-zipfian") {
    WorkloadSpec w = *workload_named("d");
    w.distribution = Distribution::zipfian;
    return w;
  }
  if (name == "insert-mix") return *workload_named("mix:50/0/50/0/0");
  return *workload_named(name);
}

TEST(YcsbJavaReference, MixAndHotSetSharesMatchJavaYcsb) {
  for (const Reference& ref : kJava) {
    SCOPED_TRACE(ref.workload);
    const WorkloadSpec w = spec_of(ref.workload);
    std::array<double, 5> mix{};
    std::array<double, 3> shares{};
    for (int seed = 1; seed <= kSeeds; ++seed) {
      const std::vector<Op> ops = run_ops(w, KeySpace{kRecords, true}, kOps, static_cast<uint64_t>(seed), 0, 1);
      std::unordered_map<uint64_t, uint64_t> hits;
      uint64_t chosen = 0;
      for (const Op& op : ops) {
        mix[static_cast<size_t>(op.type)] += 1.0 / (kOps * kSeeds);
        if (op.type == OpType::insert) continue;
        ++hits[op.record];
        ++chosen;
      }
      std::vector<uint64_t> counts;
      counts.reserve(hits.size());
      for (const auto& [record, n] : hits) counts.push_back(n);
      std::sort(counts.rbegin(), counts.rend());
      size_t i = 0;
      uint64_t sum = 0;
      for (size_t k = 0; k < 3; ++k) {
        const size_t top = std::array<size_t, 3>{1, 1000, 10000}[k];
        for (; i < top && i < counts.size(); ++i) sum += counts[i];
        shares[k] += static_cast<double>(sum) / static_cast<double>(chosen) / kSeeds;
      }
    }
    for (size_t k = 0; k < 5; ++k) EXPECT_NEAR(mix[k], ref.mix[k], 0.005) << "operation " << k;
    for (size_t k = 0; k < 3; ++k)
      EXPECT_NEAR(shares[k], ref.shares[k], 0.02 * ref.shares[k] + 0.0005) << "top "
                                                                           << (k == 0   ? 1
                                                                               : k == 1 ? 1000
                                                                                        : 10000);
  }
}

}  // namespace
}  // namespace pmlab::workload
