#include "pmlab/crash/failure_groups.hpp"

#include <cctype>
#include <unordered_map>

namespace pmlab::crash {

namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::string numbers_masked(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (!is_digit(text[i])) {
      out += text[i++];
      continue;
    }
    const bool hex = text[i] == '0' && i + 2 < text.size() && (text[i + 1] == 'x' || text[i + 1] == 'X') &&
                     is_hex_digit(text[i + 2]);
    i += hex ? 2 : 0;
    while (i < text.size() && (hex ? is_hex_digit(text[i]) : is_digit(text[i]))) ++i;
    out += '#';
  }
  return out;
}

std::vector<std::vector<size_t>> group_alike(const std::vector<uint64_t>& keys) {
  std::vector<std::vector<size_t>> groups;
  std::unordered_map<uint64_t, size_t> group_of;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto [it, fresh] = group_of.emplace(keys[i], groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

}  // namespace pmlab::crash
