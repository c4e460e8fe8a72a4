// Running one registered design through the simulator on a small budget, and what a test asks of the
// result: that a broken twin is caught (with the site and, if given, the words of its failure) or that a
// design passes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "pmlab/crash/simulator.hpp"

namespace pmlab::crash::sim_testing {

struct Budget {
  uint64_t budget = 400;
  uint64_t ops = 16;
  uint64_t recovery_budget = 0;
  uint64_t recovery_every = 1;
};

inline SimReport simulate_ok(const std::string& name, persist::Domain domain, Granularity g, Budget run = {}) {
  const SubjectInfo* info = SubjectRegistry::instance().find(name);
  EXPECT_NE(info, nullptr) << name;
  if (info == nullptr) return {};
  SimOptions o;
  o.domain = domain;
  o.granularity = g;
  o.budget = run.budget;
  o.subject.ops = run.ops;
  o.recovery_budget = run.recovery_budget;
  o.recovery_every = run.recovery_every;
  auto r = simulate(*info, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : SimReport{};
}

inline std::string first_failure(const SimReport& r) { return r.details.empty() ? "" : r.details[0].property; }

inline void expect_caught(const std::string& name, persist::Domain d, Granularity g, Budget run = {},
                          const char* says = nullptr) {
  SimReport r = simulate_ok(name, d, g, run);
  EXPECT_GT(r.failures, 0u) << name << " was not caught under " << persist::to_string(d) << "/" << to_string(g);
  if (r.details.empty()) return;
  EXPECT_FALSE(r.details[0].site.empty());
  if (says != nullptr) { EXPECT_NE(r.details[0].property.find(says), std::string::npos) << r.details[0].property; }
}

inline void expect_passes(const std::string& name, persist::Domain d, Granularity g, Budget run = {}) {
  SimReport r = simulate_ok(name, d, g, run);
  EXPECT_EQ(r.failures, 0u) << name << " " << persist::to_string(d) << "/" << to_string(g) << ": " << first_failure(r);
  EXPECT_GT(r.states_checked, 10u) << name;
}

// A twin whose bug cannot exist in this mode is not caught there (and so is no false alarm).
inline void expect_not_caught(const std::string& name, persist::Domain d, Granularity g, Budget run = {}) {
  SimReport r = simulate_ok(name, d, g, run);
  EXPECT_EQ(r.failures, 0u) << name << " " << persist::to_string(d) << "/" << to_string(g) << ": " << first_failure(r);
}

}  // namespace pmlab::crash::sim_testing
