// Every persistent design registered in pmlab, under every domain it claims and every granularity,
// survives a bounded crash test with its recovery crash-tested too. One test each, so each is timed and
// reported on its own; the full-budget exploration is a benchmark (`pmlab crash all`), not a test.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "pmlab/crash/corpus/history.hpp"
#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crash/simulator.hpp"

namespace pmlab::crash {
namespace {

struct Case {
  std::string design;
  persist::Domain domain;
  Granularity granularity;
};

// How GoogleTest (and ctest's list of tests) shows a case: its design, domain and granularity, not its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.design << " " << persist::to_string(c.domain) << "/" << to_string(c.granularity);
}

std::vector<Case> every_case() {
  std::vector<Case> out;
  for (const SubjectInfo& info : SubjectRegistry::instance().all()) {
    if (info.deliberately_broken) continue;
    for (persist::Domain d : info.domains)
      for (Granularity g : {Granularity::line, Granularity::word, Granularity::byte}) out.push_back({info.name, d, g});
  }
  return out;
}

class EveryDesign : public testing::TestWithParam<Case> {};

TEST_P(EveryDesign, SurvivesSimulatedPowerFailures) {
  const Case& c = GetParam();
  const SubjectInfo* info = SubjectRegistry::instance().find(c.design);
  ASSERT_NE(info, nullptr);
  SimOptions o;
  o.domain = c.domain;
  o.granularity = c.granularity;
  o.budget = 300;
  o.subject.ops = 16;
  o.recovery_budget = 2;  // recovery crash-tested on one state in four, two crash states per recovery point
  o.recovery_every = 4;
  auto r = simulate(*info, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->failures, 0u) << (r->details.empty() ? ""
                                                    : r->details[0].property + " at " + r->details[0].site +
                                                          " replay " + r->details[0].replay());
  EXPECT_GT(r->states_checked, 0u);
}

std::string name_of(const testing::TestParamInfo<Case>& p) {
  std::string n = p.param.design + "_" + persist::to_string(p.param.domain) + "_" + to_string(p.param.granularity);
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Registered, EveryDesign, testing::ValuesIn(every_case()), name_of);

TEST(EveryDesign, CoversTheRegisteredFamilies) {
  std::vector<std::string> families;
  for (const Case& c : every_case()) {
    const std::string family = c.design.substr(0, c.design.find('.'));
    if (families.empty() || families.back() != family) families.push_back(family);
  }
  for (const char* f : {"selftest", "corpus", "ds", "lockfree", "log", "page", "ptm"})
    EXPECT_NE(std::find(families.begin(), families.end(), f), families.end()) << f;
}

// A catalog row whose design file is missing from the build would vanish from `all` without a word.
TEST(EveryDesign, RegistersEveryCatalogRowWithItsTwinsAndTheirDomains) {
  const SubjectRegistry& registry = SubjectRegistry::instance();
  auto expect_family = [&](const std::string& family, const std::vector<selftest::DesignText>& catalog,
                           bool twin_named_after_design) {
    for (const selftest::DesignText& row : catalog) {
      const SubjectInfo* design = registry.find(family + "." + row.name);
      ASSERT_NE(design, nullptr) << row.name;
      EXPECT_FALSE(design->deliberately_broken) << row.name;
      for (const selftest::TwinText& twin : row.twins) {
        const std::string name =
            family + ".broken." + (twin_named_after_design ? row.name + "-" : std::string{}) + twin.name;
        const SubjectInfo* broken = registry.find(name);
        ASSERT_NE(broken, nullptr) << name;
        EXPECT_TRUE(broken->deliberately_broken) << name;
        EXPECT_EQ(broken->domains, twin.domains) << name;
        EXPECT_EQ(broken->description, twin.description) << name;
      }
    }
  };
  expect_family("selftest", selftest::selftest_catalog(), false);
  expect_family("corpus", corpus::corpus_catalog(), true);
}

}  // namespace
}  // namespace pmlab::crash
