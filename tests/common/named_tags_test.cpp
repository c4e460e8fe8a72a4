// NamedTags: a name reaches the tag that carries it, in list order, and no other name reaches anything.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "pmlab/common/named_tags.hpp"

namespace pmlab {
namespace {

struct Red {
  static constexpr const char* kName = "red";
  static constexpr int kCode = 1;
};
struct Green {
  static constexpr const char* kName = "green";
  static constexpr int kCode = 2;
};
struct Blue {
  static constexpr const char* kName = "blue";
  static constexpr int kCode = 3;
};
using Colours = NamedTags<Red, Green, Blue>;

TEST(NamedTags, NamesAreInListOrder) {
  static_assert(Colours::kNames.size() == 3);
  EXPECT_EQ(Colours::kNames[0], "red");
  EXPECT_EQ(Colours::kNames[1], "green");
  EXPECT_EQ(Colours::kNames[2], "blue");
}

TEST(NamedTags, EachNameVisitsItsOwnTag) {
  for (const auto name : Colours::kNames) {
    const int code = Colours::visit(name, "colour", []<class T>(T) { return T::kCode; });
    EXPECT_EQ(Colours::kNames[code - 1], name);
  }
  static_assert(Colours::contains("blue"));
  static_assert(!Colours::contains("Blue"));
  static_assert(!Colours::contains(""));
}

TEST(NamedTags, AnUnknownNameSaysWhatWasLookedFor) {
  try {
    Colours::visit("mauve", "colour", []<class T>(T) { return 0; });
    FAIL() << "mauve was visited";
  } catch (const std::invalid_argument& e) { EXPECT_STREQ(e.what(), "no colour is called 'mauve'"); }
}

TEST(NamedTags, AVisitorMayReturnAReference) {
  int slots[3] = {0, 0, 0};
  int& slot = Colours::visit("green", "colour", [&]<class T>(T) -> int& { return slots[T::kCode - 1]; });
  slot = 7;
  EXPECT_EQ(slots[1], 7);
}

}  // namespace
}  // namespace pmlab
