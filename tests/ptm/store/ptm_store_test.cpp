// The PTM store in one region: what its format and the recovery of a new store write back.
#include "pmlab/ptm/store/ptm_store.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "../../primitives/aligned_region.hpp"
#include "../../support/write_back_judge.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/ptm/common/heap.hpp"

namespace pmlab::ptm {
namespace {

persist::Persister adr() {
  return persist::Persister::create(
             {persist::Domain::adr, persist::best_line_flush(platform::CpuFeatures::host()), false, false})
      .value();
}

// A format of a new pool's region (zeros), and the recovery of the empty store it made, write back only
// lines they changed and fence only after writing: `pmlab crash exec` finds neither a redundant write-back
// nor an empty fence in a program that makes or opens a transactional heap. Over what an earlier store
// left, the format leaves the same superblock, log and heap header as on zeros.
TEST(PtmStore, AFormatAndARecoveryWriteBackOnlyWhatTheyChange) {
  for (const StoreKind kind : {StoreKind::redo, StoreKind::undo}) {
    const StoreOptions options{kind, 4, 8192};
    const uint64_t bytes = PtmStore::region_bytes(options, 64 << 10);
    testing::AlignedRegion fresh(bytes), stale(bytes);
    std::memset(fresh.base, 0, fresh.size);
    testing::WriteBackJudge judge(fresh.span());
    persist::Persister judged = adr();
    judged.attach(&judge);
    ASSERT_TRUE(PtmStore::format(fresh.span(), judged, options).ok());
    const uint64_t slot_headers = kind == StoreKind::undo ? options.slots : 0;  // the undo log's first seq
    EXPECT_EQ(judge.lines_with_news, 1 + 1 + slot_headers) << "the superblock and the heap's header";
    ASSERT_TRUE(PtmStore::open(fresh.span(), judged).ok());
    EXPECT_EQ(judge.redundant_lines, 0u);
    EXPECT_EQ(judge.empty_fences, 0u);
    EXPECT_EQ(judge.outside, 0u);

    ASSERT_TRUE(PtmStore::format(stale.span(), adr(), options).ok());
    StoreSuperblock sb;
    std::memcpy(&sb, fresh.base, sizeof sb);
    EXPECT_EQ(std::memcmp(fresh.base, stale.base, sb.heap_offset + sizeof(HeapHeader)), 0);
  }
}

}  // namespace
}  // namespace pmlab::ptm
