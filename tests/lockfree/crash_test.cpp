// The crash subjects of the lock-free designs can fail: run under a domain a design does not claim
// (TX-free and Log-free issue no flushes, so under ADR their data never reaches the durable image), the
// simulator must report lost or torn elements. Their correct runs are in EveryDesign (tests/crash).
#include <gtest/gtest.h>

#include "pmlab/crash/simulator.hpp"

namespace pmlab::lockfree {
namespace {

using crash::Granularity;
using persist::Domain;

crash::SimReport simulate_unclaimed(const std::string& name, Domain domain) {
  const crash::SubjectInfo* registered = crash::SubjectRegistry::instance().find(name);
  EXPECT_NE(registered, nullptr) << name;
  if (registered == nullptr) return {};
  crash::SubjectInfo info = *registered;
  info.domains = {domain};
  info.deliberately_broken = true;
  crash::SimOptions o;
  o.domain = domain;
  o.granularity = Granularity::line;
  o.budget = 300;
  o.subject.ops = 16;
  auto r = crash::simulate(info, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : crash::SimReport{};
}

TEST(LockfreeCrash, TxFreeUnderAdrIsCaught) {
  const crash::SimReport r = simulate_unclaimed("lockfree.ring.txfree", Domain::adr);
  EXPECT_GT(r.failures, 0u) << "the ring checker never noticed unflushed slots";
}

TEST(LockfreeCrash, LogFreeUnderAdrIsCaught) {
  const crash::SimReport r = simulate_unclaimed("lockfree.list.logfree", Domain::adr);
  EXPECT_GT(r.failures, 0u) << "the list checker never noticed unflushed links";
}

TEST(LockfreeCrash, EveryDesignIsRegisteredWithTheDomainsItClaims) {
  for (const char* name : {"lockfree.list.tlog", "lockfree.list.soft", "lockfree.list.linkfree", "lockfree.ring.tx"}) {
    const crash::SubjectInfo* info = crash::SubjectRegistry::instance().find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->domains, (std::vector<Domain>{Domain::adr, Domain::eadr})) << name;
    EXPECT_FALSE(info->deliberately_broken);
  }
  for (const char* name : {"lockfree.list.logfree", "lockfree.ring.txfree"}) {
    const crash::SubjectInfo* info = crash::SubjectRegistry::instance().find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->domains, (std::vector<Domain>{Domain::eadr})) << name;
  }
}

}  // namespace
}  // namespace pmlab::lockfree
