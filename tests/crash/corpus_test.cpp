// The bug corpus (src/pmlab/crash/corpus): designs of shapes the project's own do not have, each with
// broken twins from the bug classes of the studies. Every twin is caught in the mode where its bug exists,
// and, where a mode cannot show the bug, not caught there. The correct designs pass every mode through
// every_design_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pmlab/crash/simulator.hpp"
#include "simulate_helpers.hpp"

namespace pmlab::crash {
namespace {

using persist::Domain;
using namespace sim_testing;

constexpr const char* kPrefix = "corpus.";
constexpr const char* kBrokenPrefix = "corpus.broken.";

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// --- allocator metadata ---------------------------------------------------------------------------

TEST(Corpus, CatchesAnObjectLinkedBeforeItsAllocationBit) {
  for (Domain d : {Domain::adr, Domain::eadr})
    expect_caught("corpus.broken.bitmap-heap-link-before-bit", d, Granularity::line, {}, "hands it out again");
}

TEST(Corpus, CatchesARecoveryThatLeaksAnAllocatedUnlinkedObject) {
  for (Domain d : {Domain::adr, Domain::eadr})
    expect_caught("corpus.broken.bitmap-heap-leak", d, Granularity::line, {}, "leaked");
}

// --- missing flush and fence ----------------------------------------------------------------------

TEST(Corpus, CatchesTheUnflushedWrappedSegmentOfACircularLog) {
  expect_caught("corpus.broken.wrap-log-unflushed-wrap", Domain::adr, Granularity::line, {}, "did not persist");
}

TEST(Corpus, CatchesAValidFlagWrittenBackUnderTheValuesFence) {
  expect_caught("corpus.broken.probe-table-unfenced-flag", Domain::adr, Granularity::line, {}, "did not persist");
}

TEST(Corpus, CatchesACopyOnWriteLeafPublishedBeforeItsFlush) {
  expect_caught("corpus.broken.cow-tree-publish-before-flush", Domain::adr, Granularity::line, {}, "did not persist");
}

TEST(Corpus, CatchesAReusedSlotPublishedWithItsStaleContents) {
  expect_caught("corpus.broken.slot-pool-stale-reuse", Domain::adr, Granularity::line, {}, "does not hold its record");
}

// --- durability: acknowledged before durable --------------------------------------------------------

TEST(Corpus, CatchesACompletionAcknowledgedBeforeItsFence) {
  for (Domain d : {Domain::adr, Domain::eadr})
    expect_caught("corpus.broken.job-journal-unfenced-ack", d, Granularity::line);
}

// --- atomicity: what a line hides and a word or a byte shows ---------------------------------------

TEST(Corpus, CatchesAStateWordStoredBeforeItsKeyInTheSameLine) {
  for (Domain d : {Domain::adr, Domain::eadr}) {
    expect_caught("corpus.broken.probe-table-flag-first", d, Granularity::word, {}, "did not persist");
    expect_caught("corpus.broken.probe-table-flag-first", d, Granularity::byte);
    // The simulator sees a line only at persistence calls: the eviction between the two stores is the
    // documented blind spot of line mode, which word mode covers.
    expect_not_caught("corpus.broken.probe-table-flag-first", d, Granularity::line);
  }
}

TEST(Corpus, CatchesASixteenByteCounterUpdatedInPlace) {
  for (Domain d : {Domain::adr, Domain::eadr}) {
    expect_caught("corpus.broken.wide-counter-torn", d, Granularity::word);
    expect_not_caught("corpus.broken.wide-counter-torn", d, Granularity::line);
  }
}

TEST(Corpus, CatchesAPersistencyRaceOnAPlainPointerStore) {
  for (Domain d : {Domain::adr, Domain::eadr})
    expect_caught("corpus.broken.blob-directory-plain-pointer", d, Granularity::byte);
  // An aligned 8-byte store persists whole unless the compiler splits it: only byte mode models that.
  expect_not_caught("corpus.broken.blob-directory-plain-pointer", Domain::adr, Granularity::word);
  expect_not_caught("corpus.broken.blob-directory-plain-pointer", Domain::adr, Granularity::line);
}

// --- recovery -------------------------------------------------------------------------------------

TEST(Corpus, CatchesARecoveryThatReplaysLogicalDeltasTwice) {
  for (Domain d : {Domain::adr, Domain::eadr})
    expect_caught("corpus.broken.delta-redo-replays-deltas", d, Granularity::line);
}

TEST(Corpus, CatchesARecoveryThatTrustsALengthPersistedBeforeItsRecord) {
  for (Domain d : {Domain::adr, Domain::eadr})
    expect_caught("corpus.broken.length-log-trusted-length", d, Granularity::line, {}, "never persisted");
}

TEST(Corpus, CatchesARecoveryThatRepairsOnlyTheForwardLinks) {
  for (Domain d : {Domain::adr, Domain::eadr})
    expect_caught("corpus.broken.dlist-forward-only-repair", d, Granularity::line, {}, "backward");
}

TEST(Corpus, CatchesARecoveryWhoseRepairsNeverPersist) {
  const Budget crash_recovery{.budget = 400, .ops = 16, .recovery_budget = 4, .recovery_every = 2};
  for (Domain d : {Domain::adr, Domain::eadr})
    expect_caught("corpus.broken.dlist-unpersisted-repair", d, Granularity::line, crash_recovery, "recovery");
  // Without crash-testing recovery, every check of the repaired list passes.
  expect_not_caught("corpus.broken.dlist-unpersisted-repair", Domain::adr, Granularity::line);
}

// --- the corpus itself ------------------------------------------------------------------------------

// Every shape has a correct design and at least one broken twin, and every twin belongs to a shape.
TEST(Corpus, EveryShapeHasItsTwinsAndEveryTwinItsShape) {
  std::vector<std::string> shapes, twins;
  for (const SubjectInfo& info : SubjectRegistry::instance().all()) {
    if (!starts_with(info.name, kPrefix)) continue;
    EXPECT_EQ(info.deliberately_broken, starts_with(info.name, kBrokenPrefix)) << info.name;
    (info.deliberately_broken ? twins : shapes).push_back(info.name);
  }
  EXPECT_GE(shapes.size(), 10u);
  for (const std::string& shape : shapes) {
    const std::string stem = std::string(kBrokenPrefix) + shape.substr(std::string(kPrefix).size()) + "-";
    EXPECT_TRUE(std::any_of(twins.begin(), twins.end(), [&](const std::string& t) { return starts_with(t, stem); }))
        << shape << " has no broken twin";
  }
  for (const std::string& twin : twins) {
    const std::string rest = twin.substr(std::string(kBrokenPrefix).size());
    EXPECT_TRUE(std::any_of(
        shapes.begin(), shapes.end(),
        [&](const std::string& s) { return starts_with(rest, s.substr(std::string(kPrefix).size()) + "-"); }))
        << twin << " has no correct design";
  }
}

// The table in docs/crash-simulator.md names every design of the corpus.
TEST(Corpus, TheDocumentedTableNamesEveryDesign) {
  std::ifstream in(std::string(PMLAB_SOURCE_DIR) + "/docs/crash-simulator.md");
  ASSERT_TRUE(in.good());
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (const SubjectInfo& info : SubjectRegistry::instance().all()) {
    if (!starts_with(info.name, kPrefix)) continue;
    EXPECT_NE(doc.find("`" + info.name + "`"), std::string::npos) << info.name << " is not in the corpus table";
  }
}

}  // namespace
}  // namespace pmlab::crash
