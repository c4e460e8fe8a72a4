#include "pmlab/crash/simulator.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "pmlab/crash/enumerator.hpp"

namespace pmlab::crash {
namespace {

using persist::Domain;

SimReport simulate_ok(const std::string& name, Domain domain, Granularity g, uint64_t budget = 400, uint64_t ops = 12,
                      uint64_t recovery_budget = 0, uint64_t recovery_every = 1) {
  const SubjectInfo* info = SubjectRegistry::instance().find(name);
  EXPECT_NE(info, nullptr) << name;
  if (info == nullptr) return {};
  SimOptions o;
  o.domain = domain;
  o.granularity = g;
  o.budget = budget;
  o.subject.ops = ops;
  o.recovery_budget = recovery_budget;
  o.recovery_every = recovery_every;
  auto r = simulate(*info, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : SimReport{};
}

// --- the simulated durability domain -------------------------------------------------------------

struct alignas(64) Region {
  std::byte bytes[256];
};

TEST(DurabilityTracker, AdrLineIsDurableOnlyAfterFlushAndFence) {
  Region r{};
  auto p = persist::Persister::create({.domain = Domain::adr, .flush = persist::FlushInstruction::clflush, .elide_flush = false, .elide_fence = false});
  ASSERT_TRUE(p.ok());
  int crash_points = 0;
  DurabilityTracker t({r.bytes, sizeof r.bytes}, Domain::adr, [&](const std::source_location&) { ++crash_points; });
  p->attach(&t);
  r.bytes[0] = std::byte{1};   // stored, not flushed
  r.bytes[64] = std::byte{2};  // stored and flushed
  p->flush(&r.bytes[64], 1);
  auto pending = t.pending(Granularity::line);
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_FALSE(pending[0].written_back);
  EXPECT_TRUE(pending[1].written_back);
  r.bytes[64] = std::byte{3};  // stored again after the write-back: two possible contents
  pending = t.pending(Granularity::line);
  ASSERT_EQ(pending[1].candidates.size(), 2u);
  p->fence();
  p->detach();
  EXPECT_EQ(crash_points, 1);
  EXPECT_EQ(t.durable()[64], std::byte{2});  // what was written back, not what was stored later
  EXPECT_EQ(t.durable()[0], std::byte{0});
  pending = t.pending(Granularity::word);
  ASSERT_EQ(pending.size(), 2u);  // the unflushed word and the re-stored word stay pending
  EXPECT_EQ(pending[0].size, 8u);
}

TEST(DurabilityTracker, EadrMakesEveryStoreDurableAtTheFence) {
  Region r{};
  auto p = persist::Persister::create({.domain = Domain::eadr, .flush = persist::FlushInstruction::clwb, .elide_flush = false, .elide_fence = false});
  DurabilityTracker t({r.bytes, sizeof r.bytes}, Domain::eadr, nullptr);
  p->attach(&t);
  r.bytes[130] = std::byte{9};
  EXPECT_EQ(t.pending(Granularity::line).size(), 1u);
  p->fence();
  p->detach();
  EXPECT_EQ(t.durable()[130], std::byte{9});
  EXPECT_TRUE(t.pending(Granularity::line).empty());
}

TEST(DurabilityTracker, NonTemporalStoresCountAsWrittenBack) {
  Region r{};
  unsigned char src[128];
  std::memset(src, 7, sizeof src);
  auto p = persist::Persister::create({.domain = Domain::adr, .flush = persist::FlushInstruction::ntstore, .elide_flush = false, .elide_fence = false});
  DurabilityTracker t({r.bytes, sizeof r.bytes}, Domain::adr, nullptr);
  p->attach(&t);
  p->copy_persist(r.bytes, src, sizeof src);
  p->detach();
  EXPECT_EQ(t.durable()[127], std::byte{7});
}

// --- enumeration -------------------------------------------------------------------------------

std::vector<PendingUnit> units(size_t n, size_t candidates = 1) {
  std::vector<PendingUnit> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].offset = i * 64;
    out[i].size = 64;
    for (size_t c = 0; c < candidates; ++c) out[i].candidates.emplace_back(64, std::byte{static_cast<unsigned char>(c + 1)});
  }
  return out;
}

TEST(Enumerator, NoneAndAllComeFirstThenEverythingWhenFew) {
  auto states = enumerate_states(units(3), {.budget = 100, .exhaustive_limit = 64, .max_deviation = 2, .seed = 1});
  ASSERT_EQ(states.size(), 8u);  // 2^3
  EXPECT_EQ(states[0].strategy, "none");
  EXPECT_EQ(states[0].choice, (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(states[1].strategy, "all");
  EXPECT_EQ(states[1].choice, (std::vector<uint8_t>{1, 1, 1}));
}

TEST(Enumerator, CheapestFirstWithinBudgetAndReproducible) {
  auto u = units(40, 2);
  EnumerationLimits limits{.budget = 300, .exhaustive_limit = 64, .max_deviation = 2, .seed = 7};
  auto a = enumerate_states(u, limits);
  auto b = enumerate_states(u, limits);
  ASSERT_EQ(a.size(), 300u);
  EXPECT_EQ(a[2].strategy, "prefix");
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].choice, b[i].choice);
  std::set<std::vector<uint8_t>> distinct;
  for (const auto& s : a) distinct.insert(s.choice);
  EXPECT_EQ(distinct.size(), a.size());
  // A smaller budget yields a prefix of the same sequence: replay by index works.
  limits.budget = 50;
  auto c = enumerate_states(u, limits);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i].choice, a[i].choice);
}

TEST(Enumerator, StateHashMatchesTheBuiltImage) {
  std::vector<std::byte> durable(4 * 64, std::byte{0});
  auto u = units(4, 2);
  auto states = enumerate_states(u, {.budget = 100, .exhaustive_limit = 100, .max_deviation = 2, .seed = 1});
  const uint64_t dh = image_hash(durable);
  std::vector<std::byte> img(durable.size());
  for (const auto& s : states) {
    build_image(durable, u, s, img.data());
    EXPECT_EQ(state_hash(dh, durable, u, s), image_hash(img));
  }
}

// --- the simulator proves itself -----------------------------------------------------------------

TEST(Simulator, CorrectDesignsPassWithZeroFalsePositives) {
  for (const char* name : {"selftest.commit-record", "selftest.scan-log"})
    for (Domain d : {Domain::adr, Domain::eadr})
      for (Granularity g : {Granularity::line, Granularity::word}) {
        SimReport r = simulate_ok(name, d, g);
        EXPECT_EQ(r.failures, 0u) << name << " " << persist::to_string(d) << " " << to_string(g) << ": "
                                  << (r.details.empty() ? "" : r.details[0].property);
        EXPECT_GT(r.states_checked, 20u) << name;
        EXPECT_GT(r.crash_points, 12u) << name;
      }
}

void expect_caught(const char* name, Domain d, Granularity g) {
  SimReport r = simulate_ok(name, d, g);
  EXPECT_GT(r.failures, 0u) << name << " was not caught under " << persist::to_string(d) << "/" << to_string(g);
  if (!r.details.empty()) {
    EXPECT_FALSE(r.details[0].property.empty());
    EXPECT_FALSE(r.details[0].site.empty());
  }
}

TEST(Simulator, CatchesAMissingFlushBeforePublish) { expect_caught("selftest.broken.missing-flush", Domain::adr, Granularity::line); }
TEST(Simulator, CatchesAMissingFenceBetweenDataAndCommit) { expect_caught("selftest.broken.missing-fence", Domain::adr, Granularity::line); }
TEST(Simulator, CatchesACommitThatIsNotEightByteAtomic) {
  expect_caught("selftest.broken.torn-commit", Domain::adr, Granularity::word);
  expect_caught("selftest.broken.torn-commit", Domain::eadr, Granularity::word);
  // Whole-line crashes cannot tear a commit inside one line: torn-line mode is what finds it.
  EXPECT_EQ(simulate_ok("selftest.broken.torn-commit", Domain::adr, Granularity::line).failures, 0u);
}
TEST(Simulator, CatchesRecoveryThatTrustsAnUnvalidatedLength) {
  expect_caught("selftest.broken.unvalidated-length", Domain::adr, Granularity::line);
  expect_caught("selftest.broken.unvalidated-length", Domain::eadr, Granularity::line);
}
TEST(Simulator, CatchesAnEadrDesignWithoutItsFence) { expect_caught("selftest.broken.eadr-no-fence", Domain::eadr, Granularity::line); }

// A crash inside recovery: the unsafe twin runs the correct protocol, so only this check can see it.
TEST(Simulator, CatchesARecoveryThatIsNotCrashSafe) {
  for (Domain d : {Domain::adr, Domain::eadr}) {
    EXPECT_EQ(simulate_ok("selftest.broken.unsafe-recovery", d, Granularity::line).failures, 0u)
        << "with recovery not crash-tested, nothing else should notice";
    const SimReport r = simulate_ok("selftest.broken.unsafe-recovery", d, Granularity::line, 400, 12, 4, 1);
    EXPECT_GT(r.failures, 0u) << persist::to_string(d);
    EXPECT_GT(r.recovery_states_checked, 0u);
    ASSERT_FALSE(r.details.empty());
    EXPECT_NE(r.details[0].property.find("crash inside recovery"), std::string::npos) << r.details[0].property;
  }
}

TEST(Simulator, ARecoveryThatWritesSafelySurvivesItsOwnCrashes) {
  for (Domain d : {Domain::adr, Domain::eadr}) {
    const SimReport r = simulate_ok("selftest.commit-record-stamp", d, Granularity::line, 400, 12, 4, 1);
    EXPECT_EQ(r.failures, 0u) << (r.details.empty() ? "" : r.details[0].property);
    EXPECT_GT(r.recovery_states_checked, 20u);
  }
}

TEST(Simulator, AFailureNamesItsCrashPointAndReplaysFromItsIndex) {
  const SubjectInfo* info = SubjectRegistry::instance().find("selftest.broken.missing-fence");
  ASSERT_NE(info, nullptr);
  SimOptions o;
  o.budget = 200;
  o.subject.ops = 6;
  auto first = simulate(*info, o);
  ASSERT_TRUE(first.ok());
  ASSERT_FALSE(first->details.empty());
  const Failure& f = first->details[0];
  EXPECT_NE(f.site.find("commit_record.cpp"), std::string::npos) << f.site;
  EXPECT_NE(f.at.op_label.find("publish record"), std::string::npos);
  EXPECT_TRUE(f.at.op_in_flight);
  o.replay = std::make_pair(f.crash_point, f.state);
  auto again = simulate(*info, o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->states_checked, 1u);
  ASSERT_EQ(again->failures, 1u);
  EXPECT_EQ(again->details[0].property, f.property);
  EXPECT_EQ(again->details[0].persisted, f.persisted);
}

// A design whose recovery crashes or hangs on some images: the simulator survives and reports it.
class BadRecovery final : public Subject {
 public:
  explicit BadRecovery(bool hang) : hang_(hang) {}
  size_t image_bytes() const override { return 4096; }
  void format(Image, const persist::Persister&) override {}
  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    ops.begin(0, "write");
    image.base[0] = std::byte{1};
    p.persist(image.base, 1);
    ops.end(0);
  }
  Status recover_and_check(Image image, const persist::Persister&, const CrashPoint&) override {
    if (image.base[0] == std::byte{1}) {
      if (hang_)
        for (;;) pause();  // never returns: the checker's timeout must end it
      std::abort();  // a recovery that dies (SIGABRT is not intercepted by the sanitizers)
    }
    return Status::success();
  }

 private:
  bool hang_;
};

TEST(Simulator, RecoveryThatCrashesOrHangsIsAFailureNotACrash) {
  for (bool hang : {false, true}) {
    SubjectInfo info{.name = hang ? "test.hang" : "test.segv", .description = "", .domains = {Domain::adr},
                     .deliberately_broken = true,
                     .make = [hang](const SubjectOptions&) { return std::make_unique<BadRecovery>(hang); }};
    SimOptions o;
    o.timeout_s = 0.5;
    auto r = simulate(info, o);
    ASSERT_TRUE(r.ok());
    ASSERT_GE(r->failures, 1u);
    EXPECT_NE(r->details[0].property.find(hang ? "hung" : "crashed"), std::string::npos) << r->details[0].property;
    EXPECT_GT(r->states_checked, r->failures);  // the states without the poison still ran
  }
}

TEST(Simulator, RefusesDomainNone) {
  const SubjectInfo* info = SubjectRegistry::instance().find("selftest.commit-record");
  SimOptions o;
  o.domain = Domain::none;
  EXPECT_EQ(simulate(*info, o).status().code(), Errc::invalid_argument);
}

// Every persistent design registered in pmlab, under every domain it claims, survives a bounded run.
TEST(EveryDesign, SurvivesSimulatedPowerFailures) {
  int designs = 0;
  for (const SubjectInfo& info : SubjectRegistry::instance().all()) {
    if (info.deliberately_broken) continue;
    ++designs;
    for (Domain d : info.domains)
      for (Granularity g : {Granularity::line, Granularity::word}) {
        // Recovery crash-tested too, on every fourth state, two crash states per recovery fence.
        SimReport r = simulate_ok(info.name, d, g, 300, 16, 2, 4);
        EXPECT_EQ(r.failures, 0u) << info.name << " " << persist::to_string(d) << "/" << to_string(g) << ": "
                                  << (r.details.empty() ? "" : r.details[0].property + " at " + r.details[0].site +
                                                                   " replay " + r.details[0].replay());
      }
  }
  EXPECT_GE(designs, 2);
}

}  // namespace
}  // namespace pmlab::crash
