#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "pmlab/ptm/undo/undo_ptm.hpp"
#include "../memory.hpp"

namespace pmlab::ptm {
namespace {

TEST(UndoPtm, FencesPerTransactionAreLoggedWordsPlusTwoUnderAdr) {
  Memory m(1 << 16, 1, 4096);
  UndoPtm ptm(m.regions(), m.options());
  ASSERT_TRUE(ptm.format().ok());
  const persist::Counters before = persist::thread_counters();
  ptm.run(0, [&](auto& tx) {
    for (int i = 0; i < 5; ++i) tx.write(tx.root(i), 1);
    tx.write(tx.root(0), 2);  // a second write to a logged word logs nothing
  });
  const persist::Counters d = persist::thread_counters() - before;
  EXPECT_EQ(d.fences, 5u + 2u);
  EXPECT_EQ(ptm.counters().log_entries, 5u);
}

// A slot's durable sequence number grows by one per writing transaction, committed or aborted (its log
// retired either way), not at all for one that wrote nothing, and a recovery keeps it.
TEST(UndoPtm, DurableSeqOnlyGrows) {
  Memory m(1 << 16, 2, 4096);
  Options o = m.options();
  o.first_seq = (uint64_t{1} << 32) - 1;
  UndoPtm ptm(m.regions(), o);
  ASSERT_TRUE(ptm.format().ok());
  EXPECT_EQ(ptm.durable_seq(0), o.first_seq);
  ptm.run(0, [&](auto& tx) { tx.write(tx.root(0), 7); });
  EXPECT_EQ(ptm.durable_seq(0), uint64_t{1} << 32);
  EXPECT_EQ(ptm.durable_seq(1), o.first_seq);
  ptm.run(0, [&](auto& tx) { (void)tx.read(tx.root(0)); });
  EXPECT_EQ(ptm.durable_seq(0), uint64_t{1} << 32);
  EXPECT_THROW(ptm.run(1,
                       [&](auto& tx) {
                         tx.write(tx.root(1), 8);
                         throw std::runtime_error("abort");
                       }),
               std::runtime_error);
  EXPECT_EQ(ptm.durable_seq(1), uint64_t{1} << 32);
  UndoPtm reopened(m.regions(), o);
  ASSERT_TRUE(reopened.recover().ok());
  EXPECT_EQ(reopened.durable_seq(0), uint64_t{1} << 32);
  EXPECT_EQ(reopened.durable_seq(1), uint64_t{1} << 32);
}

// One fence per writing transaction (the commit record's), under ADR and eADR; none where the log is on
// DRAM declared persistent. Under ADR one flush per modified data line (nine roots in two lines: two),
// issued by the next commit; the record itself written with non-temporal stores as whole lines
// (9 entries + 32 B: three lines) under ADR.

}  // namespace
}  // namespace pmlab::ptm
