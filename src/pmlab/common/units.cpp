#include "pmlab/common/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "pmlab/common/text.hpp"

namespace pmlab {
namespace {

// The shortest text that reads back as V ("0", "0.5", "1e+06").
std::string format_real(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
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

Result<uint64_t> parse_count(std::string_view text, uint64_t min, uint64_t max) {
  const std::string range = max == UINT64_MAX ? "an integer >= " + std::to_string(min)
                                              : "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (text.empty()) return error(Errc::invalid_argument, "an empty value is not " + range);
  const bool digits_only = std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits_only) return error(Errc::invalid_argument, "'" + std::string(text) + "' is not " + range);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && (value < min || value > max)))
    return error(Errc::invalid_argument, "'" + std::string(text) + "' is out of range: expected " + range);
  if (ec != std::errc() || end != text.data() + text.size())
    return error(Errc::invalid_argument, "'" + std::string(text) + "' is not " + range);
  return value;
}

Result<double> parse_real(std::string_view text, double min, double max) {
  const std::string range = "a number from " + format_real(min) + " to " + format_real(max);
  if (text.empty()) return error(Errc::invalid_argument, "an empty value is not " + range);
  // from_chars also takes "nan", "inf" and hex digits after a 0x-less prefix: allow only a plain decimal.
  const bool decimal = std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
  });
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (!decimal || ec == std::errc::invalid_argument || end != text.data() + text.size())
    return error(Errc::invalid_argument, "'" + std::string(text) + "' is not " + range);
  if (ec == std::errc::result_out_of_range || !std::isfinite(value) || value < min || value > max)
    return error(Errc::invalid_argument, "'" + std::string(text) + "' is out of range: expected " + range);
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
  else
    return error(Errc::invalid_argument,
                 "'" + std::string(text) + "': unknown size unit '" + suffix + "' (use K, M, G, T)");
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

std::string hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace pmlab
