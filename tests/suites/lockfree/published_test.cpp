// The lock-free study's published numbers come from the reference dump, cell by cell: a few cells
// spot-checked against the dump's text, every design and range found, and nothing for what the dump
// does not have.
#include "pmlab/suites/lockfree/published.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "pmlab/model/published.hpp"

namespace pmlab::suites::lockfree {
namespace {

bool have_dump() { return std::filesystem::exists(model::reference_dir() + "/pmidiobench/lock-free-results.txt"); }

TEST(LockfreePublished, ReadsTheRingTablesByRowLabelAndColumn) {
  if (!have_dump()) GTEST_SKIP() << "no lock-free-results.txt under " << model::reference_dir();
  // rb_queue B4 and G6; the normalized table's E37.
  EXPECT_EQ(published_ring_latency("tx-adr", "push", "avg"), 10.43);
  EXPECT_EQ(published_ring_latency("txfree-eadr", "pop", "p999"), 3.34);
  EXPECT_EQ(published_r5_ratio("tx", "pop", "avg"), 1.532);
  EXPECT_FALSE(published_ring_latency("txfree-adr", "push", "avg"));
  EXPECT_FALSE(published_ring_latency("tx-adr", "peek", "avg"));
}

TEST(LockfreePublished, ReadsTheListTablesOfBothDomains) {
  if (!have_dump()) GTEST_SKIP() << "no lock-free-results.txt under " << model::reference_dir();
  // list D5 (ADR, 4096, TLog, 0 %), S35 (eADR, 256, Log-free, 50 %), latency E40 (50 %, 1024, TLog).
  EXPECT_EQ(published_list_throughput("adr", "tlog", 4096, 0), 5.289e6);
  EXPECT_EQ(published_list_throughput("eadr", "logfree", 256, 50), 2.377e7);
  EXPECT_EQ(published_list_latency("search", "tlog", 1024, 50), 2.927);
  EXPECT_EQ(published_list_latency("find", "soft", 256, 5), 0.6801);
  for (const char* domain : {"adr", "eadr"})
    for (const char* design : {"linkfree", "soft", "tlog"})
      for (int range : {256, 1024, 4096})
        for (int update : {0, 5, 10, 20, 30, 40, 50})
          EXPECT_TRUE(published_list_throughput(domain, design, range, update))
              << domain << " " << design << " " << range;
  // Log-free is an eADR design: the ADR table has no column for it.
  EXPECT_FALSE(published_list_throughput("adr", "logfree", 256, 0));
  EXPECT_FALSE(published_list_throughput("adr", "tlog", 512, 0));
  EXPECT_FALSE(published_list_throughput("adr", "tlog", 256, 15));
}

}  // namespace
}  // namespace pmlab::suites::lockfree
