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

// One fence per writing transaction (the commit record's), under ADR and eADR; none where the log is on
// DRAM declared persistent. Under ADR one flush per modified data line (nine roots in two lines: two),
// issued by the next commit; the record itself written with non-temporal stores as whole lines
// (9 entries + 32 B: three lines) under ADR.

}  // namespace
}  // namespace pmlab::ptm
