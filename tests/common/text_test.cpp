#include "pmlab/common/text.hpp"

#include <gtest/gtest.h>

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
