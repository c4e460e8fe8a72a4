// Call sites as the mutation report names them: a position and the class and method a call was made in,
// and the inert reasons' names and descriptions.
#include "pmlab/crash/call_sites.hpp"

#include <gtest/gtest.h>

#include <set>
#include <source_location>
#include <string>

namespace pmlab::crash {
namespace {

enum class Flavour { plain, scoped };

template <Flavour F>
struct Holder {
  std::string method() const { return site_of(std::source_location::current()); }
  std::string in_lambda(int n) const {
    auto call = [&](const Holder& h) { return h.method_name_here(n); };
    return call(*this);
  }
  std::string method_name_here(int) const { return site_of(std::source_location::current()); }
  std::string lambda_site() const {
    return [](int) { return site_of(std::source_location::current()); }(0);
  }
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(CallSites, NameTheClassAndMethodWithoutNamespaces) {
  const std::string site = Holder<Flavour::scoped>{}.method();
  EXPECT_TRUE(ends_with(site, "(Holder<F>::method)")) << site;
  EXPECT_NE(site.find("call_sites_test.cpp:"), std::string::npos) << site;
}

TEST(CallSites, ACallInALambdaIsNamedByTheMethodAroundIt) {
  // GCC names it "pmlab::crash::{anonymous}::Holder<pmlab::crash::<unnamed>::Flavour::scoped>::lambda_site()
  // const::<lambda(int)>": the "::" inside the template arguments must not be taken for a scope.
  const std::string site = Holder<Flavour::scoped>{}.lambda_site();
  EXPECT_NE(site.find(" (Holder<"), std::string::npos) << site;
  EXPECT_TRUE(ends_with(site, "::Flavour::scoped>::lambda_site)")) << site;
  EXPECT_TRUE(ends_with(Holder<Flavour::plain>{}.in_lambda(1), "(Holder<F>::method_name_here)"));
}

TEST(CallSites, EveryInertReasonHasItsOwnNameAndDescription) {
  std::set<std::string> names, descriptions;
  for (size_t i = 0; i < kInertKinds; ++i) {
    const auto reason = static_cast<Inert>(i);
    EXPECT_STRNE(to_string(reason), "?");
    EXPECT_STRNE(describe(reason), "?");
    names.insert(to_string(reason));
    descriptions.insert(describe(reason));
  }
  EXPECT_EQ(names.size(), kInertKinds);
  EXPECT_EQ(descriptions.size(), kInertKinds);
  EXPECT_STREQ(to_string(Inert::below_2_32), "below_2_32");
  EXPECT_STREQ(describe(Inert::nothing_to_order), "a fence with nothing to order");
  EXPECT_STREQ(to_string(static_cast<Inert>(kInertKinds)), "?");
}

}  // namespace
}  // namespace pmlab::crash
