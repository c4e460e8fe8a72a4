#include "pmlab/suites/ds/contenders.hpp"

#include "pmlab/ds/structures.hpp"
#include "pmlab/pmdk/maps.hpp"

namespace pmlab::suites::ds {

bool is_targeted(std::string_view structure) { return pmdk_peer_of(structure).has_value(); }

std::optional<std::string> pmdk_peer_of(std::string_view structure) {
  for (const auto& [ours, peer] : kTargetPairs)
    if (ours == structure) return peer;
  return std::nullopt;
}

std::optional<ContenderKind> contender_kind(std::string_view name) {
  if (pmlab::ds::is_structure(name)) return ContenderKind::structure;
  if (is_null_structure(name)) return ContenderKind::harness;
  if (pmdk::Map::is_pmdk(std::string(name))) return ContenderKind::pmdk_map;
  return std::nullopt;
}

std::vector<std::string> structure_names(bool with_list) {
  std::vector<std::string> names;
  for (const std::string_view s : pmlab::ds::kStructureNames)
    if (with_list || s != pmlab::ds::kListName) names.emplace_back(s);
  return names;
}

std::vector<std::string> contender_names(bool with_list) {
  std::vector<std::string> names = structure_names(with_list);
  names.emplace_back(kNullStructure);
  names.emplace_back(kNullPredictableStructure);
  for (const std::string& m : pmdk::Map::names()) names.push_back(m);
  return names;
}

std::vector<std::string> targeted_names() {
  std::vector<std::string> names;
  for (const auto& pair : kTargetPairs) names.push_back(pair.first);
  return names;
}

}  // namespace pmlab::suites::ds
