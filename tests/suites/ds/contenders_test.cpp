// The ds suite's contenders (suites/ds/contenders.hpp): each name is one kind, the targeted structures have
// PMDK's peer, and the sweeps' name lists come from the structure table.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "pmlab/ds/structures.hpp"
#include "pmlab/pmdk/maps.hpp"
#include "pmlab/suites/ds/contenders.hpp"

namespace pmlab::suites::ds {
namespace {

TEST(Contenders, EveryNameHasOneKind) {
  EXPECT_EQ(contender_kind("hashtable"), ContenderKind::structure);
  EXPECT_EQ(contender_kind("list"), ContenderKind::structure);
  EXPECT_EQ(contender_kind(kNullStructure), ContenderKind::harness);
  EXPECT_EQ(contender_kind(kNullPredictableStructure), ContenderKind::harness);
  EXPECT_EQ(contender_kind("pmdk-btree"), ContenderKind::pmdk_map);
  EXPECT_EQ(contender_kind("btree"), std::nullopt);
  for (const std::string& name : contender_names(true)) EXPECT_TRUE(contender_kind(name).has_value()) << name;
  EXPECT_EQ(contender_names(true).size(), pmlab::ds::kStructureNames.size() + 2 + pmdk::Map::names().size());
}

TEST(Contenders, TheListIsLeftOutOnRequest) {
  const auto with = structure_names(true), without = structure_names(false);
  EXPECT_EQ(with.size(), without.size() + 1);
  EXPECT_NE(std::find(with.begin(), with.end(), "list"), with.end());
  EXPECT_EQ(std::find(without.begin(), without.end(), "list"), without.end());
}

TEST(Contenders, TargetedStructuresHaveTheirPeer) {
  EXPECT_EQ(pmdk_peer_of("bptree"), "pmdk-btree");
  EXPECT_EQ(pmdk_peer_of("hashtable"), "pmdk-hashmap-tx");
  EXPECT_EQ(pmdk_peer_of("skiplist"), std::nullopt);
  for (const std::string& s : targeted_names()) {
    EXPECT_TRUE(is_targeted(s));
    EXPECT_EQ(contender_kind(s), ContenderKind::structure);
    EXPECT_EQ(contender_kind(*pmdk_peer_of(s)), ContenderKind::pmdk_map);
  }
}

}  // namespace
}  // namespace pmlab::suites::ds
