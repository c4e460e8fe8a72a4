// Text from outside (paths, header fields, JSON strings) made safe for a terminal and for JSON.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pmlab {

// TEXT with every control character and every byte that is not part of valid UTF-8 written as \xNN
// (and the backslash as \\), so a crafted name can neither move the cursor nor garble the line.
std::string printable(std::string_view text);

// TEXT without the white space (spaces, tabs, CR, LF) at either end.
std::string_view trim(std::string_view text);

// The parts of TEXT between the commas ("line,word" -> line, word); empty parts are kept.
std::vector<std::string> split_commas(const std::string& text);

// V with `digits` digits after the point ("%.*f"), for numbers quoted in notes and messages.
std::string fixed(double v, int digits);

// Serializes a nlohmann JSON value. Strings that are not valid UTF-8 (paths and header fields come
// from outside) get U+FFFD for their invalid bytes instead of an exception: every JSON pmlab writes
// goes through here.
template <class Json>
std::string json_text(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace pmlab
