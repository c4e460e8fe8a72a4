// The crash simulator proves itself: correct self-test designs pass, and every broken twin is caught in
// the mode where its bug exists. Each blind spot a simpler simulator would have has a twin here (a design
// of a shape the project's own designs do not have), with a test that fails if the blind spot returns.
#include "pmlab/crash/simulator.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <tuple>

#include "simulate_helpers.hpp"

namespace pmlab::crash {
namespace {

using persist::Domain;
using namespace sim_testing;

// --- the classic bug shapes ----------------------------------------------------------------------

TEST(Simulator, CatchesAMissingFlushBeforePublish) {
  expect_caught("selftest.broken.missing-flush", Domain::adr, Granularity::line);
}
TEST(Simulator, CatchesAMissingFenceBetweenDataAndCommit) {
  expect_caught("selftest.broken.missing-fence", Domain::adr, Granularity::line);
}
TEST(Simulator, CatchesACommitSpreadOverTwoWords) {
  expect_caught("selftest.broken.torn-commit", Domain::adr, Granularity::word);
  expect_caught("selftest.broken.torn-commit", Domain::eadr, Granularity::byte);
  // Whole-line crashes cannot tear a commit inside one line.
  EXPECT_EQ(simulate_ok("selftest.broken.torn-commit", Domain::adr, Granularity::line).failures, 0u);
}
TEST(Simulator, CatchesRecoveryThatTrustsAnUnvalidatedLength) {
  expect_caught("selftest.broken.unvalidated-length", Domain::adr, Granularity::line);
  expect_caught("selftest.broken.unvalidated-length", Domain::eadr, Granularity::line);
}
TEST(Simulator, CatchesAnEadrDesignWithoutItsFence) {
  expect_caught("selftest.broken.eadr-no-fence", Domain::eadr, Granularity::line);
}

// --- the blind spots, each with its twin ---------------------------------------------------------

// 1. Recovery runs where the run's image is not: an absolute pointer into it faults, and says so.
TEST(Simulator, AbsolutePointersIntoTheRunsMappingAreCaught) {
  for (const char* name : {"selftest.broken.absolute-stack", "selftest.broken.absolute-stack-unflushed"})
    for (Domain d : {Domain::adr, Domain::eadr}) expect_caught(name, d, Granularity::line, {}, "absolute pointer");
  expect_passes("selftest.offset-stack", Domain::adr, Granularity::byte);
}

// 2. Atomicity follows how a word was written: store8 holds, two plain 4-byte halves do not (byte mode).
TEST(Simulator, AWordWrittenAsTwoHalvesTearsInByteMode) {
  expect_caught("selftest.broken.epoch-halves", Domain::adr, Granularity::byte);
  expect_caught("selftest.broken.epoch-halves", Domain::eadr, Granularity::byte);
  // Lines and aligned words persist whole in the other modes: the bug is the store, not the place.
  EXPECT_EQ(simulate_ok("selftest.broken.epoch-halves", Domain::adr, Granularity::word).failures, 0u);
  expect_passes("selftest.epoch-pair", Domain::adr, Granularity::byte);
}

// 2. A value a line held between two fences, at another persistence call, may have been evicted.
TEST(Simulator, TransientValuesBetweenFencesAreTried) {
  expect_caught("selftest.broken.register-busy-mark", Domain::adr, Granularity::line, {}, "left busy");
  expect_caught("selftest.broken.register-busy-mark", Domain::eadr, Granularity::line, {}, "left busy");
  expect_passes("selftest.register-file", Domain::adr, Granularity::line);
}

// 3. Recovery is crashed at its end, and must return with its repairs durable.
TEST(Simulator, ARepairRecoveryNeverPersistsIsCaught) {
  const Budget crash_recovery{.budget = 400, .ops = 16, .recovery_budget = 4, .recovery_every = 2};
  for (Domain d : {Domain::adr, Domain::eadr}) {
    expect_caught("selftest.broken.lazy-transfer-volatile-repair", d, Granularity::line, crash_recovery);
    expect_passes("selftest.lazy-transfer", d, Granularity::line, crash_recovery);
  }
  // Without crash-testing recovery, nothing else notices.
  EXPECT_EQ(simulate_ok("selftest.broken.lazy-transfer-volatile-repair", Domain::adr, Granularity::line).failures, 0u);
}

// 4. Which states get their recovery crash-tested is a seeded hash of the state, not a stride: a design
// with eight states per operation would hide from every 4th or 8th.
TEST(Simulator, RecoverySamplingHasNoStrideToAlias) {
  for (uint64_t every : {4u, 8u}) {
    const Budget run{.budget = 2000, .ops = 64, .recovery_budget = 4, .recovery_every = every};
    expect_caught("selftest.broken.triple-log-unsafe-repair", Domain::adr, Granularity::line, run,
                  "crash inside recovery");
    expect_passes("selftest.triple-log", Domain::adr, Granularity::line, run);
  }
}

// 5. Depth without a cliff: a bug that needs eight particular lines of eighteen persisted and two not is
// found at the default budget, in line and in word mode.
TEST(Simulator, ASubsetOfEightPendingLinesIsFoundAtTheDefaultBudget) {
  const Budget defaults{.budget = 5000, .ops = 64};
  for (Granularity g : {Granularity::line, Granularity::word}) {
    expect_caught("selftest.broken.batch-log-salvage", Domain::adr, g, defaults, "never appended");
    expect_passes("selftest.batch-log", Domain::adr, g, defaults);
  }
}

// 6. Recovery gets a freshly made subject: what the run kept in DRAM is gone, as after a reboot.
TEST(Simulator, RecoveryCannotReadTheRunsDramState) {
  expect_caught("selftest.broken.indexed-store-dram-count", Domain::adr, Granularity::line, {}, "missing");
  expect_passes("selftest.indexed-store", Domain::adr, Granularity::line);
}

// Threads interleaved at persistence calls: a value another thread has seen (and answered with) must not
// be lost, although its writer's operation had not returned. A single-threaded run cannot see this bug.
TEST(Simulator, AValueAReaderAnsweredWithIsNotLostInAConcurrentRun) {
  expect_caught("selftest.broken.shared-register-read-unpersisted", Domain::adr, Granularity::line, {},
                "a read that returned saw a later value");
  for (Domain d : {Domain::adr, Domain::eadr}) expect_passes("selftest.shared-register", d, Granularity::line);
}

// A concurrent run is deterministic: two simulations of it reach the same crash points and states.
TEST(Simulator, AConcurrentRunRepeatsItself) {
  const SimReport a = simulate_ok("lockfree.list.tlog", Domain::adr, Granularity::line);
  const SimReport b = simulate_ok("lockfree.list.tlog", Domain::adr, Granularity::line);
  EXPECT_EQ(a.crash_points, b.crash_points);
  EXPECT_EQ(a.states_checked, b.states_checked);
  EXPECT_GT(a.crash_points, 20u);
}

// A crash inside recovery: the unsafe twin runs the correct protocol, so only this check can see it.
TEST(Simulator, CatchesARecoveryThatIsNotCrashSafe) {
  for (Domain d : {Domain::adr, Domain::eadr}) {
    EXPECT_EQ(simulate_ok("selftest.broken.unsafe-recovery", d, Granularity::line).failures, 0u)
        << "with recovery not crash-tested, nothing else should notice";
    const SimReport r = simulate_ok("selftest.broken.unsafe-recovery", d, Granularity::line,
                                    {.budget = 400, .ops = 12, .recovery_budget = 4, .recovery_every = 1});
    EXPECT_GT(r.failures, 0u) << persist::to_string(d);
    EXPECT_GT(r.recovery_states_checked, 0u);
    EXPECT_NE(first_failure(r).find("crash inside recovery"), std::string::npos) << first_failure(r);
  }
}

TEST(Simulator, ARecoveryThatWritesSafelySurvivesItsOwnCrashes) {
  for (Domain d : {Domain::adr, Domain::eadr}) {
    const SimReport r = simulate_ok("selftest.commit-record-stamp", d, Granularity::line,
                                    {.budget = 400, .ops = 12, .recovery_budget = 4, .recovery_every = 1});
    EXPECT_EQ(r.failures, 0u) << first_failure(r);
    EXPECT_GT(r.recovery_states_checked, 20u);
  }
}

// A state that fails its own check is that failure, not a crash of its recovery: crash-testing recovery
// changes neither the failures, nor their kinds, nor their words, for designs whose bug is not in recovery
// (a crash state of a recovery that wrote nothing durable is the state itself, and "recovery again" on it
// repeated the plain check's failure under a recovery's name).
TEST(Simulator, AStateThatFailsItsOwnCheckIsNoRecoveryCrash) {
  for (const char* name : {"selftest.broken.unvalidated-length", "selftest.broken.missing-fence",
                           "selftest.broken.register-busy-mark", "selftest.broken.absolute-stack"}) {
    const SimReport plain = simulate_ok(name, Domain::adr, Granularity::line, {.budget = 400, .ops = 16});
    const SimReport crashed = simulate_ok(name, Domain::adr, Granularity::line,
                                          {.budget = 400, .ops = 16, .recovery_budget = 4, .recovery_every = 1});
    EXPECT_GT(plain.failures, 0u) << name;
    EXPECT_EQ(crashed.failures, plain.failures) << name;
    EXPECT_EQ(crashed.failure_kinds, plain.failure_kinds) << name;
    for (const Failure& f : crashed.details)
      EXPECT_EQ(f.property.find("then recovery again"), std::string::npos) << name << ": " << f.property;
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

// A bug fails state after state alike: each cause is shown once, by its first failure, and stands for the
// others; a state it names alike fails as it did, but for its numbers.
TEST(Simulator, FailuresOfOneCauseAreShownOnce) {
  const char* name = "corpus.broken.length-log-trusted-length";
  const SimReport r = simulate_ok(name, Domain::adr, Granularity::line, {.budget = 300, .ops = 24});
  ASSERT_FALSE(r.details.empty());
  ASSERT_LT(r.details.size(), SimOptions{}.max_failure_details) << "every cause is shown";
  EXPECT_EQ(r.failure_kinds, r.details.size());
  EXPECT_LT(r.details.size(), r.failures) << "a trusted length fails at many crash points alike";
  uint64_t counted = 0;
  std::set<uint64_t> causes;
  for (size_t i = 0; i < r.details.size(); ++i) {
    const Failure& f = r.details[i];
    counted += 1 + f.alike.others;
    EXPECT_TRUE(causes.insert(f.alike.cause).second);
    EXPECT_EQ(f.alike.replays.size(), std::min<uint64_t>(f.alike.others, kAlikeListed));
    if (i > 0) {
      EXPECT_LT(std::tie(r.details[i - 1].crash_point, r.details[i - 1].state), std::tie(f.crash_point, f.state));
    }
  }
  EXPECT_EQ(counted, r.failures);
  const Failure* shown = nullptr;
  for (const Failure& f : r.details)
    if (!f.alike.replays.empty()) shown = &f;
  ASSERT_NE(shown, nullptr);
  unsigned long long point = 0, state = 0;
  ASSERT_EQ(std::sscanf(shown->alike.replays.back().c_str(), "%llu:%llu", &point, &state), 2);
  SimOptions o;
  o.budget = 300;
  o.subject.ops = 24;
  o.replay = std::make_pair(point, state);
  auto alike = simulate(*SubjectRegistry::instance().find(name), o);
  ASSERT_TRUE(alike.ok());
  ASSERT_EQ(alike->details.size(), 1u);
  EXPECT_EQ(alike->details[0].site, shown->site);
  EXPECT_EQ(numbers_masked(alike->details[0].property), numbers_masked(shown->property));
  EXPECT_LT(std::tie(shown->crash_point, shown->state), std::tie(point, state));
}

// Shards partition the states: together they check what one run checks, and find the same failures.
TEST(Simulator, ShardsAddUpToTheWholeRun) {
  for (const char* name : {"selftest.scan-log", "selftest.broken.missing-fence"}) {
    const SubjectInfo* info = SubjectRegistry::instance().find(name);
    SimOptions o;
    o.budget = 300;
    o.subject.ops = 12;
    auto whole = simulate(*info, o);
    ASSERT_TRUE(whole.ok());
    uint64_t checked = 0, failures = 0;
    for (uint64_t k = 0; k < 3; ++k) {
      o.shard = k;
      o.shards = 3;
      auto part = simulate(*info, o);
      ASSERT_TRUE(part.ok());
      EXPECT_EQ(part->states_enumerated, whole->states_enumerated);
      checked += part->states_checked;
      failures += part->failures;
    }
    EXPECT_EQ(checked, whole->states_checked) << name;
    EXPECT_EQ(failures, whole->failures) << name;
  }
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
  Status recover(Image image, const persist::Persister&) override {
    if (image.base[0] == std::byte{1}) {
      if (hang_)
        for (;;) pause();  // never returns: the checker's timeout must end it
      std::abort();        // a recovery that dies (SIGABRT is not intercepted by the sanitizers)
    }
    return Status::success();
  }
  Status check(Image, const persist::Persister&, const CrashPoint&) override { return Status::success(); }

 private:
  bool hang_;
};

TEST(Simulator, RecoveryThatCrashesOrHangsIsAFailureNotACrash) {
  for (bool hang : {false, true}) {
    SubjectInfo info{.name = hang ? "test.hang" : "test.abort",
                     .description = "",
                     .domains = {Domain::adr},
                     .deliberately_broken = true,
                     .make = [hang](const SubjectOptions&) { return std::make_unique<BadRecovery>(hang); }};
    SimOptions o;
    o.timeout_s = 0.5;
    auto r = simulate(info, o);
    ASSERT_TRUE(r.ok());
    ASSERT_GE(r->failures, 1u);
    EXPECT_NE(first_failure(*r).find(hang ? "hung" : "crashed"), std::string::npos) << first_failure(*r);
    EXPECT_GT(r->states_checked, r->failures);  // the states without the poison still ran
  }
}

// run() must repeat itself: a design whose two runs differ is reported, never trusted.
class Wandering final : public Subject {
 public:
  size_t image_bytes() const override { return 4096; }
  void format(Image, const persist::Persister&) override {}
  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    static int runs = 0;
    ops.begin(0, "write");
    const size_t at = 64 * static_cast<size_t>(++runs % 4);
    image.base[at] = std::byte{1};
    image.base[at + 64 * 8] = std::byte{1};
    p.flush(image.base + at, 1);
    p.fence();
    ops.end(0);
  }
  Status recover(Image, const persist::Persister&) override { return Status::success(); }
  Status check(Image, const persist::Persister&, const CrashPoint&) override { return Status::success(); }
};

TEST(Simulator, ARunThatDoesNotRepeatItselfIsReported) {
  SubjectInfo info{.name = "test.wandering",
                   .description = "",
                   .domains = {Domain::adr},
                   .deliberately_broken = true,
                   .make = [](const SubjectOptions&) { return std::make_unique<Wandering>(); }};
  SimOptions o;
  o.granularity = Granularity::byte;
  auto r = simulate(info, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not deterministic"), std::string::npos) << r.status().message();
}

TEST(Simulator, RefusesDomainNoneAndShardsThatDoNotExist) {
  const SubjectInfo* info = SubjectRegistry::instance().find("selftest.commit-record");
  SimOptions o;
  o.domain = Domain::none;
  EXPECT_EQ(simulate(*info, o).status().code(), Errc::invalid_argument);
  o.domain = Domain::adr;
  o.shard = 3;
  o.shards = 3;
  EXPECT_EQ(simulate(*info, o).status().code(), Errc::invalid_argument);
}

TEST(Simulator, ReportsCoverageAndDepth) {
  const SimReport r = simulate_ok("selftest.batch-log", Domain::adr, Granularity::line, {.budget = 2000, .ops = 16});
  EXPECT_EQ(r.crash_points, 33u);  // two fences per batch, and exit
  EXPECT_GT(r.state_space, static_cast<double>(r.states_checked));
  EXPECT_GT(r.exhaustive_points, 0u);
  EXPECT_GE(r.deviation_depth, 1u);
  EXPECT_EQ(r.max_pending_lines, 18u);
}

}  // namespace
}  // namespace pmlab::crash
