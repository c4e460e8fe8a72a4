#include <gtest/gtest.h>

#include <string>

#include "pmlab/crash/simulator.hpp"
#include "pmlab/persist/config.hpp"

namespace pmlab::ptm {
namespace {

// --- crash tests ---------------------------------------------------------------------------------

crash::SimReport simulate(const std::string& name, persist::Domain d, crash::Granularity g) {
  const crash::SubjectInfo* info = crash::SubjectRegistry::instance().find(name);
  EXPECT_NE(info, nullptr) << name;
  if (info == nullptr) return {};
  crash::SimOptions o;
  o.domain = d;
  o.granularity = g;
  o.budget = 400;
  o.subject.ops = 12;
  auto r = crash::simulate(*info, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : crash::SimReport{};
}

TEST(PtmCrash, EveryPtmSubjectSurvivesEveryDomainAndGranularity) {
  for (const char* name : {"ptm.undo", "ptm.redo", "ptm.redo-one-slot", "ptm.redo-threads"})
    for (auto d : {persist::Domain::adr, persist::Domain::eadr})
      for (auto g : {crash::Granularity::line, crash::Granularity::word}) {
        const crash::SimReport r = simulate(name, d, g);
        EXPECT_EQ(r.failures, 0u) << name << " " << persist::to_string(d) << ": "
                                  << (r.details.empty() ? "" : r.details[0].property + " at " + r.details[0].site);
        EXPECT_GT(r.crash_points, 12u) << name;
        EXPECT_GT(r.states_checked, 50u) << name;
      }
}

TEST(PtmCrash, UnloggedTwinsAreCaught) {
  for (const char* name : {"ptm.broken.undo-unlogged", "ptm.broken.redo-unlogged"}) {
    const crash::SimReport r = simulate(name, persist::Domain::adr, crash::Granularity::line);
    EXPECT_GT(r.failures, 0u) << name << " was not caught";
  }
}

}  // namespace
}  // namespace pmlab::ptm
