#include "pmlab/common/text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace pmlab {
namespace {

// Length of the valid UTF-8 sequence starting TEXT, or 0 when it is not one (overlong forms,
// surrogates and code points above U+10FFFF are invalid).
size_t utf8_sequence(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  return length;
}

}  // namespace

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const size_t comma = text.find(',', from);
    parts.push_back(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) return parts;
    from = comma + 1;
  }
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const unsigned char c = static_cast<unsigned char>(text.front());
    const size_t n = utf8_sequence(text);
    if (n == 1 && c >= 0x20 && c != 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else if (n == 1 && c == '\\') {
      out += "\\\\";
    } else if (n > 1 && !(n == 2 && c == 0xc2 && static_cast<unsigned char>(text[1]) < 0xa0)) {
      out.append(text.data(), n);  // valid UTF-8 other than the C1 control characters
    } else {
      const size_t bytes = n > 1 ? n : 1;
      for (size_t i = 0; i < bytes; ++i) {
        char hex[5];
        std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(text[i]));
        out += hex;
      }
      text.remove_prefix(bytes);
      continue;
    }
    text.remove_prefix(n);
  }
  return out;
}

std::string shell_word(std::string_view text) {
  const auto plain = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_-./:,+@%").find(c) != std::string_view::npos;
  };
  if (!text.empty() && std::all_of(text.begin(), text.end(), plain)) return std::string(text);
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string_view("'\\''") : std::string_view(&c, 1);
  return out + "'";
}

std::string shell_substitute(std::string_view command, std::string_view placeholder, std::string_view value) {
  enum class Quote { none, single, double_ } quote = Quote::none;
  // VALUE as the shell must be given it where `quote` is open: in double quotes \ " $ and ` still act.
  const auto written = [&] {
    if (quote == Quote::none) return shell_word(value);
    std::string out;
    for (char v : value) {
      if (quote == Quote::single && v == '\'') out += "'\\''";
      else if (quote == Quote::double_ && std::string_view("\\\"$`").find(v) != std::string_view::npos)
        out += {'\\', v};
      else out += v;
    }
    return out;
  };
  std::string out;
  for (size_t i = 0; i < command.size();) {
    const char c = command[i];
    if (!placeholder.empty() && command.substr(i).starts_with(placeholder)) {
      out += written();
      i += placeholder.size();
    } else if (c == '\\' && quote != Quote::single && i + 1 < command.size()) {
      out.append(command.substr(i, 2));  // an escaped character opens and closes nothing
      i += 2;
    } else {
      if (c == '\'' && quote != Quote::double_) quote = quote == Quote::single ? Quote::none : Quote::single;
      if (c == '"' && quote != Quote::single) quote = quote == Quote::double_ ? Quote::none : Quote::double_;
      out += c;
      ++i;
    }
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

}  // namespace pmlab
