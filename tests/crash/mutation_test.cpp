// Mutation testing: each persistence call site of a design, removed or weakened in turn, must make the
// simulator fail the design; a call that changes nothing is told apart (equivalent), not counted.
#include "pmlab/crash/mutation.hpp"

#include <gtest/gtest.h>

namespace pmlab::crash {
namespace {

using persist::Domain;

MutationOptions quick(std::vector<Domain> domains) {
  MutationOptions o;
  o.base.budget = 400;
  o.base.subject.ops = 16;
  o.base.recovery_budget = 4;
  o.base.recovery_every = 2;
  o.domains = std::move(domains);
  o.granularities = {Granularity::line, Granularity::word, Granularity::byte};
  return o;
}

const MutantResult* find(const MutationReport& r, persist::Call call, const char* function) {
  for (const auto& m : r.mutants)
    if (m.mutant.site.call == call && m.mutant.function.find(function) != std::string::npos) return &m;
  return nullptr;
}

TEST(Mutation, EveryCallOfTheCommitRecordMatters) {
  const SubjectInfo* info = SubjectRegistry::instance().find("selftest.commit-record");
  auto r = mutate(*info, quick({Domain::adr, Domain::eadr}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->sites, 5u);  // record persist (flush, fence), commit store8, commit persist (flush, fence)
  EXPECT_EQ(r->survivors(), 0u);
  for (const auto& m : r->mutants) {
    if (m.equivalent) continue;
    EXPECT_TRUE(m.killed) << m.mutant.describe();
    EXPECT_FALSE(m.evidence.empty());
  }
  EXPECT_EQ(r->equivalent, 0u);
  EXPECT_DOUBLE_EQ(r->strict_score(), 1.0);
  // The commit count starts just below 2^32 and the stream carries it across: split into halves, the store
  // that does leaves a count torn below its base, and the check refuses it.
  const MutantResult* split = find(*r, persist::Call::atomic_store, "run");
  ASSERT_NE(split, nullptr);
  EXPECT_TRUE(split->killed);
  EXPECT_FALSE(split->equivalent);
}

TEST(Mutation, ASplitCommitWordIsKilledWhereItsHalvesBothChange) {
  const SubjectInfo* info = SubjectRegistry::instance().find("selftest.epoch-pair");
  auto r = mutate(*info, quick({Domain::adr}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const MutantResult* split = find(*r, persist::Call::atomic_store, "run");
  ASSERT_NE(split, nullptr);
  EXPECT_TRUE(split->killed);
  EXPECT_FALSE(split->equivalent);
}

// A fence the design does not need survives: mutation testing reports it, with its site. Its count
// starts at `first`: from 250 the count crosses 256, a store that changes two bytes of the low half.
class RedundantFence final : public Subject {
 public:
  RedundantFence(const SubjectOptions& o, uint64_t first) : ops_(o.ops), first_(first) {}
  size_t image_bytes() const override { return 64 * (ops_ + 1); }
  void format(Image image, const persist::Persister& p) override { p.fill_persist(image.base, 0, image.size); }
  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    auto* count = reinterpret_cast<uint64_t*>(image.base);
    for (uint64_t i = 0; i < ops_; ++i) {
      ops.begin(i, "publish");
      auto* slot = reinterpret_cast<uint64_t*>(image.base + 64 * (i + 1));
      p.store8(slot, i + 1);
      p.flush(slot, 8);
      p.fence();
      p.fence();  // a second fence with nothing between: it orders nothing
      p.store8(count, first_ + i + 1);
      p.persist(count, 8);
      ops.end(i);
    }
  }
  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the count is the commit
  }
  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const uint64_t stored = *reinterpret_cast<const uint64_t*>(image.base);
    const uint64_t count = stored == 0 ? 0 : stored - first_;
    if (stored != 0 && stored <= first_) return error(Errc::failed, "the count is torn");
    if (count < at.ops_completed || count > at.ops_completed + (at.op_in_flight ? 1 : 0))
      return error(Errc::failed, "count disagrees with the operations that returned");
    for (uint64_t i = 0; i < count; ++i)
      if (*reinterpret_cast<const uint64_t*>(image.base + 64 * (i + 1)) != i + 1)
        return error(Errc::failed, "a published slot did not persist");
    return Status::success();
  }

 private:
  uint64_t ops_;
  uint64_t first_;
};

// The split store of its count (the slot store comes first in run()).
const MutantResult* count_split(const MutationReport& r) {
  const MutantResult* last = nullptr;
  for (const auto& m : r.mutants)
    if (m.mutant.site.call == persist::Call::atomic_store &&
        (last == nullptr || m.mutant.site.line > last->mutant.site.line))
      last = &m;
  return last;
}

SubjectInfo redundant_fence(uint64_t first) {
  return SubjectInfo{.name = "test.redundant-fence",
                     .description = "",
                     .domains = {Domain::adr},
                     .deliberately_broken = true,
                     .make = [first](const SubjectOptions& o) { return std::make_unique<RedundantFence>(o, first); }};
}

TEST(Mutation, AFenceThatOrdersNothingIsEquivalentNotASurvivor) {
  const SubjectInfo info = redundant_fence(0);
  auto r = mutate(info, quick({Domain::adr}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  int fences = 0, equivalent_fences = 0;
  for (const auto& m : r->mutants) {
    if (m.mutant.site.call != persist::Call::fence) continue;
    ++fences;
    equivalent_fences += m.equivalent;
    if (!m.equivalent) { EXPECT_TRUE(m.killed) << m.mutant.describe(); }
  }
  EXPECT_EQ(fences, 3);
  // Dropping either of the two back-to-back fences leaves the other: neither changes what can persist.
  // (The simulator sees each as dropped with a fence right after it; one of the two is the redundant one.)
  EXPECT_GE(equivalent_fences, 1);
  for (const auto& m : r->mutants) {
    if (m.mutant.site.call != persist::Call::fence || !m.equivalent) continue;
    EXPECT_EQ(m.main_reason(), Inert::nothing_to_order);
    EXPECT_TRUE(m.redundant_call());  // a performance finding, not a limit of the stream
  }
  // The count stays below 2^32 and changes one byte per store: its split store is equivalent, by the
  // stream's doing, and the strict score counts it as not killed.
  const MutantResult* split = count_split(*r);
  ASSERT_NE(split, nullptr);
  EXPECT_TRUE(split->equivalent);
  EXPECT_EQ(split->main_reason(), Inert::below_2_32);
  EXPECT_FALSE(split->redundant_call());
  EXPECT_LT(r->strict_score(), r->score());
}

TEST(Mutation, ASplitStoreOfTwoBytesOfOneHalfTearsInByteGranularityOnly) {
  // 255 -> 256 changes two bytes of the low half: whole halves make no new state, torn bytes do.
  const SubjectInfo info = redundant_fence(250);
  MutationOptions words = quick({Domain::adr});
  words.granularities = {Granularity::line, Granularity::word};
  auto w = mutate(info, words);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const MutantResult* split = count_split(*w);
  ASSERT_NE(split, nullptr);
  EXPECT_TRUE(split->equivalent);

  MutationOptions bytes = quick({Domain::adr});
  bytes.granularities = {Granularity::byte};
  auto b = mutate(info, bytes);
  ASSERT_TRUE(b.ok()) << b.status().message();
  split = count_split(*b);
  ASSERT_NE(split, nullptr);
  EXPECT_FALSE(split->equivalent);
  EXPECT_TRUE(split->killed) << "a count torn byte by byte (0x1ff or 0x0) went unnoticed";
}

// The designs' counters start just below 2^32 and their state codes fill both halves of their words, so
// each 8-byte atomic store a crash could see torn is seen torn, and its check refuses the word: every split
// mutant is killed. (The stores left equivalent by design, each explained at its site: bitmap-heap's one-bit
// stores, dlist's prev repairs, delta-redo's counters and shared-register's dirty bit.)
TEST(Mutation, EverySplitCounterAndStateWordIsKilled) {
  MutationOptions o = quick({Domain::adr});
  o.base.recovery_every = 1;  // as `pmlab crash --mutate`: a split inside recovery shows only where it is crashed
  for (const char* name : {"corpus.job-journal", "corpus.length-log", "corpus.probe-table", "corpus.wide-counter",
                           "corpus.wrap-log", "selftest.batch-log", "selftest.commit-record-stamp",
                           "selftest.indexed-store", "selftest.lazy-transfer", "selftest.register-file"}) {
    const SubjectInfo* info = SubjectRegistry::instance().find(name);
    ASSERT_NE(info, nullptr) << name;
    auto r = mutate(*info, o);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().message();
    int splits = 0;
    for (const auto& m : r->mutants) {
      if (m.mutant.mutation != persist::Mutation::split) continue;
      ++splits;
      EXPECT_TRUE(m.killed) << name << ": " << m.mutant.describe();
    }
    EXPECT_GT(splits, 0) << name;
  }
}

// Stores whose torn halves the streams once left harmless: a log's watermark (a partial truncation keeps
// an entry above it as it crosses 2^32), the undo PTM's sequence word (it must never go back), and the
// redo PTM's retirement word (a quiesce's promise: the next open replays nothing it retired).
TEST(Mutation, SplitWatermarkAndSequenceWordsAreKilled) {
  MutationOptions o = quick({Domain::adr});
  o.base.recovery_every = 1;  // as `pmlab crash --mutate`: a split inside recovery shows only where it is crashed
  struct Want {
    persist::Call call;
    const char* function;
  };
  const std::vector<std::pair<const char*, std::vector<Want>>> designs = {
      {"log.zero", {{persist::Call::atomic_store, "truncate_before"}}},
      {"ptm.undo", {{persist::Call::atomic_store, "commit"}, {persist::Call::atomic_store, "roll_back"}}},
      {"ptm.redo-one-slot",
       {{persist::Call::atomic_store, "RedoPtm::recover"},
        {persist::Call::flush, "quiesce"},
        {persist::Call::fence, "quiesce"}}},
      // The load's slot stays idle: only the retirement word retires its record, and the second quiesce
      // carries that word across 2^32.
      {"ptm.redo", {{persist::Call::atomic_store, "quiesce"}}}};
  for (const auto& [design, wants] : designs) {
    const SubjectInfo* info = SubjectRegistry::instance().find(design);
    ASSERT_NE(info, nullptr) << design;
    auto r = mutate(*info, o);
    ASSERT_TRUE(r.ok()) << design << ": " << r.status().message();
    for (const Want& w : wants) {
      int found = 0;
      for (const auto& m : r->mutants) {
        if (m.mutant.site.call != w.call || m.mutant.function.find(w.function) == std::string::npos) continue;
        ++found;
        EXPECT_TRUE(m.killed) << design << ": " << m.mutant.describe();
      }
      EXPECT_GT(found, 0) << design << " " << w.function;
    }
  }
}

// A word the design declares volatile (a per-thread hint, rebuilt by recovery) holds nothing a crash
// keeps: splitting its store is no mutant at all, while the persistent word beside it still is one.
class VolatileHint final : public Subject {
 public:
  explicit VolatileHint(const SubjectOptions& o) : ops_(o.ops) {}
  size_t image_bytes() const override { return 128; }
  void format(Image image, const persist::Persister& p) override { p.fill_persist(image.base, 0, image.size); }
  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    auto* hint = reinterpret_cast<uint64_t*>(image.base + 64);
    auto* count = reinterpret_cast<uint64_t*>(image.base);
    p.declare_volatile(hint, 8);
    for (uint64_t i = 0; i < ops_; ++i) {
      ops.begin(i, "count");
      p.store8(hint, (i + 1) * 0x100000001ULL);  // both halves change: a split would tear it, were it kept
      p.store8(hint, (i + 1) * 0x100000001ULL);  // the value it holds: still a store to a volatile word
      p.store8(count, (i + 1) * 0x100000001ULL);
      p.persist(count, 8);
      ops.end(i);
    }
  }
  Status recover(Image, const persist::Persister&) override { return Status::success(); }
  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const uint64_t count = *reinterpret_cast<const uint64_t*>(image.base);
    if (count % 0x100000001ULL != 0) return error(Errc::failed, "the count is torn");
    const uint64_t n = count / 0x100000001ULL;
    if (n < at.ops_completed || n > at.ops_completed + (at.op_in_flight ? 1 : 0))
      return error(Errc::failed, "count disagrees with the operations that returned");
    return Status::success();
  }

 private:
  uint64_t ops_;
};

TEST(Mutation, AStoreToAVolatileWordIsNoMutant) {
  SubjectInfo info{.name = "test.volatile-hint",
                   .description = "",
                   .domains = {Domain::adr},
                   .deliberately_broken = true,
                   .make = [](const SubjectOptions& o) { return std::make_unique<VolatileHint>(o); }};
  auto r = mutate(info, quick({Domain::adr}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  int splits = 0;
  for (const auto& m : r->mutants) {
    if (m.mutant.mutation != persist::Mutation::split) continue;
    ++splits;
    EXPECT_TRUE(m.killed) << m.mutant.describe();  // the count's: its halves tear, the check sees it
  }
  EXPECT_EQ(splits, 1);  // neither of the hint's splits is listed
  EXPECT_EQ(r->equivalent, 0u);
}

TEST(Mutation, RefusesADesignThatFailsUnmutated) {
  const SubjectInfo* info = SubjectRegistry::instance().find("selftest.broken.missing-fence");
  auto r = mutate(*info, quick({Domain::adr}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unmutated"), std::string::npos);
}

}  // namespace
}  // namespace pmlab::crash
