// The record hand-off model against hand-counted interleavings and against its closed form: for one
// record accessed by two threads with equal odds and a write share w, the record alternates between
// "one thread holds it" (after a write) and "both hold it" (after the other thread reads it), and an
// access is a hand-off with probability w(2 - w) / (1 + w) in the steady state. Uniform keys over few
// records put every record in that steady state.
#include <gtest/gtest.h>

#include <vector>

#include "pmlab/workload/handoffs.hpp"
#include "pmlab/workload/ycsb.hpp"

namespace pmlab::workload {
namespace {

Op read_of(uint64_t record) { return Op{OpType::read, 0, record, record}; }
Op update_of(uint64_t record) { return Op{OpType::update, 0, record, record}; }

double steady_state(double w) { return w * (2 - w) / (1 + w); }

std::vector<std::vector<Op>> uniform_streams(double update_share, int threads, uint64_t records, uint64_t ops) {
  WorkloadSpec spec;
  spec.read = 1 - update_share;
  spec.update = update_share;
  spec.distribution = Distribution::uniform;
  const KeySpace keys{records, true};
  std::vector<std::vector<Op>> streams;
  for (int t = 0; t < threads; ++t) streams.push_back(run_ops(spec, keys, ops, 0x5eed, t, threads));
  return streams;
}

TEST(RecordHandoffs, OneThreadHandsNothingOff) {
  EXPECT_EQ(record_handoffs_per_op({{update_of(1), read_of(1), update_of(1)}}), 0.0);
  EXPECT_EQ(record_handoffs_per_op({}), 0.0);
  EXPECT_EQ(record_handoffs_per_op(uniform_streams(0.5, 1, 100, 10000)), 0.0);
}

TEST(RecordHandoffs, ReadersShareWithoutHandOffs) {
  EXPECT_EQ(record_handoffs_per_op({{read_of(1), read_of(2)}, {read_of(1), read_of(2)}}), 0.0);
  EXPECT_EQ(record_handoffs_per_op(uniform_streams(0.0, 2, 100, 10000)), 0.0);
}

TEST(RecordHandoffs, WritersOfDisjointRecordsHandNothingOff) {
  EXPECT_EQ(
      record_handoffs_per_op({{update_of(1), update_of(1), read_of(1)}, {update_of(2), read_of(2), update_of(2)}}),
      0.0);
}

TEST(RecordHandoffs, CountsEachTransferOfAWrittenRecord) {
  // t0 writes 7 (cold), t1 reads it (from t0), t0 writes it (t1 holds a copy), t1 reads it again.
  EXPECT_EQ(record_handoffs_per_op({{update_of(7), update_of(7)}, {read_of(7), read_of(7)}}), 3.0 / 4.0);
  // A record both threads read and only then one writes: the write takes the other's copy, once.
  EXPECT_EQ(record_handoffs_per_op({{read_of(3), update_of(3), update_of(3)}, {read_of(3), read_of(4), read_of(4)}}),
            1.0 / 6.0);
  // A read-modify-write counts once, as a write.
  EXPECT_EQ(
      record_handoffs_per_op({{Op{OpType::read_modify_write, 0, 5, 5}}, {Op{OpType::read_modify_write, 0, 5, 5}}}),
      1.0 / 2.0);
}

TEST(RecordHandoffs, MatchesTheSteadyStateOfUniformAccess) {
  for (double w : {0.05, 0.5, 1.0}) {
    const auto rate = record_handoffs_per_op(uniform_streams(w, 2, 512, 200000));
    ASSERT_TRUE(rate.has_value());
    EXPECT_NEAR(*rate, steady_state(w), 0.1 * steady_state(w)) << "update share " << w;
  }
}

TEST(RecordHandoffs, ZipfianBStaysUnderTheUniformSteadyState) {
  // Popular records reach the steady state; rare ones are mostly first touches.
  WorkloadSpec b = *workload_named("b");
  const KeySpace keys{100000, true};
  std::vector<std::vector<Op>> streams;
  for (int t = 0; t < 2; ++t) streams.push_back(run_ops(b, keys, 1u << 18, 0x5eed, t, 2));
  const auto rate = record_handoffs_per_op(streams);
  ASSERT_TRUE(rate.has_value());
  EXPECT_GT(*rate, 0.5 * steady_state(0.05));
  EXPECT_LT(*rate, steady_state(0.05));
}

TEST(RecordHandoffs, MoreThan64ThreadsAreNotModelled) {
  EXPECT_FALSE(record_handoffs_per_op(std::vector<std::vector<Op>>(65, {read_of(1)})).has_value());
  EXPECT_TRUE(record_handoffs_per_op(std::vector<std::vector<Op>>(64, {read_of(1)})).has_value());
}

}  // namespace
}  // namespace pmlab::workload
