#include "pmlab/persist/persister.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "pmlab/persist/tracing_runtime.hpp"

namespace pmlab::persist {
namespace {

// Records what the vocabulary reports, in order.
struct Recorder final : Observer {
  struct Event {
    char what;  // 'f' flush, 'n' non-temporal, 'F' fence
    uintptr_t addr;
    size_t len;
  };
  std::vector<Event> events;
  void on_writeback(const void* addr, size_t len, Writeback kind, const std::source_location&) noexcept override {
    events.push_back({kind == Writeback::flush ? 'f' : 'n', reinterpret_cast<uintptr_t>(addr), len});
  }
  void on_fence(const std::source_location&) noexcept override { events.push_back({'F', 0, 0}); }
};

// The line write-back this CPU has (clwb, else clflushopt, else clflush): a test of what every write-back
// does must not fail on a CPU without clwb.
const FlushInstruction kLineFlush = best_line_flush(platform::CpuFeatures::host());

Persister make(Domain d, FlushInstruction f) {
  auto p = Persister::create({.domain = d, .flush = f, .elide_flush = false, .elide_fence = false});
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

struct alignas(64) Buffer {
  unsigned char bytes[64 * 64];
};

TEST(Persister, AdrFlushesEveryLineOfTheRangeAndFencesOnce) {
  auto buf = std::make_unique<Buffer>();
  Persister p = make(Domain::adr, best_line_flush(platform::CpuFeatures::host()));
  const Counters before = thread_counters();
  p.persist(buf->bytes, 256);
  Counters d = thread_counters() - before;
  EXPECT_EQ(d.flushes, 4u);
  EXPECT_EQ(d.flushed_bytes, 256u);
  EXPECT_EQ(d.fences, 1u);
  // An unaligned 64-byte range touches two lines.
  const Counters before2 = thread_counters();
  p.flush(buf->bytes + 32, 64);
  EXPECT_EQ((thread_counters() - before2).flushes, 2u);
}

TEST(Persister, EadrFencesWithoutFlushingAndNoneDoesNeither) {
  auto buf = std::make_unique<Buffer>();
  Persister eadr = make(Domain::eadr, FlushInstruction::clflush);
  Counters before = thread_counters();
  eadr.persist(buf->bytes, 1024);
  Counters d = thread_counters() - before;
  EXPECT_EQ(d.flushes, 0u);
  EXPECT_EQ(d.fences, 1u);
  EXPECT_STREQ(eadr.line_flush_name(), "none");

  Persister none = make(Domain::none, FlushInstruction::clflush);
  before = thread_counters();
  none.persist(buf->bytes, 1024);
  d = thread_counters() - before;
  EXPECT_EQ(d.flushes + d.fences, 0u);
}

TEST(Persister, ElisionSwitchesOffEachCostSeparately) {
  auto buf = std::make_unique<Buffer>();
  auto no_flush = Persister::create(
      {.domain = Domain::adr, .flush = FlushInstruction::clflush, .elide_flush = true, .elide_fence = false});
  auto no_fence = Persister::create(
      {.domain = Domain::adr, .flush = FlushInstruction::clflush, .elide_flush = false, .elide_fence = true});
  ASSERT_TRUE(no_flush.ok() && no_fence.ok());
  Counters before = thread_counters();
  no_flush->persist(buf->bytes, 128);
  Counters d = thread_counters() - before;
  EXPECT_EQ(d.flushes, 0u);
  EXPECT_EQ(d.fences, 1u);
  before = thread_counters();
  no_fence->persist(buf->bytes, 128);
  d = thread_counters() - before;
  EXPECT_EQ(d.flushes, 2u);
  EXPECT_EQ(d.fences, 0u);
}

TEST(Persister, ObserverSeesWholeLinesThenTheFence) {
  auto buf = std::make_unique<Buffer>();
  Persister p = make(Domain::adr, FlushInstruction::clflush);
  Recorder rec;
  p.attach(&rec);
  p.persist(buf->bytes + 70, 100);  // bytes 70..169: lines 1 and 2
  p.detach();
  p.persist(buf->bytes, 64);  // not observed
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[0].what, 'f');
  EXPECT_EQ(rec.events[0].addr, reinterpret_cast<uintptr_t>(buf->bytes + 64));
  EXPECT_EQ(rec.events[0].len, 128u);
  EXPECT_EQ(rec.events[1].what, 'F');
}

TEST(Persister, ObserverSeesFencesEvenWhereNoInstructionIsIssued) {
  auto buf = std::make_unique<Buffer>();
  Persister p = make(Domain::eadr, kLineFlush);
  Recorder rec;
  p.attach(&rec);
  p.persist(buf->bytes, 64);
  EXPECT_EQ(rec.events.size(), 1u);
  EXPECT_EQ(rec.events[0].what, 'F');
}

// A persister derived for another configuration (a log's domain, an elided fence) reports to the run's
// observer (the device model, the crash tracker); one for non-persistent memory reports to nobody.
TEST(Persister, ADerivedPersisterKeepsTheRunsObserver) {
  auto buf = std::make_unique<Buffer>();
  Persister p = make(Domain::adr, kLineFlush);
  Recorder rec;
  p.attach(&rec);
  Config elided = p.config();
  elided.elide_fence = true;
  auto derived = p.derive(elided);
  ASSERT_TRUE(derived.ok());
  derived->persist(buf->bytes, 64);
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[0].what, 'f');
  EXPECT_EQ(rec.events[1].what, 'F');  // observed although no fence is issued
  EXPECT_FALSE(derived->issues_fences());

  Config dram = p.config();
  dram.domain = Domain::none;
  auto volatile_one = p.derive(dram);
  ASSERT_TRUE(volatile_one.ok());
  volatile_one->persist(buf->bytes, 64);
  EXPECT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(volatile_one->observer(), nullptr);
}

// Untraced (no `pmlab crash exec` runtime in the process), a Persister has no observer attached and
// detach() leaves none: its calls take the unobserved path. The traced side is tested end to end
// (tests/cli/test_library.py).
TEST(Persister, OutsideATracedProcessNothingIsAttached) {
  EXPECT_EQ(tracing_runtime_observer(), nullptr);
  auto p = Persister::create({.domain = Domain::adr, .flush = FlushInstruction::clflush});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->observer(), nullptr);
  Recorder rec;
  p->attach(&rec);
  p->detach();
  EXPECT_EQ(p->observer(), nullptr);
}

// Non-temporal copies must be byte-exact for every alignment and length, on every kernel.
void check_copy_nt(const platform::CpuFeatures& cpu, Domain domain) {
  auto p = Persister::create(
      {.domain = domain, .flush = FlushInstruction::ntstore, .elide_flush = false, .elide_fence = false}, cpu);
  ASSERT_TRUE(p.ok());
  auto dst = std::make_unique<Buffer>();
  auto src = std::make_unique<Buffer>();
  for (size_t i = 0; i < sizeof src->bytes; ++i) src->bytes[i] = static_cast<unsigned char>(i * 7 + 3);
  for (size_t offset : {0, 1, 17, 63, 64, 100}) {
    for (size_t len : {0, 1, 8, 63, 64, 65, 127, 128, 129, 1000, 2048}) {
      std::memset(dst->bytes, 0xee, sizeof dst->bytes);
      p->copy_nt(dst->bytes + offset, src->bytes + 5, len);
      p->fence();
      ASSERT_EQ(std::memcmp(dst->bytes + offset, src->bytes + 5, len), 0) << "offset " << offset << " len " << len;
      for (size_t i = 0; i < offset; ++i) ASSERT_EQ(dst->bytes[i], 0xee);
      for (size_t i = offset + len; i < sizeof dst->bytes; ++i) ASSERT_EQ(dst->bytes[i], 0xee) << i;
    }
  }
}

TEST(Persister, NonTemporalCopyIsExactOnEveryKernel) {
  platform::CpuFeatures cpu = platform::CpuFeatures::host();
  check_copy_nt(cpu, Domain::adr);
  check_copy_nt(cpu, Domain::eadr);
  check_copy_nt(cpu, Domain::none);
  cpu.avx512f = false;
  check_copy_nt(cpu, Domain::adr);
  cpu.avx2 = false;
  check_copy_nt(cpu, Domain::adr);
}

TEST(Persister, NonTemporalCopyCountsBodyBytesAndFlushesEdges) {
  auto dst = std::make_unique<Buffer>();
  auto src = std::make_unique<Buffer>();
  Persister p = make(Domain::adr, FlushInstruction::ntstore);
  Recorder rec;
  p.attach(&rec);
  const Counters before = thread_counters();
  p.copy_persist(dst->bytes + 32, src->bytes, 256);  // 32 head + 192 body + 32 tail
  const Counters d = thread_counters() - before;
  EXPECT_EQ(d.nt_bytes, 192u);
  EXPECT_EQ(d.flushes, 2u);
  EXPECT_EQ(d.fences, 1u);
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[0].what, 'n');
  EXPECT_EQ(rec.events[0].len, 256u);
  EXPECT_EQ(rec.events[1].what, 'F');
}

// zero_nt: exactly the range, for every alignment and for lengths beyond its internal 4 KiB block.
TEST(Persister, NonTemporalZeroingIsExact) {
  struct alignas(64) Big {
    unsigned char bytes[3 * 4096];
  };
  auto dst = std::make_unique<Big>();
  Persister p = make(Domain::adr, kLineFlush);
  for (size_t offset : {0, 8, 63, 64}) {
    for (size_t len : {0, 1, 64, 100, 4096, 5000, 8200}) {
      std::memset(dst->bytes, 0xee, sizeof dst->bytes);
      const Counters before = thread_counters();
      p.zero_nt(dst->bytes + offset, len);
      p.fence();
      for (size_t i = 0; i < sizeof dst->bytes; ++i)
        ASSERT_EQ(dst->bytes[i], i >= offset && i < offset + len ? 0 : 0xee) << offset << "+" << len << " @" << i;
      if (offset == 0 && len == 8200) { EXPECT_EQ((thread_counters() - before).nt_bytes, 8192u); }
    }
  }
}

// store_changed: only the lines whose bytes differ are stored and written back, a run of them as one
// write-back, a partial line at either end compared on its own bytes; no fence. Under `ntstore` the same
// lines go non-temporally; under domain none nothing is written back, yet the bytes are stored.
TEST(Persister, StoreChangedWritesBackOnlyTheLinesThatDiffer) {
  struct Case {
    Domain domain;
    FlushInstruction flush;
    char writeback;  // the Recorder's event: 'f' flush, 'n' non-temporal, 0 none
  };
  for (const Case c : {Case{Domain::adr, kLineFlush, 'f'}, Case{Domain::adr, FlushInstruction::ntstore, 'n'},
                       Case{Domain::none, kLineFlush, 0}}) {
    auto dst = std::make_unique<Buffer>();
    auto src = std::make_unique<Buffer>();
    std::memset(dst->bytes, 0, sizeof dst->bytes);
    std::memset(src->bytes, 0, sizeof src->bytes);
    src->bytes[3 * 64 + 5] = 1;  // lines 3 and 4 differ: one run
    src->bytes[4 * 64] = 2;
    src->bytes[10 * 64 + 63] = 3;  // line 10: one more
    src->bytes[12 * 64 + 4] = 4;   // line 12: differs in the part the first range covers
    Persister p = make(c.domain, c.flush);
    Recorder rec;
    p.attach(&rec);
    const size_t split = 12 * 64 + 8;  // the first range ends, the second starts, mid-line 12
    EXPECT_EQ(p.store_changed(dst->bytes + 64, src->bytes + 64, split - 64), 4u);
    EXPECT_EQ(p.store_changed(dst->bytes + split, src->bytes + split, 8 * 64), 0u) << "nothing differs there";
    EXPECT_EQ(std::memcmp(dst->bytes, src->bytes, sizeof dst->bytes), 0);
    std::vector<std::pair<uintptr_t, size_t>> written;
    for (const auto& e : rec.events) {
      EXPECT_EQ(e.what, c.writeback) << "store_changed does not fence";
      written.emplace_back(e.addr - reinterpret_cast<uintptr_t>(dst->bytes), e.len);
    }
    if (c.writeback == 0) {
      EXPECT_TRUE(written.empty());
      continue;
    }
    // A flush covers whole lines; non-temporal stores exactly the bytes of the partial line.
    const std::vector<std::pair<uintptr_t, size_t>> expected{
        {3 * 64, 128}, {10 * 64, 64}, {12 * 64, c.writeback == 'n' ? 8u : 64u}};
    EXPECT_EQ(written, expected) << to_string(c.flush);
  }
}

// zero_changed over a range that starts and ends mid-line: bytes outside it are neither compared nor
// stored, and the count is that of the lines whose part in the range held anything.
TEST(Persister, ZeroChangedLeavesZeroLinesAndBytesOutsideTheRange) {
  auto buf = std::make_unique<Buffer>();
  std::memset(buf->bytes, 0, sizeof buf->bytes);
  buf->bytes[0] = 9;            // before the range, in its first line
  buf->bytes[70] = 7;           // line 1
  buf->bytes[5 * 64] = 5;       // line 5
  buf->bytes[8 * 64 + 40] = 8;  // after the range, in its last line
  Persister p = make(Domain::adr, kLineFlush);
  Recorder rec;
  p.attach(&rec);
  EXPECT_EQ(p.zero_changed(buf->bytes + 8, 8 * 64), 2u);
  EXPECT_EQ(buf->bytes[0], 9);
  EXPECT_EQ(buf->bytes[70], 0);
  EXPECT_EQ(buf->bytes[5 * 64], 0);
  EXPECT_EQ(buf->bytes[8 * 64 + 40], 8);
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[0].addr, reinterpret_cast<uintptr_t>(buf->bytes + 64));
  EXPECT_EQ(rec.events[1].addr, reinterpret_cast<uintptr_t>(buf->bytes + 5 * 64));
  EXPECT_EQ(p.zero_changed(buf->bytes + 8, 8 * 64), 0u);
  EXPECT_EQ(rec.events.size(), 2u) << "a second zeroing finds nothing to write back";
}

// What store_record_nt must leave in a line-aligned buffer: the record byte by byte, zeros to the end of
// its last line.
std::vector<unsigned char> expected_lines(const LineRecord& r) {
  std::vector<unsigned char> out(r.line_bytes(), 0);
  if (out.empty()) return out;  // an empty record stores no line
  std::memcpy(out.data(), r.prefix, r.prefix_len);
  std::memcpy(out.data() + r.prefix_len, r.words, 8 * r.word_count);
  if (r.body_len > 0) std::memcpy(out.data() + r.prefix_len + 8 * r.word_count, r.body, r.body_len);
  return out;
}

// Every split of prefix, words and body, on both kernels and under every domain: exact lines, nothing
// stored past them, the last line handed back, counted as non-temporal bytes and seen as one write-back.
TEST(Persister, RecordStoreIsExactOnEveryKernel) {
  platform::CpuFeatures portable = platform::CpuFeatures::host();
  portable.avx512bw = false;
  std::vector<platform::CpuFeatures> cpus{portable};
  if (platform::CpuFeatures::host().avx512bw) cpus.push_back(platform::CpuFeatures::host());
  alignas(64) unsigned char prefix[64];
  std::vector<unsigned char> body(1200 + 8);
  for (size_t i = 0; i < sizeof prefix; ++i) prefix[i] = static_cast<unsigned char>(0xa0 + i);
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<unsigned char>(i * 7 + 1);
  for (const auto& cpu : cpus) {
    for (Domain domain : {Domain::adr, Domain::eadr, Domain::none}) {
      const Config config{.domain = domain, .flush = kLineFlush, .elide_flush = false, .elide_fence = false};
      auto p = Persister::create(config, cpu);
      ASSERT_TRUE(p.ok());
      EXPECT_STREQ(p->nt_record_kernel_name(), cpu.avx512bw ? "avx512bw" : "movnti");
      for (uint32_t prefix_len = 0; prefix_len < 64; prefix_len += 8) {
        for (uint32_t word_count = 0; word_count <= 2; ++word_count) {
          // Up to 1 KiB of lines the portable path composes a record whole; beyond, only its edge lines.
          for (size_t body_len :
               {0, 1, 7, 8, 9, 40, 47, 48, 55, 56, 63, 64, 65, 127, 128, 129, 200, 256, 300, 1000, 1100, 1136}) {
            for (size_t misalign : {0, 3}) {
              LineRecord r{};
              r.prefix = prefix;
              r.prefix_len = prefix_len;
              r.word_count = word_count;
              r.words[0] = 0x1122334455667788ULL;
              r.words[1] = 0x99aabbccddeeff00ULL;
              r.body = body_len > 0 ? body.data() + misalign : nullptr;
              r.body_len = body_len;
              auto dst = std::make_unique<Buffer>();
              std::memset(dst->bytes, 0xee, sizeof dst->bytes);
              alignas(64) unsigned char last[64];
              std::memset(last, 0xee, sizeof last);
              Recorder rec;
              p->attach(&rec);
              const Counters before = thread_counters();
              p->store_record_nt(dst->bytes, r, last);
              const Counters d = thread_counters() - before;
              p->detach();
              const auto want = expected_lines(r);
              const std::string what = std::string(p->nt_record_kernel_name()) + " " + to_string(domain) + " prefix " +
                                       std::to_string(prefix_len) + " words " + std::to_string(word_count) + " body " +
                                       std::to_string(body_len) + "+" + std::to_string(misalign);
              if (!want.empty()) { ASSERT_EQ(std::memcmp(dst->bytes, want.data(), want.size()), 0) << what; }
              for (size_t i = want.size(); i < sizeof dst->bytes; ++i) ASSERT_EQ(dst->bytes[i], 0xee) << what;
              if (r.end() % 64 != 0) ASSERT_EQ(std::memcmp(last, want.data() + want.size() - 64, 64), 0) << what;
              else
                for (unsigned char c : last) ASSERT_EQ(c, 0) << what;
              EXPECT_EQ(d.flushes, 0u);
              EXPECT_EQ(d.nt_bytes, domain == Domain::none ? 0u : want.size()) << what;
              if (domain == Domain::none) continue;
              ASSERT_EQ(rec.events.size(), 1u) << what;
              EXPECT_EQ(rec.events[0].what, 'n');
              EXPECT_EQ(rec.events[0].len, want.size());
            }
          }
        }
      }
    }
  }
}

// The vector kernel loads whole lines under byte masks: a body that ends where readable memory ends, or
// starts where it begins, must not fault on the masked-off bytes (nor must the portable path read them).
TEST(Persister, RecordStoreReadsNoByteOutsideItsParts) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* guarded =
      static_cast<unsigned char*>(mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(guarded, MAP_FAILED);
  ASSERT_EQ(mprotect(guarded, page, PROT_NONE), 0);
  ASSERT_EQ(mprotect(guarded + 2 * page, page, PROT_NONE), 0);
  unsigned char* readable = guarded + page;
  for (size_t i = 0; i < page; ++i) readable[i] = static_cast<unsigned char>(i ^ 0x5a);
  platform::CpuFeatures portable = platform::CpuFeatures::host();
  portable.avx512bw = false;
  for (const auto& cpu : {platform::CpuFeatures::host(), portable}) {
    const Config config{.domain = Domain::adr, .flush = kLineFlush, .elide_flush = false, .elide_fence = false};
    Persister p = std::move(Persister::create(config, cpu)).value();
    for (size_t body_len : {1, 13, 64, 100}) {
      for (const unsigned char* body : {readable, readable + page - body_len}) {
        LineRecord r{};
        r.prefix = readable + page - 24;  // the prefix ends at the guard too
        r.prefix_len = 24;
        r.word_count = 1;
        r.words[0] = 42;
        r.body = body;
        r.body_len = body_len;
        auto dst = std::make_unique<Buffer>();
        p.store_record_nt(dst->bytes, r, nullptr);
        const auto want = expected_lines(r);
        ASSERT_EQ(std::memcmp(dst->bytes, want.data(), want.size()), 0) << p.nt_record_kernel_name() << " " << body_len;
      }
    }
  }
  munmap(guarded, 3 * page);
}

TEST(Persister, RefusesAnInstructionTheCpuLacks) {
  platform::CpuFeatures cpu = platform::CpuFeatures::host();
  cpu.clwb = false;
  auto p = Persister::create(
      {.domain = Domain::adr, .flush = FlushInstruction::clwb, .elide_flush = false, .elide_fence = false}, cpu);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Errc::unsupported);
  EXPECT_NE(p.status().message().find("clwb"), std::string::npos);
  cpu.clflushopt = false;
  EXPECT_EQ(best_line_flush(cpu), FlushInstruction::clflush);
}

TEST(Persister, EnvironmentMasksHardwarePaths) {
  platform::CpuFeatures raw = platform::CpuFeatures::detect_raw();
  setenv("PMLAB_NO_CLWB", "1", 1);
  setenv("PMLAB_NO_AVX2", "1", 1);
  platform::CpuFeatures masked = raw.masked_by_environment();
  unsetenv("PMLAB_NO_CLWB");
  unsetenv("PMLAB_NO_AVX2");
  EXPECT_FALSE(masked.clwb);
  EXPECT_FALSE(masked.avx2);
  EXPECT_FALSE(masked.avx512f);
  EXPECT_FALSE(masked.avx512bw);
  EXPECT_FALSE(masked.avx512vpopcntdq);
  EXPECT_EQ(masked.clflushopt, raw.clflushopt);
  setenv("PMLAB_NO_AVX512", "1", 1);
  const platform::CpuFeatures no512 = raw.masked_by_environment();
  unsetenv("PMLAB_NO_AVX512");
  EXPECT_FALSE(no512.avx512bw);
  EXPECT_EQ(no512.avx2, raw.avx2);
}

TEST(Persister, DefaultConfigCanBeForcedAndRejectsNonsense) {
  const auto& cpu = platform::CpuFeatures::host();
  setenv("PMLAB_FORCE_DOMAIN", "eadr", 1);
  setenv("PMLAB_FORCE_FLUSH", "clflush", 1);
  auto forced = default_config(Domain::adr, cpu);
  setenv("PMLAB_FORCE_DOMAIN", "battery", 1);
  auto bad = default_config(Domain::adr, cpu);
  unsetenv("PMLAB_FORCE_DOMAIN");
  unsetenv("PMLAB_FORCE_FLUSH");
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->domain, Domain::eadr);
  EXPECT_EQ(forced->flush, FlushInstruction::clflush);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("PMLAB_FORCE_DOMAIN"), std::string::npos);
  auto plain = default_config(Domain::adr, cpu);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->flush, best_line_flush(cpu));
}

TEST(Persister, ParsesAndNamesDomainsAndInstructions) {
  EXPECT_EQ(*parse_domain("eadr"), Domain::eadr);
  EXPECT_EQ(*parse_flush("clflushopt"), FlushInstruction::clflushopt);
  EXPECT_FALSE(parse_domain("ADR").ok());
  EXPECT_FALSE(parse_flush("wbinvd").ok());
  EXPECT_STREQ(to_string(FlushInstruction::ntstore), "ntstore");
}

TEST(Persister, Store8IsAnAtomicAlignedWordTheObserverSees) {
  alignas(8) uint64_t word = 0;
  Persister::volatile_memory().store8(&word, 0x1122334455667788ULL);
  EXPECT_EQ(Persister::load8(&word), 0x1122334455667788ULL);

  struct Stores final : Observer {
    std::vector<std::pair<char, size_t>> seen;  // 'b' before / 'a' after, size
    void on_writeback(const void*, size_t, Writeback, const std::source_location&) noexcept override {}
    void on_fence(const std::source_location&) noexcept override {}
    void before_store(const void*, size_t len, const std::source_location&) noexcept override {
      seen.push_back({'b', len});
    }
    void after_atomic_store(const void*, size_t len, const std::source_location&) noexcept override {
      seen.push_back({'a', len});
    }
  } stores;
  Persister p = make(Domain::adr, kLineFlush);
  p.attach(&stores);
  p.store8(&word, 7);
  uint64_t expected = 7;
  EXPECT_TRUE(p.word(&word).compare_exchange_strong(expected, 9));
  EXPECT_EQ(p.word(&word).fetch_add(1), 9u);
  p.detach();
  EXPECT_EQ(word, 10u);
  EXPECT_EQ(stores.seen,
            (std::vector<std::pair<char, size_t>>{{'b', 8}, {'a', 8}, {'b', 8}, {'a', 8}, {'b', 8}, {'a', 8}}));
}

// Every call names its site; persist() is a flush and a fence at one site, each of which a mutation can
// drop on its own; a split store is two plain halves.
TEST(Persister, AMutationChangesOneCallAtOneSite) {
  struct Mutator final : Observer {
    Call target;
    Mutation how;
    uint32_t line = 0;
    std::vector<char> events;
    std::vector<uint32_t> lines;
    int halves = 0;
    uint64_t split_before = 0, split_after = 0;
    void on_writeback(const void*, size_t, Writeback, const std::source_location& where) noexcept override {
      events.push_back('w');
      lines.push_back(where.line());
    }
    void on_fence(const std::source_location& where) noexcept override {
      events.push_back('F');
      lines.push_back(where.line());
    }
    void before_store(const void*, size_t len, const std::source_location&) noexcept override { halves += len == 4; }
    void after_split_store(const void*, uint64_t from, uint64_t to, const std::source_location&) noexcept override {
      split_before = from;
      split_after = to;
    }
    Mutation mutation(Call call, const void*, size_t, const std::source_location& where) noexcept override {
      return call == target && where.line() == line ? how : Mutation::none;
    }
  };
  auto buf = std::make_unique<Buffer>();
  Persister p = make(Domain::adr, kLineFlush);
  Mutator m;
  m.target = Call::fence;
  m.how = Mutation::drop;
  p.attach(&m);
  const uint32_t persist_line = std::source_location::current().line() + 1;
  p.persist(buf->bytes, 64);
  EXPECT_EQ(m.lines, (std::vector<uint32_t>{persist_line, persist_line}));  // flush and fence, one site
  m.events.clear();
  const Counters before = thread_counters();
  m.line = std::source_location::current().line() + 1;
  p.persist(buf->bytes, 64);  // this line: its fence is dropped, its flush is not
  EXPECT_EQ(m.events, (std::vector<char>{'w'}));
  EXPECT_EQ((thread_counters() - before).fences, 0u);

  alignas(8) uint64_t word = 0;
  m.target = Call::atomic_store;
  m.how = Mutation::split;
  m.line = std::source_location::current().line() + 1;
  p.store8(&word, 0x0000000100000002ULL);
  EXPECT_EQ(word, 0x0000000100000002ULL);
  EXPECT_EQ(m.halves, 2);
  EXPECT_EQ(m.split_before, 0u);  // the observer hears both values, to judge what the split could tear
  EXPECT_EQ(m.split_after, 0x0000000100000002ULL);
  m.line = std::source_location::current().line() + 1;
  p.store8(&word, 0x0000000100000003ULL);
  EXPECT_EQ(m.split_before, 0x0000000100000002ULL);
  EXPECT_EQ(m.split_after, 0x0000000100000003ULL);
  p.detach();
}

TEST(Persister, StoreSharedIsAPlainStoreThatIsNeverMutated) {
  struct Watcher final : Observer {
    int before = 0, atomic = 0, asked = 0;
    void on_writeback(const void*, size_t, Writeback, const std::source_location&) noexcept override {}
    void on_fence(const std::source_location&) noexcept override {}
    void before_store(const void*, size_t len, const std::source_location&) noexcept override { before += len == 8; }
    void after_atomic_store(const void*, size_t, const std::source_location&) noexcept override { ++atomic; }
    Mutation mutation(Call, const void*, size_t, const std::source_location&) noexcept override {
      ++asked;
      return Mutation::split;
    }
  } w;
  Persister p = make(Domain::adr, kLineFlush);
  p.attach(&w);
  alignas(8) uint64_t word = 0;
  p.store_shared(&word, 0x0000000100000002ULL);
  p.detach();
  EXPECT_EQ(word, 0x0000000100000002ULL);  // whole, though the observer would split any store it is asked about
  EXPECT_EQ(w.before, 1);
  EXPECT_EQ(w.atomic, 0);  // not an atomic store to the simulator: its bytes may tear
  EXPECT_EQ(w.asked, 0);   // and no mutant
}

TEST(Persister, DeclaringVolatileReachesTheObserverOnly) {
  struct Volatiles final : Observer {
    size_t bytes = 0;
    void on_writeback(const void*, size_t, Writeback, const std::source_location&) noexcept override {}
    void on_fence(const std::source_location&) noexcept override {}
    void on_volatile(const void*, size_t len) noexcept override { bytes += len; }
  } v;
  auto buf = std::make_unique<Buffer>();
  Persister p = make(Domain::adr, kLineFlush);
  const Counters before = thread_counters();
  p.declare_volatile(buf->bytes, 128);  // no observer: nothing at all
  p.attach(&v);
  p.declare_volatile(buf->bytes, 128);
  p.detach();
  EXPECT_EQ(v.bytes, 128u);
  const Counters d = thread_counters() - before;
  EXPECT_EQ(d.flushes + d.fences + d.nt_bytes, 0u);
}

}  // namespace
}  // namespace pmlab::persist
