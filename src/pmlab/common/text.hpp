// Text from outside (paths, header fields, JSON strings, program arguments) made safe for a terminal, for
// JSON and for a shell.
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

// TEXT as one word that a POSIX shell reads back as TEXT: as it is when none of its characters means
// anything to a shell, otherwise in single quotes (a single quote inside written '\''). For the command
// lines pmlab prints for a user to paste, and for values it puts into a user's shell command.
std::string shell_word(std::string_view text);

// COMMAND, shell text, with each PLACEHOLDER replaced by VALUE written so that the shell reads VALUE
// whether the placeholder stands bare, inside single quotes or inside double quotes: users of find and
// xargs write "{}" as often as {}. Quotes opened by $(...) or backquotes are not followed.
std::string shell_substitute(std::string_view command, std::string_view placeholder, std::string_view value);

// Serializes a nlohmann JSON value. Strings that are not valid UTF-8 (paths and header fields come
// from outside) get U+FFFD for their invalid bytes instead of an exception: every JSON pmlab writes
// goes through here.
template <class Json>
std::string json_text(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace pmlab
