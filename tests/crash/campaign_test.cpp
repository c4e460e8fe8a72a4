#include "pmlab/crash/campaign.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace pmlab::crash {
namespace {

std::vector<std::string> names_of(const std::vector<const SubjectInfo*>& designs) {
  std::vector<std::string> out;
  for (const SubjectInfo* d : designs) out.push_back(d->name);
  return out;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(CrashCampaign, AFamilyLeavesItsBrokenVariantsOutUnlessAsked) {
  auto family = choose_designs({"selftest"}, false);
  ASSERT_TRUE(family.ok()) << family.status().message();
  const auto names = names_of(*family);
  EXPECT_TRUE(has(names, "selftest.commit-record"));
  EXPECT_FALSE(has(names, "selftest.broken.missing-fence"));
  for (const std::string& name : names) EXPECT_EQ(name.rfind("selftest.", 0), 0u) << name;

  auto with_broken = choose_designs({"selftest"}, true);
  ASSERT_TRUE(with_broken.ok());
  EXPECT_TRUE(has(names_of(*with_broken), "selftest.broken.missing-fence"));
  auto by_name = choose_designs({"selftest.broken.missing-fence", "selftest.broken.missing-fence"}, false);
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(names_of(*by_name), std::vector<std::string>{"selftest.broken.missing-fence"});  // once each
}

TEST(CrashCampaign, ANameThatSelectsNothingIsAnError) {
  auto none = choose_designs({"selftest.commit-record", "no.such"}, false);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("'no.such'"), std::string::npos);
  EXPECT_FALSE(choose_designs({"selftes"}, false).ok());  // a family is a whole name before a dot
}

TEST(CrashCampaign, RunsEveryDomainAndGranularityAndCountsFailures) {
  auto designs = choose_designs({"selftest.broken.missing-fence"}, false);
  ASSERT_TRUE(designs.ok());
  CampaignOptions options;
  options.base.budget = 100;
  options.base.subject.ops = 6;
  options.domains = std::vector<persist::Domain>{persist::Domain::adr};
  options.granularities = {Granularity::line, Granularity::word};
  std::vector<std::string> started;
  uint64_t failures_heard = 0;
  CampaignObserver observer;
  observer.simulating = [&](const SubjectInfo& d, const SimOptions& run) {
    started.push_back(d.name + "/" + to_string(run.granularity));
  };
  observer.simulated = [&](const SubjectInfo&, const SimOptions&, const Result<SimReport>& r) {
    ASSERT_TRUE(r.ok());
    failures_heard += r->failures;
  };
  auto summary = run_campaign(*designs, options, observer);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(started,
            (std::vector<std::string>{"selftest.broken.missing-fence/line", "selftest.broken.missing-fence/word"}));
  EXPECT_EQ(summary->runs, 2u);
  EXPECT_GT(summary->failures, 0u);
  EXPECT_EQ(summary->failures, failures_heard);
}

TEST(CrashCampaign, AReplayOfNoStateOrOfManyDesignsIsRefused) {
  CampaignOptions options;
  options.base.subject.ops = 4;
  options.granularities = {Granularity::line};
  options.domains = std::vector<persist::Domain>{persist::Domain::adr};
  options.base.replay = std::make_pair(uint64_t{100000}, uint64_t{0});
  auto one = choose_designs({"selftest.commit-record"}, false);
  ASSERT_TRUE(one.ok());
  auto nothing = run_campaign(*one, options, {});
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("names no crash state"), std::string::npos);
  auto two = choose_designs({"selftest.commit-record", "selftest.scan-log"}, false);
  ASSERT_TRUE(two.ok());
  auto many = run_campaign(*two, options, {});
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("exactly one"), std::string::npos);
}

}  // namespace
}  // namespace pmlab::crash
