// What a ds case's `structure` parameter can name: one of our structures (pmlab/ds/structures.hpp), the
// null structures that time the harness itself, or one of PMDK's example maps (the peers, pmdk/maps.hpp).
// The three are different kinds of contender, told apart here and nowhere else.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmlab::suites::ds {

enum class ContenderKind { structure, harness, pmdk_map };

// The structure that measures the harness itself (ycsb_run.cpp), and the same on the operations with their
// types spread evenly (workload::with_types_spread): the harness without the branch mispredictions of a
// random operation mix, which every structure pays alike.
inline constexpr const char* kNullStructure = "null";
inline constexpr const char* kNullPredictableStructure = "null-predictable";
inline bool is_null_structure(std::string_view s) { return s == kNullStructure || s == kNullPredictableStructure; }

// The structures the suite's targets are stated for, each with PMDK's map it is held against: our
// B+-tree against PMDK's btree and our hashtable against its hashmap_tx (ds.target), and the same two at
// 2 threads (ds.scaling).
inline const std::vector<std::pair<std::string, std::string>> kTargetPairs{{"bptree", "pmdk-btree"},
                                                                           {"hashtable", "pmdk-hashmap-tx"}};
bool is_targeted(std::string_view structure);
// PMDK's map a targeted structure is held against.
std::optional<std::string> pmdk_peer_of(std::string_view structure);

// What `name` stands for; nullopt for a name that is none of them.
std::optional<ContenderKind> contender_kind(std::string_view name);

// Our structures' names for a parameter's choices, the list among them or not (it walks every record per
// lookup), and every contender's (ds.ycsb: ours, the null structures, PMDK's maps).
std::vector<std::string> structure_names(bool with_list);
std::vector<std::string> contender_names(bool with_list);
// The targeted structures' names (kTargetPairs).
std::vector<std::string> targeted_names();

}  // namespace pmlab::suites::ds
