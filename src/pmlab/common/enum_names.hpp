// An enum's names in text, kept in one table per enum: printing and parsing read the same entries, so a
// value cannot print as one name and parse from another, and a parse error lists every name it accepts.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"

namespace pmlab {

template <class E>
struct EnumName {
  E value{};
  const char* name = "";
};

template <class E, size_t N>
class EnumNames {
 public:
  // `what` names the enum in an error ("unknown <what> 'x' (a, b, c)").
  constexpr EnumNames(const char* what, const EnumName<E> (&entries)[N]) : what_(what) {
    for (size_t i = 0; i < N; ++i) entries_[i] = entries[i];
  }

  // The value's name, or "?" for a value outside the table (a corrupt or future enumerator).
  constexpr const char* name(E value) const noexcept {
    for (const auto& e : entries_)
      if (e.value == value) return e.name;
    return "?";
  }

  constexpr std::optional<E> find(std::string_view text) const noexcept {
    for (const auto& e : entries_)
      if (text == e.name) return e.value;
    return std::nullopt;
  }

  Result<E> parse(std::string_view text) const {
    if (auto value = find(text)) return *value;
    return error(Errc::invalid_argument,
                 "unknown " + std::string(what_) + " '" + std::string(text) + "' (" + list() + ")");
  }

  // Every name, in table order, separated by ", ".
  std::string list() const {
    std::string out;
    for (const auto& e : entries_) out += (out.empty() ? "" : ", ") + std::string(e.name);
    return out;
  }

  constexpr const std::array<EnumName<E>, N>& entries() const noexcept { return entries_; }

 private:
  const char* what_;
  std::array<EnumName<E>, N> entries_{};
};

// enum_names<Domain>("durability domain", {{Domain::none, "none"}, …}): the table's length is counted for us.
template <class E, size_t N>
constexpr EnumNames<E, N> enum_names(const char* what, const EnumName<E> (&entries)[N]) {
  return EnumNames<E, N>(what, entries);
}

}  // namespace pmlab
