// The bug corpus: designs of shapes the project's own structures do not have, each with broken twins from
// the bug classes of the studies (the header of each design's file says which). Each row names a design
// and its twins, in the order the design's file lists their variants; a twin is registered as
// corpus.broken.<design>-<twin>.
#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {

const std::vector<selftest::DesignText>& corpus_catalog() {
  static const std::vector<selftest::DesignText> catalog{
      {"bitmap-heap",
       "one-line objects, an allocation bitmap word and eight roots; recovery reclaims unnamed objects",
       {{"link-before-bit",
         "names a new object from its root before setting its bit: a crash between allocates it twice"},
        {"leak", "recovery trusts the bitmap: an object allocated but never linked leaks"}}},
      {"blob-directory",
       "immutable blobs named from a directory by version and offset, stored atomically",
       {{"plain-pointer", "stores a directory entry's word with a plain 8-byte copy (memcpy)"}}},
      {"cow-tree",
       "copy-on-write leaves with parent links, swapped into the root by an atomic store once durable",
       {{"publish-before-flush", "swaps the root's link to a leaf copy before persisting the copy", kAdrOnly}}},
      {"delta-redo",
       "counters behind a redo log of new values, applied at group checkpoints and by recovery",
       {{"replays-deltas", "the redo log holds amounts to add: replaying an applied record adds it twice"}}},
      {"dlist",
       "sorted doubly-linked list; forward links commit, recovery repairs prev links durably",
       {{"forward-only-repair", "recovery repairs no prev link after a crash between the two link stores"},
        {"unpersisted-repair", "recovery repairs prev links with plain stores it never writes back"}}},
      {"job-journal",
       "jobs counted by an atomic store; a completion mark is durable before it is acknowledged",
       {{"unfenced-ack", "acknowledges a completion before its mark is fenced (left to the next operation)"}}},
      {"length-log",
       "checksummed records behind a length written under the same fence; recovery validates it",
       {{"trusted-length", "recovery trusts a length that may have persisted before its record"}}},
      {"probe-table",
       "open addressing with tombstones; value and key durable before an atomic full mark",
       {{"unfenced-flag", "value, key and full mark written back under one fence", kAdrOnly},
        {"flag-first", "the entry's state stored before its key, in the same line, by plain stores"}}},
      {"slot-pool",
       "records in reused slots, each persisted before an atomic index store names it",
       {{"stale-reuse", "skips the record's persist when it reuses a freed slot", kAdrOnly}}},
      {"wide-counter",
       "16-byte {count, total} pairs double-buffered in their line, named by an atomic generation",
       {{"torn", "updates a 16-byte {count, total} in place with a struct assignment"}}},
      {"wrap-log",
       "records wrap around a 48-word ring; head and tail advanced by atomic stores once durable",
       {{"unflushed-wrap", "writes back a wrapping record only up to the ring's end", kAdrOnly}}},
  };
  return catalog;
}

}  // namespace pmlab::crash::corpus
