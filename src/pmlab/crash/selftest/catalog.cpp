// The self-test designs: correct designs that must pass every mode with zero failures, and their broken
// twins, each caught in the mode where its bug exists (docs/crash-simulator.md has which). Each row names a
// design and its twins in the order the design's file lists their variants. selftest.commit-record, whose
// variants also differ in their recovery, registers itself.
#include "pmlab/crash/selftest/support.hpp"

#include <cstdio>
#include <cstdlib>

namespace pmlab::crash::selftest {

const std::vector<DesignText>& selftest_catalog() {
  static const std::vector<DesignText> catalog{
      {"batch-log",
       "batches of eight two-line records, one fence, then an 8-byte commit count",
       {{"batch-log-salvage",
         "recovery rolls a whole-looking uncommitted batch forward by two (needs 8 of 18 pending lines persisted and 2 "
         "not)"}}},
      {"epoch-pair",
       "two copies and an epoch selector written with one 8-byte atomic store",
       {{"epoch-halves", "the epoch selector written as two 4-byte halves with plain stores"}}},
      {"indexed-store",
       "append-only records published by a durable count, DRAM index beside",
       {{"indexed-store-dram-count", "recovery trusts the record count it kept in DRAM during the run"}}},
      {"lazy-transfer",
       "transfers committed as redo intents, applied later and retired durably",
       {{"lazy-transfer-volatile-repair",
         "recovery applies and retires the committed intent with plain stores it never persists"}}},
      {"offset-stack",
       "linked stack, links are offsets from the image base",
       {{"absolute-stack", "linked stack whose links are absolute addresses of the run's mapping"},
        {"absolute-stack-unflushed",
         "absolute links, and a pushed node is never flushed (hidden while recovery reads live memory)"}}},
      {"register-file",
       "registers of two slots and a state word flipped by one atomic store",
       {{"register-busy-mark", "marks a register busy in its state word while writing, never flushing the mark"}}},
      {"scan-log",
       "variable-length entries, recovery validates length and checksum",
       {{"unvalidated-length", "recovery trusts an entry's length without validating it"}}},
      {"shared-register",
       "a register written by one thread, read by another; a read persists a value still dirty",
       {{"shared-register-read-unpersisted",
         "a read returns a value its writer has not yet made durable (found only when threads interleave)", kAdrOnly}}},
      {"triple-log",
       "three-line self-validating records, torn tails erased durably",
       {{"triple-log-unsafe-repair", "repairing a tail of one valid line, recovery briefly unlinks the last record"}}},
  };
  return catalog;
}

const DesignText& catalog_row(const std::vector<DesignText>& catalog, const std::string& name, size_t twins) {
  for (const DesignText& row : catalog)
    if (row.name == name) {
      if (row.twins.size() == twins) return row;
      std::fprintf(stderr, "pmlab: the catalog lists %zu broken twins of %s, its file registers %zu\n",
                   row.twins.size(), name.c_str(), twins);
      std::abort();
    }
  std::fprintf(stderr, "pmlab: design %s is registered but not in its family's catalog\n", name.c_str());
  std::abort();
}

}  // namespace pmlab::crash::selftest
