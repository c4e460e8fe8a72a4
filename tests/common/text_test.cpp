#include "pmlab/common/text.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/common/units.hpp"

namespace pmlab {
namespace {

TEST(Printable, EscapesControlCharactersAndInvalidUtf8) {
  EXPECT_EQ(printable("bench"), "bench");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable("line\nnext\r"), "line\\x0anext\\x0d");
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xc2\x9b"), "\\xc2\\x9b");           // C1 control (CSI)
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");           // truncated sequence
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(printable("a\\b"), "a\\\\b");
}

// What /bin/sh makes of COMMAND: its standard output, run through `printf '%s'` by the command itself.
std::string shell_output(const std::string& command) {
  FILE* sh = ::popen(command.c_str(), "r");
  if (sh == nullptr) return "(popen failed)";
  std::string out;
  char buf[256];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, sh)) > 0;) out.append(buf, n);
  ::pclose(sh);
  return out;
}

const std::vector<std::string> kAwkwardValues = {
    "plain",     "a b",        "it's", "say \"hi\"", "$HOME", "`id`", "$(id)", "back\\slash", "*",
    "tab\there", "line\nnext", "'",    "\"",         "",      "--",   "~user", "a;b&c|d",     "{}"};

TEST(ShellWord, TheShellReadsTheWordBackAsTheText) {
  EXPECT_EQ(shell_word("/dev/shm/pool-1.pmem"), "/dev/shm/pool-1.pmem");  // nothing to quote
  EXPECT_EQ(shell_word("a b"), "'a b'");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_word(""), "''");
  for (const std::string& v : kAwkwardValues)
    EXPECT_EQ(shell_output("printf '%s' " + shell_word(v)), v) << shell_word(v);
}

// A placeholder bare, in single quotes and in double quotes, beside quotes and escapes of the command's own.
TEST(ShellSubstitute, TheShellReadsTheValueWhereverThePlaceholderStands) {
  for (const std::string& v : kAwkwardValues) {
    EXPECT_EQ(shell_output(shell_substitute("printf '%s' {}", "{}", v)), v);
    EXPECT_EQ(shell_output(shell_substitute("printf '%s' \"{}\"", "{}", v)), v);
    EXPECT_EQ(shell_output(shell_substitute("printf '%s' '{}'", "{}", v)), v);
    EXPECT_EQ(shell_output(shell_substitute("printf '%s' \"<{}>\" x'{}'y", "{}", v)), "<" + v + ">x" + v + "y");
    EXPECT_EQ(shell_output(shell_substitute("printf '%s' \"it\\\"s {}\" \\'{}", "{}", v)), "it\"s " + v + "'" + v);
  }
  EXPECT_EQ(shell_substitute("check", "{}", "x"), "check");
  EXPECT_EQ(shell_substitute("check {", "{}", "x"), "check {");
}

TEST(JsonText, NeverThrowsOnInvalidUtf8) {
  nlohmann::ordered_json j = {{"path", std::string("/tmp/\xff\xfe.pool")}};
  std::string text;
  ASSERT_NO_THROW(text = json_text(j, 1));
  EXPECT_NE(text.find("/tmp/\xef\xbf\xbd"), std::string::npos);  // U+FFFD for the invalid bytes
  EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded());
}

TEST(StrictNumbers, CountsRejectSignsOverflowAndJunk) {
  EXPECT_EQ(*parse_count("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(*parse_count("7", 1, 10), 7u);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "0x10", "1e3", "abc", "18446744073709551616", "1.0"})
    EXPECT_EQ(parse_count(bad).status().code(), Errc::invalid_argument) << bad;
  EXPECT_EQ(parse_count("0", 1).status().code(), Errc::invalid_argument);
  EXPECT_NE(parse_count("18446744073709551616").status().message().find("out of range"), std::string::npos);
}

TEST(StrictNumbers, RealsRejectNanInfinityAndRange) {
  EXPECT_DOUBLE_EQ(*parse_real("0.25", 0, 1), 0.25);
  EXPECT_DOUBLE_EQ(*parse_real("1e2", 0, 1000), 100.0);
  for (const char* bad : {"", "nan", "NaN", "inf", "-inf", "infinity", "-1", "2", "1e400", "0x1p3", "1,5", "abc"})
    EXPECT_EQ(parse_real(bad, 0, 1).status().code(), Errc::invalid_argument) << bad;
}

}  // namespace
}  // namespace pmlab
