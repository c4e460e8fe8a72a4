// A closed list of types picked by name: each Tag has a static `kName`, and a name from a run's
// parameters becomes the tag whose kName it is. The structure and workload catalogs are such lists; this
// is their one lookup, so a catalog only lists its members.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace pmlab {

template <class... Tags>
struct NamedTags {
  static_assert(sizeof...(Tags) > 0);

  // The names in the order of the list.
  static constexpr std::array<std::string_view, sizeof...(Tags)> kNames{Tags::kName...};

  static constexpr bool contains(std::string_view name) noexcept { return ((name == Tags::kName) || ...); }

  // Calls f(Tag{}) for the tag called `name` and returns what it returns (the same type for every tag). A
  // name outside the list is a caller's error (names are checked before a run): std::invalid_argument,
  // "no <what> is called '<name>'".
  template <class F>
  static decltype(auto) visit(std::string_view name, const char* what, F&& f) {
    return visit_from<F, Tags...>(name, what, std::forward<F>(f));
  }

 private:
  template <class F, class First, class... Rest>
  static decltype(auto) visit_from(std::string_view name, const char* what, F&& f) {
    if (name == First::kName) return f(First{});
    if constexpr (sizeof...(Rest) == 0)
      throw std::invalid_argument("no " + std::string(what) + " is called '" + std::string(name) + "'");
    else return visit_from<F, Rest...>(name, what, std::forward<F>(f));
  }
};

}  // namespace pmlab
