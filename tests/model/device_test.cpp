// The trace-driven device model, one mechanism at a time: interleaving, the write-combining buffer
// (read-modify-write, write-out of full lines, LRU eviction), the read buffer and its prefetcher, and
// how the presets of the PMEM classes of [PMIdioBench] differ.
#include "pmlab/model/device.hpp"

#include <gtest/gtest.h>

#include "pmlab/model/device_metrics.hpp"
#include "pmlab/model/interleave.hpp"
#include "pmlab/model/lru_table.hpp"
#include "pmlab/model/presets.hpp"

namespace pmlab::model {
namespace {

DeviceParams dcpmm() { return *preset("dcpmm"); }

DeviceParams one_dimm(DeviceParams p) {
  p.dimms = 1;
  return p;
}

TEST(LruTable, EvictsTheLeastRecentlyUsedLine) {
  LruTable<int> t(3);
  int* slot = nullptr;
  EXPECT_FALSE(t.insert(10, 1, &slot));
  EXPECT_FALSE(t.insert(20, 2, &slot));
  EXPECT_FALSE(t.insert(30, 3, &slot));
  ASSERT_NE(t.touch(10), nullptr);  // 20 is now the least recent
  auto evicted = t.insert(40, 4, &slot);
  ASSERT_TRUE(evicted);
  EXPECT_EQ(evicted->key, 20u);
  EXPECT_EQ(evicted->payload, 2);
  EXPECT_EQ(t.find(20), nullptr);
  EXPECT_EQ(*t.find(10), 1);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.erase(10).value_or(-1), 1);
  EXPECT_EQ(t.size(), 2u);
  std::vector<uint64_t> order;
  t.for_each([&](uint64_t key, int) { order.push_back(key); });
  EXPECT_EQ(order, (std::vector<uint64_t>{40, 30}));
}

TEST(LruTable, StaysConsistentUnderChurnOfCollidingKeys) {
  // Keys that share low bits stress the open-addressing index and its backward-shift deletion.
  LruTable<uint64_t> t(64);
  std::vector<uint64_t> live;
  uint64_t* slot = nullptr;
  for (uint64_t i = 0; i < 20000; ++i) {
    const uint64_t key = (i * 7919) % 1000 * 4096;
    if (t.find(key) != nullptr) {
      if (i % 3 == 0) t.erase(key);
      else t.touch(key);
      continue;
    }
    t.insert(key, key + 1, &slot);
  }
  uint64_t seen = 0;
  t.for_each([&](uint64_t key, uint64_t value) {
    EXPECT_EQ(value, key + 1);
    EXPECT_NE(t.find(key), nullptr);
    ++seen;
  });
  EXPECT_EQ(seen, t.size());
  EXPECT_LE(t.size(), 64u);
}

TEST(Interleave, SpreadsChunksRoundRobinAndKeepsEachDimmContiguous) {
  const Interleave il(dcpmm());  // 6 DIMMs, 4 KB chunks, 256 B lines
  EXPECT_EQ(il.locate(0).dimm, 0u);
  EXPECT_EQ(il.locate(4096).dimm, 1u);
  EXPECT_EQ(il.locate(5 * 4096).dimm, 5u);
  const Location back = il.locate(6 * 4096);
  EXPECT_EQ(back.dimm, 0u);
  EXPECT_EQ(back.line, 16u);  // DIMM 0's second chunk follows its first: lines 0-15, then 16
  const Location inner = il.locate(4096 + 3 * 256 + 2 * 64);
  EXPECT_EQ(inner.dimm, 1u);
  EXPECT_EQ(inner.line, 3u);
  EXPECT_EQ(inner.sector, 2u);
}

TEST(Device, APartialWriteReadsTheMediaLineOnce) {
  Device d(one_dimm(dcpmm()));
  d.write(0, 64);
  d.write(64, 64);  // same XPLine: combines in the buffer
  const DeviceCounters c = d.counters();
  EXPECT_EQ(c.imc_writes, 2u);
  EXPECT_EQ(c.rmw_reads, 1u);
  EXPECT_EQ(c.write_hits, 1u);
  EXPECT_EQ(c.media_writes, 0u);  // still partial, still buffered
}

TEST(Device, ACompletedLineIsWrittenOutAtOnceAndLeavesTheBuffer) {
  Device d(one_dimm(dcpmm()));
  d.write(0, 256);  // four 64 B requests complete the XPLine
  EXPECT_EQ(d.counters().media_writes, 1u);
  d.write(0, 256);  // rewritten: it left the buffer, so it is read again ([PMIdioBench] I7)
  EXPECT_EQ(d.counters().media_writes, 2u);
  EXPECT_EQ(d.counters().rmw_reads, 2u);
}

TEST(Device, ByteMasksDecideWhenALineIsComplete) {
  Device d(one_dimm(dcpmm()));
  d.write(0, 255);  // one byte short
  EXPECT_EQ(d.counters().media_writes, 0u);
  d.write(255, 1);
  EXPECT_EQ(d.counters().media_writes, 1u);
  EXPECT_EQ(d.counters().imc_writes, 5u);  // 4 requests, then one more for the last byte
}

TEST(Device, PartialLinesAreWrittenWhenTheLruEvictsThem) {
  DeviceParams p = one_dimm(dcpmm());
  p.prefetch_lines = 0;
  Device d(p);
  const uint64_t lines = p.write_buffer_lines;
  for (uint64_t l = 0; l < lines; ++l) d.write(l * 256, 64);
  EXPECT_EQ(d.counters().media_writes, 0u);
  d.write(lines * 256, 64);  // one more line: the least recent (line 0) goes to the media
  EXPECT_EQ(d.counters().media_writes, 1u);
  d.write(64, 64);  // line 0 again: a miss, so a second read-modify-write
  EXPECT_EQ(d.counters().rmw_reads, lines + 2);
}

TEST(Device, TheSequentialPrefetcherSavesReadModifyWriteReads) {
  Device d(one_dimm(dcpmm()));
  for (uint64_t a = 0; a < 64 * 256; a += 64) d.write(a, 64);
  const DeviceCounters c = d.counters();
  EXPECT_EQ(c.media_writes, 64u);
  EXPECT_EQ(c.rmw_reads, 3u);        // the first three lines, until the stream is recognised
  EXPECT_GE(c.prefetch_reads, 60u);  // the rest were on the DIMM already
  EXPECT_EQ(c.rmw_reads + c.prefetch_reads, c.media_reads);
}

TEST(Device, ReadsHitTheReadBufferAndTheWriteBuffer) {
  DeviceParams p = one_dimm(dcpmm());
  p.prefetch_lines = 0;
  Device d(p);
  d.read(0, 256);
  EXPECT_EQ(d.counters().imc_reads, 4u);
  EXPECT_EQ(d.counters().read_hits, 3u);
  EXPECT_EQ(d.counters().media_reads, 1u);
  d.write(1024, 64);
  d.read(1024 + 128, 64);  // in the write buffer
  EXPECT_EQ(d.counters().read_hits, 4u);
}

TEST(Device, ClassC1HasNoMismatchAndNoBuffer) {
  Device d(*preset("c1"));
  d.write(0, 64);
  d.write(0, 64);
  const DeviceCounters c = d.counters();
  EXPECT_EQ(c.media_writes, 2u);
  EXPECT_EQ(c.media_reads, 0u);
  EXPECT_EQ(c.write_hits, 0u);
}

TEST(Device, ClassC3ReadsAndWritesAWholeLineForEverySmallWrite) {
  Device d(*preset("c3"));
  for (uint64_t a = 0; a < 4096; a += 64) d.write(a, 64);  // even sequential: nothing combines
  const DeviceCounters c = d.counters();
  EXPECT_EQ(c.media_writes, 64u);
  EXPECT_EQ(c.rmw_reads, 64u);
}

TEST(Device, ClassC2CachesWholeSmallLines) {
  Device d(*preset("c2"));
  for (int i = 0; i < 10; ++i) d.write(0, 64);
  const DeviceCounters c = d.counters();
  EXPECT_EQ(c.media_writes, 0u);  // a write-back cache: rewrites stay on the DIMM
  EXPECT_EQ(c.media_reads, 0u);   // a whole 64 B line needs no read
  EXPECT_EQ(c.write_hits, 9u);
}

TEST(Device, ResetForgetsEverything) {
  Device d(dcpmm());
  d.write(0, 4096);
  d.reset();
  const DeviceCounters c = d.counters();
  EXPECT_EQ(c.imc_writes + c.media_writes + c.media_reads, 0u);
  EXPECT_EQ(d.busiest_dimm_ns(), 0.0);
}

TEST(Device, MediaTimeFollowsTheBandwidthOfTheBusiestDimm) {
  const DeviceParams p = one_dimm(dcpmm());
  Device d(p);
  for (int i = 0; i < 100; ++i) d.write(0, 256);  // 100 media writes and 100 reads, one DIMM
  EXPECT_NEAR(d.busiest_dimm_ns(), 100 * p.media_write_service_ns(), 1e-6);
}

// Timing, on the model's own clock (no wall time involved).
TEST(Device, LinesLeftInTheBufferCountAsWrittenForTheRatios) {
  Device d(dcpmm());
  for (uint64_t i = 0; i < 100; ++i) d.write(i * 65536, 64);  // 100 partial lines, all still buffered
  const DeviceCounters c = d.counters();
  EXPECT_EQ(c.media_writes, 0u);
  EXPECT_EQ(c.buffered_lines, 100u);
  EXPECT_DOUBLE_EQ(derive(d.params(), c, 0, 0).ewr, 0.25);  // not infinite: every line owes one write
}

TEST(Device, AWriteSpanningTwoLinesIsNoStream) {
  Device d(one_dimm(dcpmm()));
  for (uint64_t chunk = 0; chunk < 100; ++chunk) d.write(chunk * 64 * 1024, 512);  // 2 XPLines, far apart
  EXPECT_EQ(d.counters().prefetch_reads, 0u);
  EXPECT_NEAR(derive(d.params(), d.counters(), 0, 0).rwr, 1.0, 1e-9);
}

TEST(DeviceTiming, AWriteMissWaitsForItsReadModifyWriteReadAndAHitOnlyForTheWrite) {
  const DeviceParams p = one_dimm(dcpmm());
  Device d(p);
  const WriteTiming miss = d.write(0, 64, 1000.0);
  EXPECT_DOUBLE_EQ(miss.accepted_ns, 1000.0 + p.media_read_ns + p.write_ns);
  const WriteTiming hit = d.write(64, 64, 5000.0);
  EXPECT_DOUBLE_EQ(hit.accepted_ns, 5000.0 + p.write_ns);
  // A hit that comes before the line's old bytes have arrived waits for them.
  d.write(4096, 64, 9000.0);
  EXPECT_DOUBLE_EQ(d.write(4096 + 64, 64, 9010.0).accepted_ns, 9000.0 + p.media_read_ns + p.write_ns);
}

TEST(DeviceTiming, ALineWrittenAgainSoonWaitsForItsEarlierWrite) {
  const DeviceParams p = one_dimm(dcpmm());
  Device d(p);
  const double first = d.write(0, 64, 1000.0).accepted_ns;
  // The same line 10 ns later: accepted a rewrite interval after the first, not a write latency after t.
  EXPECT_DOUBLE_EQ(d.write(0, 64, 1010.0).accepted_ns, first + p.line_rewrite_ns);
  // Its neighbour in the same media line is another 64 B line: it waits only for the media line's
  // read-modify-write read, as before.
  EXPECT_DOUBLE_EQ(d.write(64, 64, 1010.0).accepted_ns, 1000.0 + p.media_read_ns + p.write_ns);
  // Long after, the line is free again.
  EXPECT_DOUBLE_EQ(d.write(0, 64, 50000.0).accepted_ns, 50000.0 + p.write_ns);
  EXPECT_EQ(d.counters().rewrite_waits, 1u);
}

TEST(DeviceTiming, WithoutARewriteIntervalALineIsRewrittenAtWriteLatency) {
  DeviceParams p = one_dimm(dcpmm());
  p.line_rewrite_ns = 0;
  Device d(p);
  d.write(0, 64, 1000.0);
  EXPECT_DOUBLE_EQ(d.write(0, 64, 2000.0).accepted_ns, 2000.0 + p.write_ns);
  EXPECT_EQ(d.counters().rewrite_waits, 0u);
}

TEST(DeviceTiming, APrefetchedLineNeedsNoReadOfItsOwn) {
  const DeviceParams p = one_dimm(dcpmm());
  Device d(p);
  double t = 0;
  for (uint64_t a = 0; a < 3 * 256; a += 64, t += 1000) d.write(a, 64, t);  // lines 0, 1, 2: a stream
  // Line 3 was prefetched when line 2 opened (at t = 8000) and has long arrived.
  EXPECT_DOUBLE_EQ(d.write(3 * 256, 64, 100000.0).accepted_ns, 100000.0 + p.write_ns);
}

TEST(DeviceTiming, WritersWaitOnceTheWriteQueueIsFull) {
  DeviceParams p = one_dimm(dcpmm());
  p.media_line_bytes = 64;  // whole-line writes: no read-modify-write timing in the way
  p.prefetch_lines = 0;
  Device d(p);
  // Lines all arriving at t = 0, each written out at once: the write queue fills, then writers wait.
  const uint64_t fits = p.write_queue_bytes / p.media_line_bytes;
  WriteTiming w;
  for (uint64_t l = 0; l < fits; ++l) w = d.write(l * 64, 64, 0.0);
  EXPECT_NEAR(w.admitted_ns, 0.0, 1e-6);
  for (uint64_t l = fits; l < fits + 10; ++l) w = d.write(l * 64, 64, 0.0);
  EXPECT_NEAR(w.admitted_ns, 10 * p.media_write_service_ns(), 1e-6);  // the backlog beyond the queue
  EXPECT_NEAR(w.accepted_ns, w.admitted_ns, 1e-6);
}

TEST(DeviceTiming, ReadsArriveFromTheBufferOrTheMedia) {
  DeviceParams p = one_dimm(dcpmm());
  p.prefetch_lines = 0;
  Device d(p);
  EXPECT_DOUBLE_EQ(d.read(0, 64, 100.0), 100.0 + p.media_read_ns);
  EXPECT_DOUBLE_EQ(d.read(64, 64, 1000.0), 1000.0 + p.buffer_read_ns);
}

}  // namespace
}  // namespace pmlab::model
