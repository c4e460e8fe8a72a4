#include "pmlab/common/enum_names.hpp"

#include <gtest/gtest.h>

namespace pmlab {
namespace {

enum class Colour { red, green, light_blue, unnamed };

constexpr auto kColours =
    enum_names<Colour>("colour", {{Colour::red, "red"}, {Colour::green, "green"}, {Colour::light_blue, "light-blue"}});

static_assert(std::string_view(kColours.name(Colour::light_blue)) == "light-blue");
static_assert(kColours.entries().size() == 3);

TEST(EnumNames, NamesAndParsesEveryEntry) {
  for (const auto& e : kColours.entries()) {
    auto parsed = kColours.parse(kColours.name(e.value));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, e.value);
  }
  EXPECT_EQ(kColours.find("green"), Colour::green);
}

TEST(EnumNames, AValueOutsideTheTableIsAQuestionMark) { EXPECT_STREQ(kColours.name(Colour::unnamed), "?"); }

TEST(EnumNames, RefusesOtherTextNamingTheValidNames) {
  EXPECT_FALSE(kColours.find("Red").has_value());
  EXPECT_FALSE(kColours.find("").has_value());
  auto bad = kColours.parse("blue");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Errc::invalid_argument);
  EXPECT_EQ(bad.status().message(), "unknown colour 'blue' (red, green, light-blue)");
}

}  // namespace
}  // namespace pmlab
