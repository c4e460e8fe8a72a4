#include "pmlab/common/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace pmlab {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<int64_t> parse_int(std::string_view text) {
  text = trim(text);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return error(Errc::invalid_argument, "'" + std::string(text) + "' is not an integer");
  return value;
}

Result<uint64_t> parse_size(std::string_view text) {
  std::string_view t = trim(text);
  size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  if (digits == 0) return error(Errc::invalid_argument, "'" + std::string(text) + "' is not a size (e.g. 64, 4K, 1G)");
  uint64_t number = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + digits, number);
  if (ec != std::errc() || end != t.data() + digits)
    return error(Errc::invalid_argument, "'" + std::string(text) + "' is too large");
  std::string suffix = lower(trim(t.substr(digits)));
  int shift = 0;
  if (suffix.empty() || suffix == "b") shift = 0;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib") shift = 10;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib") shift = 20;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib") shift = 30;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib") shift = 40;
  else return error(Errc::invalid_argument, "'" + std::string(text) + "': unknown size unit '" + suffix + "' (use K, M, G, T)");
  if (shift > 0 && number > (std::numeric_limits<uint64_t>::max() >> shift))
    return error(Errc::invalid_argument, "'" + std::string(text) + "' is too large");
  return number << shift;
}

std::string format_size(uint64_t bytes) {
  static const char* units[] = {"", "K", "M", "G", "T"};
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + units[unit];
}

Result<double> parse_seconds(std::string_view text) {
  std::string t = lower(trim(text));
  double scale = 1.0;
  auto strip = [&](std::string_view suffix, double s) {
    if (t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0) {
      t.resize(t.size() - suffix.size());
      scale = s;
      return true;
    }
    return false;
  };
  strip("ms", 1e-3) || strip("us", 1e-6) || strip("ns", 1e-9) || strip("s", 1.0);
  double value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty() || !std::isfinite(value) || value < 0)
    return error(Errc::invalid_argument, "'" + std::string(text) + "' is not a duration (e.g. 1s, 250ms)");
  return value * scale;
}

uint64_t fnv1a64(const void* data, size_t len, uint64_t seed) noexcept {
  auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < len; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace pmlab
