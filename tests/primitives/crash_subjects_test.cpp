// Every log writer and page flusher is registered as a crash subject. EveryDesign.SurvivesSimulatedPowerFailures
// (tests/crash) runs all registered subjects under every domain and granularity; here each gets a short
// run at word granularity, where torn lines split a protocol's steps most finely.
#include <gtest/gtest.h>

#include "pmlab/crash/simulator.hpp"

namespace pmlab::crash {
namespace {

const char* const kSubjects[] = {"log.classic",       "log.classic-padded", "log.header",
                                 "log.header-padded", "log.header-dancing", "log.header-dancing-padded",
                                 "log.zero",          "log.zero-padded",    "page.cow",
                                 "page.ulog",         "page.hybrid"};

class PrimitiveSubject : public ::testing::TestWithParam<const char*> {};

std::string label(const ::testing::TestParamInfo<const char*>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (c == '-' || c == '.') c = '_';
  return name;
}

TEST_P(PrimitiveSubject, SurvivesEveryCheckedCrashState) {
  const SubjectInfo* info = SubjectRegistry::instance().find(GetParam());
  ASSERT_NE(info, nullptr) << GetParam() << " is not registered";
  struct Mode {
    persist::Domain domain;
    Granularity granularity;
  };
  EXPECT_FALSE(info->description.empty());
  EXPECT_FALSE(info->deliberately_broken);
  for (const Mode m : {Mode{persist::Domain::adr, Granularity::word}}) {
    SimOptions o;
    o.domain = m.domain;
    o.granularity = m.granularity;
    o.budget = 150;
    o.subject.ops = 12;
    auto report = simulate(*info, o);
    ASSERT_TRUE(report.ok()) << report.status().message();
    EXPECT_GT(report->states_checked, 0u);
    EXPECT_EQ(report->failures, 0u) << GetParam() << " " << to_string(m.granularity) << ": "
                                    << (report->details.empty()
                                            ? std::string()
                                            : report->details[0].site + " " + report->details[0].property);
  }
}

INSTANTIATE_TEST_SUITE_P(Primitives, PrimitiveSubject, ::testing::ValuesIn(kSubjects), label);

}  // namespace
}  // namespace pmlab::crash
