// The structure table (ds/structures.hpp): every name reaches the type that carries it, and nothing else.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "pmlab/ds/structures.hpp"

namespace pmlab::ds {
namespace {

TEST(StructureTable, EveryNameVisitsTheTypeOfThatName) {
  std::set<std::string> seen;
  for (const std::string_view name : kStructureNames) {
    const std::string visited = visit_structure(
        name, []<template <class> class S>(StructureTag<S>) { return std::string(S<Arena<Durable>>::kName); });
    EXPECT_EQ(visited, name);
    seen.insert(visited);
  }
  EXPECT_EQ(seen.size(), kStructureNames.size());
  EXPECT_TRUE(is_structure("bptree"));
  EXPECT_FALSE(is_structure("pmdk-btree"));
  EXPECT_FALSE(is_structure(""));
}

TEST(StructureTable, AnUnknownNameIsRefused) {
  EXPECT_THROW(visit_structure("btree", []<template <class> class S>(StructureTag<S>) { return 0; }),
               std::invalid_argument);
}

TEST(StructureTable, OnlyTheArrayIsADenseKeyIndex) {
  for (const std::string_view name : kStructureNames)
    EXPECT_EQ(visit_structure(
                  name, []<template <class> class S>(StructureTag<S>) { return StructureTag<S>::kDenseKeysOnly; }),
              name == "array")
        << name;
}

}  // namespace
}  // namespace pmlab::ds
