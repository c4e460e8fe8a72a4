#include "pmlab/persist/persister.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <memory>
#include <vector>

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
  void on_writeback(const void* addr, size_t len, Writeback kind) noexcept override {
    events.push_back({kind == Writeback::flush ? 'f' : 'n', reinterpret_cast<uintptr_t>(addr), len});
  }
  void on_fence() noexcept override { events.push_back({'F', 0, 0}); }
};

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
  auto no_flush = Persister::create({.domain = Domain::adr, .flush = FlushInstruction::clflush, .elide_flush = true, .elide_fence = false});
  auto no_fence = Persister::create({.domain = Domain::adr, .flush = FlushInstruction::clflush, .elide_flush = false, .elide_fence = true});
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
  Persister p = make(Domain::eadr, FlushInstruction::clwb);
  Recorder rec;
  p.attach(&rec);
  p.persist(buf->bytes, 64);
  EXPECT_EQ(rec.events.size(), 1u);
  EXPECT_EQ(rec.events[0].what, 'F');
}

// Non-temporal copies must be byte-exact for every alignment and length, on every kernel.
void check_copy_nt(const platform::CpuFeatures& cpu, Domain domain) {
  auto p = Persister::create({.domain = domain, .flush = FlushInstruction::ntstore, .elide_flush = false, .elide_fence = false}, cpu);
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
  Persister p = make(Domain::adr, FlushInstruction::clwb);
  for (size_t offset : {0, 8, 63, 64}) {
    for (size_t len : {0, 1, 64, 100, 4096, 5000, 8200}) {
      std::memset(dst->bytes, 0xee, sizeof dst->bytes);
      const Counters before = thread_counters();
      p.zero_nt(dst->bytes + offset, len);
      p.fence();
      for (size_t i = 0; i < sizeof dst->bytes; ++i)
        ASSERT_EQ(dst->bytes[i], i >= offset && i < offset + len ? 0 : 0xee) << offset << "+" << len << " @" << i;
      if (offset == 0 && len == 8200) {
        EXPECT_EQ((thread_counters() - before).nt_bytes, 8192u);
      }
    }
  }
}

// copy_nt_words: whole lines of composed words, exact, counted as non-temporal bytes and seen by the
// observer as one write-back, under every domain (a plain copy where nothing needs to reach memory).
TEST(Persister, WordCopyOfComposedLinesIsExactAndCounted) {
  for (Domain domain : {Domain::adr, Domain::eadr, Domain::none}) {
    auto dst = std::make_unique<Buffer>();
    std::memset(dst->bytes, 0xee, sizeof dst->bytes);
    alignas(64) uint64_t words[24];
    for (size_t i = 0; i < 24; ++i) words[i] = 0x0101010101010101ULL * (i + 1);
    Persister p = make(domain, FlushInstruction::clwb);
    Recorder rec;
    p.attach(&rec);
    const Counters before = thread_counters();
    p.copy_nt_words(dst->bytes + 64, words, 192);
    p.fence();
    const Counters d = thread_counters() - before;
    ASSERT_EQ(std::memcmp(dst->bytes + 64, words, 192), 0) << to_string(domain);
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(dst->bytes[i], 0xee);
    for (size_t i = 256; i < sizeof dst->bytes; ++i) ASSERT_EQ(dst->bytes[i], 0xee);
    EXPECT_EQ(d.nt_bytes, domain == Domain::none ? 0u : 192u);
    EXPECT_EQ(d.flushes, 0u);
    if (domain == Domain::none) continue;
    ASSERT_EQ(rec.events.size(), 2u);
    EXPECT_EQ(rec.events[0].what, 'n');
    EXPECT_EQ(rec.events[0].addr, reinterpret_cast<uintptr_t>(dst->bytes + 64));
    EXPECT_EQ(rec.events[0].len, 192u);
    EXPECT_EQ(rec.events[1].what, 'F');
  }
}

TEST(Persister, RefusesAnInstructionTheCpuLacks) {
  platform::CpuFeatures cpu = platform::CpuFeatures::host();
  cpu.clwb = false;
  auto p = Persister::create({.domain = Domain::adr, .flush = FlushInstruction::clwb, .elide_flush = false, .elide_fence = false}, cpu);
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
  EXPECT_EQ(masked.clflushopt, raw.clflushopt);
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

TEST(Persister, Store8IsAnAtomicAlignedWord) {
  alignas(8) uint64_t word = 0;
  Persister::store8(&word, 0x1122334455667788ULL);
  EXPECT_EQ(Persister::load8(&word), 0x1122334455667788ULL);
}

}  // namespace
}  // namespace pmlab::persist
