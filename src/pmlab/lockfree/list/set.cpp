#include "pmlab/lockfree/list/set.hpp"

namespace pmlab::lockfree {

const char* to_string(ListDesign d) noexcept {
  switch (d) {
    case ListDesign::volatile_harris: return "volatile";
    case ListDesign::tlog: return "tlog";
    case ListDesign::logfree: return "logfree";
    case ListDesign::soft: return "soft";
    case ListDesign::linkfree: return "linkfree";
  }
  return "?";
}

std::optional<ListDesign> parse_list_design(std::string_view name) noexcept {
  for (ListDesign d : kListDesigns)
    if (name == to_string(d)) return d;
  return std::nullopt;
}

std::vector<persist::Domain> claimed_domains(ListDesign d) {
  using persist::Domain;
  switch (d) {
    case ListDesign::volatile_harris: return {Domain::none};
    case ListDesign::logfree: return {Domain::eadr};
    default: return {Domain::adr, Domain::eadr};
  }
}

}  // namespace pmlab::lockfree
