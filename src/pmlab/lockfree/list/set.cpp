#include "pmlab/lockfree/list/set.hpp"

#include "pmlab/common/enum_names.hpp"

namespace pmlab::lockfree {

namespace {
constexpr auto kNames = enum_names<ListDesign>("list design", {{ListDesign::volatile_harris, "volatile"},
                                                               {ListDesign::tlog, "tlog"},
                                                               {ListDesign::logfree, "logfree"},
                                                               {ListDesign::soft, "soft"},
                                                               {ListDesign::linkfree, "linkfree"}});
}  // namespace

const char* to_string(ListDesign d) noexcept { return kNames.name(d); }
std::optional<ListDesign> parse_list_design(std::string_view name) noexcept { return kNames.find(name); }

std::vector<persist::Domain> claimed_domains(ListDesign d) {
  using persist::Domain;
  switch (d) {
    case ListDesign::volatile_harris: return {Domain::none};
    case ListDesign::logfree: return {Domain::eadr};
    default: return {Domain::adr, Domain::eadr};
  }
}

}  // namespace pmlab::lockfree
