// PMDK's example maps behind the YCSB case's structure interface: each map (built from the sources
// libpmemobj-dev installs) against std::map, across a close and reopen (PMDK's recovery).
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "pmlab/common/hash.hpp"
#include "pmlab/pmdk/maps.hpp"
#include "pmlab/workload/random.hpp"
#include "../support/temp_dir.hpp"

namespace pmlab::pmdk {
namespace {

constexpr uint32_t kValue = 128;

std::vector<std::byte> value_of(uint64_t key, uint64_t version) {
  std::vector<std::byte> v(kValue);
  for (uint32_t i = 0; i < kValue; ++i) v[i] = static_cast<std::byte>((key >> (i % 8)) + version * 13 + i);
  return v;
}

TEST(PmdkMaps, EveryMapMatchesAMapAcrossReopen) {
  if (const std::string why = Map::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  constexpr uint64_t kRecords = 1500;
  for (const std::string& name : Map::names()) {
    SCOPED_TRACE(name);
    pmlab::testing::TempDir dir;
    auto map = Map::create(name, dir.file("map.pool"), Map::pool_bytes_for(kRecords, kValue), kValue);
    ASSERT_TRUE(map.ok()) << map.status().message();
    std::map<uint64_t, uint64_t> model;
    workload::Random rng(5);
    std::vector<std::byte> out(kValue);
    for (uint64_t i = 1; i <= 4000; ++i) {
      const uint64_t key = 1 + fnv1a64_word(rng.next_below(kRecords)) % (1ull << 62);
      const auto v = value_of(key, i);
      switch (rng.next_below(3)) {
        case 0:
          ASSERT_TRUE((*map)->insert(key, 0, v.data()));
          model[key] = i;
          break;
        case 1:
          ASSERT_EQ((*map)->update(key, 0, v.data()), model.contains(key));
          if (model.contains(key)) model[key] = i;
          break;
        default:
          ASSERT_EQ((*map)->read(key, 0, out.data()), model.contains(key));
          if (model.contains(key)) { ASSERT_EQ(out, value_of(key, model[key])); }
      }
    }
    ASSERT_EQ((*map)->count(), model.size());
    ASSERT_TRUE((*map)->reopen().ok());
    ASSERT_TRUE((*map)->check().ok());
    ASSERT_EQ((*map)->count(), model.size());
    for (const auto& [key, version] : model) {
      ASSERT_TRUE((*map)->read(key, 0, out.data()));
      ASSERT_EQ(out, value_of(key, version));
    }
    ASSERT_EQ((*map)->aborts(), 0u);
  }
}

}  // namespace
}  // namespace pmlab::pmdk
