// The structures by name: the one place a structure's name (a run parameter, a crash subject's label)
// becomes its type. Everything above the ds floor that picks a structure by name goes through
// visit_structure.
#pragma once

#include <string_view>
#include <utility>

#include "pmlab/common/named_tags.hpp"
#include "pmlab/ds/array/array.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ds/list/list.hpp"
#include "pmlab/ds/skiplist/skiplist.hpp"

namespace pmlab::ds {

// A structure template as a value, for a generic lambda:
//   visit_structure(name, [&]<template <class> class S>(StructureTag<S>) { … S<Arena<Durable>> … });
// Its static members are the structure's own, whatever the persistence policy.
template <template <class> class S>
struct StructureTag {
  using Any = S<Arena<Volatile>>;
  static constexpr const char* kName = Any::kName;
  static constexpr const char* kLocking = Any::kLocking;
  static constexpr bool kDenseKeysOnly = Any::kDenseKeysOnly;
};

// The structures in the order the benchmarks sweep them. The list walks every record per lookup: it is
// kept for small record counts and left out of the sweeps that need a general structure.
using Structures = NamedTags<StructureTag<Array>, StructureTag<Hashtable>, StructureTag<Skiplist>, StructureTag<BPTree>,
                             StructureTag<List>>;
inline constexpr auto kStructureNames = Structures::kNames;
inline constexpr std::string_view kListName = StructureTag<List>::kName;

constexpr bool is_structure(std::string_view name) noexcept { return Structures::contains(name); }

// Calls f(StructureTag<S>{}) for the structure called `name` and returns what it returns (the same type
// for every structure). A name outside kStructureNames is a caller's error: parameters are checked
// against the names before a run, so it throws std::invalid_argument.
template <class F>
decltype(auto) visit_structure(std::string_view name, F&& f) {
  return Structures::visit(name, "structure", std::forward<F>(f));
}

}  // namespace pmlab::ds
