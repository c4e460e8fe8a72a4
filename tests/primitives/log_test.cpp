// Log writers: the append / recover / iterate / truncate contract for every writer, recovery from torn
// appends and interrupted truncations made by hand, concurrent lanes, bad input, and the "log" pool layout.
#include "pmlab/primitives/log/log.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "../support/temp_dir.hpp"
#include "../support/write_back_judge.hpp"
#include "aligned_region.hpp"
#include "fence_snapshots.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/primitives/log/on_media.hpp"

namespace pmlab::primitives::log {
namespace {

using Region = pmlab::testing::AlignedRegion;

const persist::Persister& adr() {
  static const persist::Persister p = [] {
    auto made = persist::Persister::create({persist::Domain::adr, persist::FlushInstruction::clflush, false, false});
    EXPECT_TRUE(made.ok());
    return *made;
  }();
  return p;
}

struct Writer {
  Kind kind;
  bool padded;
  Stores stores;
};

std::vector<Writer> all_writers() {
  std::vector<Writer> out;
  for (Kind k : {Kind::classic, Kind::header, Kind::header_dancing, Kind::zero})
    for (bool padded : {false, true})
      for (Stores stores : {Stores::cached, Stores::streaming}) out.push_back({k, padded, stores});
  return out;
}

std::string label(const ::testing::TestParamInfo<Writer>& info) {
  std::string name = writer_name(info.param.kind, info.param.padded) + "_" + to_string(info.param.stores);
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

// Deterministic payloads: entry i has i % 300 + (i % 7 == 0 ? 0 : 1) bytes, so sizes cross lines.
std::vector<std::byte> payload(uint64_t i) {
  std::vector<std::byte> p(i % 7 == 0 ? 0 : 1 + (i * 37) % 300);
  for (size_t k = 0; k < p.size(); ++k) p[k] = static_cast<std::byte>((i * 131 + k * 7) % 251 + 1);
  return p;
}

bool same(const Entry& e, const std::vector<std::byte>& want) {
  return e.payload.size() == want.size() && std::equal(want.begin(), want.end(), e.payload.begin());
}

class LogWriter : public ::testing::TestWithParam<Writer> {
 protected:
  Stores stores() const { return GetParam().stores; }
  Options options(uint32_t lanes = 2) const {
    Options o;
    o.kind = GetParam().kind;
    o.padded = GetParam().padded;
    o.stores = GetParam().stores;
    o.lanes = lanes;
    o.dancing_slots = 4;
    return o;
  }
};

TEST_P(LogWriter, AppendIterateReopenTruncate) {
  Region region(64 << 10);
  std::vector<uint64_t> lsns;
  {
    auto log = Log::format(region.span(), adr(), options());
    ASSERT_TRUE(log.ok()) << log.status().message();
    EXPECT_EQ((*log)->name(), writer_name(GetParam().kind, GetParam().padded));
    for (uint64_t i = 0; i < 40; ++i) {
      const auto p = payload(i);
      auto lsn = (*log)->append(static_cast<uint32_t>(i % 2), p.data(), p.size());
      ASSERT_TRUE(lsn.ok()) << lsn.status().message();
      if (!lsns.empty()) { EXPECT_GT(*lsn, lsns.back()); }
      lsns.push_back(*lsn);
    }
    auto entries = (*log)->entries();
    ASSERT_EQ(entries.size(), 40u);
    for (uint64_t i = 0; i < 40; ++i) {
      EXPECT_EQ(entries[i].lsn, lsns[i]);
      EXPECT_EQ(entries[i].lane, i % 2);
      EXPECT_TRUE(same(entries[i], payload(i))) << "entry " << i;
    }
  }
  // Reopen at the same place: recovery keeps everything, and appends continue after the last LSN.
  auto log = Log::open(region.span(), adr(), stores());
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ((*log)->recovery().entries, 40u);
  EXPECT_EQ((*log)->recovery().torn_tails, 0u);
  EXPECT_TRUE(Log::check(region.span()).ok());
  auto entries = (*log)->entries();
  ASSERT_EQ(entries.size(), 40u);
  for (uint64_t i = 0; i < 40; ++i) EXPECT_TRUE(same(entries[i], payload(i)));
  auto next = (*log)->append(1, "x", 1);
  ASSERT_TRUE(next.ok());
  EXPECT_GT(*next, lsns.back());

  ASSERT_TRUE((*log)->truncate().ok());
  EXPECT_TRUE((*log)->entries().empty());
  EXPECT_EQ((*log)->lane_used(0), 0u);
  const auto p = payload(3);
  auto after = (*log)->append(0, p.data(), p.size());
  ASSERT_TRUE(after.ok());
  EXPECT_GT(*after, *next);
  log->reset();
  auto reopened = Log::open(region.span(), adr(), stores());
  ASSERT_TRUE(reopened.ok()) << reopened.status().message();
  entries = (*reopened)->entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].lsn, *after);
  EXPECT_TRUE(same(entries[0], p));
}

// A format of a new pool's region (zeros) writes back only lines it changed and fences only after
// writing: `pmlab crash exec` finds no redundant write-back or empty fence in a program that makes a log.
// Over what an earlier log left, it leaves the bytes it owns as it leaves them on zeros.
TEST_P(LogWriter, AFormatWritesBackOnlyWhatItChanges) {
  Options o = options();
  o.log_id = 77;  // else random per format
  Region fresh(64 << 10), stale(64 << 10);
  std::memset(fresh.base, 0, fresh.size);
  testing::WriteBackJudge judge(fresh.span());
  persist::Persister judged = adr();
  judged.attach(&judge);
  auto log = Log::format(fresh.span(), judged, o);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(judge.redundant_lines, 0u);
  EXPECT_EQ(judge.empty_fences, 0u);
  EXPECT_EQ(judge.outside, 0u);
  EXPECT_GE(judge.fences, 2u) << "the superblock, then its magic";
  auto over_stale = Log::format(stale.span(), adr(), o);
  ASSERT_TRUE(over_stale.ok()) << over_stale.status().message();
  EXPECT_TRUE((*over_stale)->entries().empty());
  // The superblock, the watermark word and the size fields; a zero log owns its lanes too.
  const auto& sb = *reinterpret_cast<const on_media::Superblock*>(fresh.base);
  const uint64_t owned = GetParam().kind == Kind::zero ? sb.region_bytes : sb.data_offset;
  EXPECT_EQ(std::memcmp(fresh.base, stale.base, on_media::kWatermarkOffset + 8), 0);
  EXPECT_EQ(std::memcmp(fresh.base + on_media::kSlotsOffset, stale.base + on_media::kSlotsOffset,
                        owned - on_media::kSlotsOffset),
            0);
}

// LSNs that start below 2^32 and cross it: appends, reopen, truncation and the appends after it keep
// their order (a log may start where another left off).
TEST_P(LogWriter, LsnsCrossTwoToThe32) {
  Region region(64 << 10);
  Options o = options();
  o.first_lsn = (uint64_t{1} << 32) - 3;
  {
    auto log = Log::format(region.span(), adr(), o);
    ASSERT_TRUE(log.ok()) << log.status().message();
    for (uint64_t i = 0; i < 6; ++i) {
      const auto p = payload(i);
      auto lsn = (*log)->append(static_cast<uint32_t>(i % 2), p.data(), p.size());
      ASSERT_TRUE(lsn.ok()) << lsn.status().message();
      EXPECT_EQ(*lsn, o.first_lsn + i);
    }
  }
  auto log = Log::open(region.span(), adr(), stores());
  ASSERT_TRUE(log.ok()) << log.status().message();
  auto entries = (*log)->entries();
  ASSERT_EQ(entries.size(), 6u);
  for (uint64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(entries[i].lsn, o.first_lsn + i);
    EXPECT_TRUE(same(entries[i], payload(i))) << "entry " << i;
  }
  ASSERT_TRUE((*log)->truncate().ok());
  auto after = (*log)->append(0, "x", 1);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, o.first_lsn + 6);
  log->reset();
  auto reopened = Log::open(region.span(), adr(), stores());
  ASSERT_TRUE(reopened.ok()) << reopened.status().message();
  ASSERT_EQ((*reopened)->entries().size(), 1u);
  EXPECT_EQ((*reopened)->entries()[0].lsn, o.first_lsn + 6);

  o.first_lsn = 0;  // 0 is never an LSN
  EXPECT_EQ(Log::format(region.span(), adr(), o).status().code(), Errc::invalid_argument);
}

// Entries larger than a streamed entry's stack staging, and appends that continue mid-line after a
// reopen (a streaming writer composes that line from what recovery read back).
TEST_P(LogWriter, LargeEntriesAndAppendsAfterReopenKeepEveryByte) {
  Region region(64 << 10);
  auto bytes = [](uint64_t size, uint64_t seed) {
    std::vector<std::byte> p(size);
    for (size_t k = 0; k < size; ++k) p[k] = static_cast<std::byte>((seed * 29 + k * 13) % 253 + 1);
    return p;
  };
  const std::vector<uint64_t> sizes{1, 3, 1100, 7, 2500, 64, 9, 1023, 5, 0, 4096, 2};
  std::vector<std::vector<std::byte>> appended;
  auto append_all = [&](Log& log, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      appended.push_back(bytes(sizes[i], i));
      ASSERT_TRUE(log.append(0, appended.back().data(), appended.back().size()).ok()) << "entry " << i;
    }
  };
  auto expect_all = [&](const Log& log) {
    const auto entries = log.entries();
    ASSERT_EQ(entries.size(), appended.size());
    for (size_t i = 0; i < entries.size(); ++i) EXPECT_TRUE(same(entries[i], appended[i])) << "entry " << i;
  };
  {
    auto log = Log::format(region.span(), adr(), options(1));
    ASSERT_TRUE(log.ok());
    append_all(**log, 0, 6);
    expect_all(**log);
  }
  for (size_t part : {6u, 9u}) {
    auto log = Log::open(region.span(), adr(), stores());
    ASSERT_TRUE(log.ok()) << log.status().message();
    append_all(**log, part, part + 3);
    expect_all(**log);
  }
  auto log = Log::open(region.span(), adr(), stores());
  ASSERT_TRUE(log.ok());
  EXPECT_EQ((*log)->recovery().torn_tails, 0u);
  expect_all(**log);
}

TEST_P(LogWriter, ReportsAFullLaneAndKeepsWorkingOnTheOther) {
  Region region(16 << 10);
  auto log = Log::format(region.span(), adr(), options());
  ASSERT_TRUE(log.ok()) << log.status().message();
  std::vector<std::byte> big(1000, std::byte{7});
  uint64_t appended = 0;
  Status full;
  for (int i = 0; i < 100 && full.ok(); ++i) {
    auto r = (*log)->append(0, big.data(), big.size());
    if (r.ok()) ++appended;
    else full = r.status();
  }
  EXPECT_EQ(full.code(), Errc::pool_full);
  EXPECT_NE(full.message().find("lane 0 is full"), std::string::npos) << full.message();
  EXPECT_GT(appended, 0u);
  EXPECT_TRUE((*log)->append(1, big.data(), big.size()).ok());
  EXPECT_EQ((*log)->entries().size(), appended + 1);
  auto no_lane = (*log)->append(2, big.data(), 8);
  EXPECT_EQ(no_lane.status().code(), Errc::invalid_argument);
  EXPECT_NE(no_lane.status().message().find("lane 2 does not exist"), std::string::npos);
  EXPECT_EQ((*log)->lane_used(7), 0u);
}

using pmlab::testing::FenceSnapshots;

// Every crash state of one in-flight append, made by hand (FenceSnapshots).
TEST_P(LogWriter, RecoveryNeverReturnsATornAppend) {
  constexpr size_t kBytes = 16 << 10;
  Region region(kBytes);
  const Options o = options(1);
  {
    auto log = Log::format(region.span(), adr(), o);
    ASSERT_TRUE(log.ok());
    for (uint64_t i = 1; i <= 5; ++i) {
      const auto p = payload(i);
      ASSERT_TRUE((*log)->append(0, p.data(), p.size()).ok());
    }
  }
  auto persister = persist::Persister::create({persist::Domain::adr, persist::FlushInstruction::clflush, false, false});
  ASSERT_TRUE(persister.ok());
  for (uint64_t size : {0, 1, 40, 64, 200, 700, 1500}) {
    std::vector<std::byte> durable(region.base, region.base + kBytes);
    std::vector<std::byte> p(size);
    for (size_t k = 0; k < size; ++k) p[k] = static_cast<std::byte>(0xff - k % 3);  // many set bits
    FenceSnapshots snaps(region.span());
    {
      auto log = Log::open(region.span(), *persister, stores());
      ASSERT_TRUE(log.ok());
      persister->attach(&snaps);
      ASSERT_TRUE((*log)->append(0, p.data(), p.size()).ok());
      persister->detach();
    }
    ASSERT_EQ(snaps.snapshots.size(), static_cast<size_t>(barriers_per_append(o.kind)));
    std::vector<std::byte> base = durable;
    uint64_t states = 0;
    for (const auto& at_fence : snaps.snapshots) {
      std::vector<size_t> lines;
      for (size_t line = 0; line < kBytes; line += 64)
        if (std::memcmp(base.data() + line, at_fence.data() + line, 64) != 0) lines.push_back(line);
      // Every subset of up to 8 lines; beyond, none, all, each line alone, each line missing, and a sample.
      std::vector<uint64_t> masks;
      const uint64_t all = lines.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << lines.size()) - 1;
      if (lines.size() <= 8) {
        for (uint64_t m = 0; m <= all; ++m) masks.push_back(m);
      } else {
        masks = {0, all};
        for (size_t b = 0; b < lines.size() && b < 64; ++b)
          masks.insert(masks.end(), {uint64_t{1} << b, all & ~(uint64_t{1} << b)});
        uint64_t seed = size;
        for (int k = 0; k < 32; ++k) masks.push_back(splitmix64(seed) & all);
      }
      for (uint64_t mask : masks) {
        Region crash(kBytes);
        std::memcpy(crash.base, base.data(), kBytes);
        for (size_t b = 0; b < lines.size(); ++b)
          if (mask >> b & 1) std::memcpy(crash.base + lines[b], at_fence.data() + lines[b], 64);
        auto recovered = Log::open(crash.span(), adr(), stores());
        ASSERT_TRUE(recovered.ok()) << recovered.status().message();
        auto entries = (*recovered)->entries();
        ASSERT_TRUE(entries.size() == 5 || entries.size() == 6) << entries.size() << " entries";
        for (uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(same(entries[i], payload(i + 1)));
        if (entries.size() == 6) { ASSERT_TRUE(same(entries[5], p)) << "a torn entry was returned"; }
        // Recovery leaves a log that appends and recovers again.
        ASSERT_TRUE((*recovered)->append(0, "after", 5).ok());
        auto again = Log::open(crash.span(), adr(), stores());
        ASSERT_TRUE(again.ok());
        ASSERT_EQ((*again)->entries().size(), entries.size() + 1);
        ++states;
      }
      base = at_fence;
    }
    EXPECT_GT(states, 1u);
    // The append returned: every one of its lines is durable from now on.
    auto log = Log::open(region.span(), adr(), stores());
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->truncate().ok());
    for (uint64_t i = 1; i <= 5; ++i) {
      const auto q = payload(i);
      ASSERT_TRUE((*log)->append(0, q.data(), q.size()).ok());
    }
  }
}

TEST_P(LogWriter, AnInterruptedTruncationKeepsAllOrNothing) {
  Region region(32 << 10);
  auto persister = persist::Persister::create({persist::Domain::adr, persist::FlushInstruction::clflush, false, false});
  ASSERT_TRUE(persister.ok());
  {
    auto log = Log::format(region.span(), *persister, options(2));
    ASSERT_TRUE(log.ok());
    for (uint64_t i = 0; i < 12; ++i) {
      const auto p = payload(i + 1);
      ASSERT_TRUE((*log)->append(static_cast<uint32_t>(i % 2), p.data(), p.size()).ok());
    }
  }
  std::vector<std::byte> before(region.base, region.base + region.size);
  FenceSnapshots snaps(region.span());
  {
    auto log = Log::open(region.span(), *persister, stores());
    ASSERT_TRUE(log.ok());
    persister->attach(&snaps);
    ASSERT_TRUE((*log)->truncate().ok());
    persister->detach();
  }
  // The watermark, then the lanes; a classic lane is disowned by the watermark alone (one fence).
  const bool rewrites = GetParam().kind != Kind::classic;
  ASSERT_EQ(snaps.snapshots.size(), rewrites ? 2u : 1u);
  // Crash after the watermark with each lane's reset half done: the first lane reset, the other not.
  std::vector<std::byte> mixed = snaps.snapshots[0];
  const std::vector<std::byte>& done = snaps.snapshots[rewrites ? 1 : 0];
  for (size_t line = 0; line < mixed.size() / 2; line += 64) std::memcpy(&mixed[line], &done[line], 64);
  using Image = std::vector<std::byte>;
  for (const Image* image : std::initializer_list<const Image*>{&before, &snaps.snapshots[0], &mixed, &done}) {
    Region crash(region.size);
    std::memcpy(crash.base, image->data(), region.size);
    auto log = Log::open(crash.span(), adr(), stores());
    ASSERT_TRUE(log.ok()) << log.status().message();
    const size_t n = (*log)->entries().size();
    EXPECT_TRUE(n == 12 || (n == 0 && image != &before)) << n;
    ASSERT_TRUE((*log)->append(1, "z", 1).ok());
    auto again = Log::open(crash.span(), adr(), stores());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->entries().size(), n + 1);
    EXPECT_TRUE(Log::check(crash.span()).ok());
  }
}

// A partial truncation (a checkpoint's): the entries below the watermark go, the later ones stay through
// reopens and appends; a lane left with none is emptied, the other keeps its space until truncate().
TEST_P(LogWriter, TruncateBeforeKeepsTheEntriesFromItsLsn) {
  Region region(64 << 10);
  Options o = options();
  o.first_lsn = (uint64_t{1} << 32) - 4;  // the watermark crosses 2^32
  std::vector<uint64_t> lsns;
  auto log = Log::format(region.span(), adr(), o);
  ASSERT_TRUE(log.ok()) << log.status().message();
  for (uint64_t i = 0; i < 9; ++i) {
    const auto p = payload(i);
    auto lsn = (*log)->append(static_cast<uint32_t>(i % 2), p.data(), p.size());
    ASSERT_TRUE(lsn.ok()) << lsn.status().message();
    lsns.push_back(*lsn);
  }
  const uint64_t used0 = (*log)->lane_used(0);
  EXPECT_EQ((*log)->truncate_before(lsns[8] + 2).code(), Errc::invalid_argument);
  ASSERT_TRUE((*log)->truncate_before(lsns[8]).ok());  // keeps entry 8, lane 0's last
  auto expect_kept = [&](Log& l, std::vector<uint64_t> want) {
    const auto entries = l.entries();
    ASSERT_EQ(entries.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(entries[k].lsn, lsns[want[k]]);
      EXPECT_EQ(entries[k].lane, want[k] % 2);
      EXPECT_TRUE(same(entries[k], payload(want[k]))) << "entry " << want[k];
    }
  };
  expect_kept(**log, {8});
  EXPECT_EQ((*log)->lane_used(0), used0);
  EXPECT_EQ((*log)->lane_used(1), 0u);
  ASSERT_TRUE((*log)->truncate_before(lsns[2]).ok());  // below the watermark: nothing more goes
  expect_kept(**log, {8});
  for (uint64_t i = 9; i < 12; ++i) {
    const auto p = payload(i);
    auto lsn = (*log)->append(static_cast<uint32_t>(i % 2), p.data(), p.size());
    ASSERT_TRUE(lsn.ok()) << lsn.status().message();
    lsns.push_back(*lsn);
  }
  log->reset();
  auto reopened = Log::open(region.span(), adr(), stores());
  ASSERT_TRUE(reopened.ok()) << reopened.status().message();
  EXPECT_EQ((*reopened)->recovery().entries, 4u);
  EXPECT_TRUE(Log::check(region.span()).ok());
  expect_kept(**reopened, {8, 9, 10, 11});
  ASSERT_TRUE((*reopened)->truncate_before(lsns[10]).ok());
  expect_kept(**reopened, {10, 11});
  ASSERT_TRUE((*reopened)->truncate().ok());
  EXPECT_TRUE((*reopened)->entries().empty());
  EXPECT_EQ((*reopened)->lane_used(0), 0u);
  reopened->reset();
  auto emptied = Log::open(region.span(), adr(), stores());
  ASSERT_TRUE(emptied.ok()) << emptied.status().message();
  EXPECT_TRUE((*emptied)->entries().empty());
  EXPECT_EQ((*emptied)->lane_used(0), 0u);
}

// A crash in a partial truncation: before its watermark is durable everything is there, after it the
// entries from its LSN on, whatever the lanes' reset reached; each image then appends and recovers again.
TEST_P(LogWriter, AnInterruptedPartialTruncationKeepsTheLaterEntries) {
  Region region(32 << 10);
  auto persister = persist::Persister::create({persist::Domain::adr, persist::FlushInstruction::clflush, false, false});
  ASSERT_TRUE(persister.ok());
  uint64_t keep_from = 0;
  {
    auto log = Log::format(region.span(), *persister, options(2));
    ASSERT_TRUE(log.ok());
    for (uint64_t i = 0; i < 11; ++i) {
      const auto p = payload(i + 1);
      auto lsn = (*log)->append(static_cast<uint32_t>(i % 2), p.data(), p.size());
      ASSERT_TRUE(lsn.ok());
      if (i == 10) keep_from = *lsn;  // lane 0's last: lane 1 is emptied
    }
  }
  std::vector<std::byte> before(region.base, region.base + region.size);
  FenceSnapshots snaps(region.span());
  {
    auto log = Log::open(region.span(), *persister, stores());
    ASSERT_TRUE(log.ok());
    persister->attach(&snaps);
    ASSERT_TRUE((*log)->truncate_before(keep_from).ok());
    persister->detach();
  }
  const bool rewrites = GetParam().kind != Kind::classic;
  ASSERT_EQ(snaps.snapshots.size(), rewrites ? 2u : 1u);
  using Image = std::vector<std::byte>;
  for (const Image* image :
       std::initializer_list<const Image*>{&before, &snaps.snapshots[0], &snaps.snapshots.back()}) {
    Region crash(region.size);
    std::memcpy(crash.base, image->data(), region.size);
    auto log = Log::open(crash.span(), adr(), stores());
    ASSERT_TRUE(log.ok()) << log.status().message();
    const auto entries = (*log)->entries();
    if (image == &before) {
      EXPECT_EQ(entries.size(), 11u);
    } else {
      ASSERT_EQ(entries.size(), 1u);
      EXPECT_EQ(entries[0].lsn, keep_from);
      EXPECT_TRUE(same(entries[0], payload(11)));
      EXPECT_EQ((*log)->lane_used(1), 0u);
    }
    ASSERT_TRUE((*log)->append(1, "z", 1).ok());
    auto again = Log::open(crash.span(), adr(), stores());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->entries().size(), entries.size() + 1);
    EXPECT_TRUE(Log::check(crash.span()).ok());
  }
}

TEST_P(LogWriter, ConcurrentLanesAppendWithoutLosingEntries) {
  Region region(1 << 20);
  auto log = Log::format(region.span(), adr(), options(2));
  ASSERT_TRUE(log.ok());
  constexpr uint64_t kPerLane = 500;
  std::vector<std::thread> threads;
  for (uint32_t lane = 0; lane < 2; ++lane) {
    threads.emplace_back([&, lane] {
      for (uint64_t i = 0; i < kPerLane; ++i) {
        const uint64_t value = lane * kPerLane + i;
        ASSERT_TRUE((*log)->append(lane, &value, sizeof value).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  auto reopened = Log::open(region.span(), adr(), stores());
  ASSERT_TRUE(reopened.ok());
  auto entries = (*reopened)->entries();
  ASSERT_EQ(entries.size(), 2 * kPerLane);
  std::vector<uint64_t> next(2, 0);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) { EXPECT_LT(entries[i - 1].lsn, entries[i].lsn); }
    uint64_t value;
    ASSERT_EQ(entries[i].payload.size(), sizeof value);
    std::memcpy(&value, entries[i].payload.data(), sizeof value);
    const uint32_t lane = entries[i].lane;
    EXPECT_EQ(value, lane * kPerLane + next[lane]++);  // each lane's entries in their append order
  }
}

INSTANTIATE_TEST_SUITE_P(AllWriters, LogWriter, ::testing::ValuesIn(all_writers()), label);

TEST(Log, ParsesWriterNames) {
  for (const auto& w : all_writers()) {
    auto parsed = parse_writer(writer_name(w.kind, w.padded));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->kind, w.kind);
    EXPECT_EQ(parsed->padded, w.padded);
  }
  auto bad = parse_writer("zero-padded-padded");
  EXPECT_EQ(bad.status().code(), Errc::invalid_argument);
  EXPECT_NE(bad.status().message().find("classic, header, header-dancing, zero"), std::string::npos);
  EXPECT_FALSE(parse_writer("").ok());
}

TEST(Log, RefusesBadGeometryAndUnformattedRegions) {
  Region region(64 << 10);
  Options o;
  o.lanes = 0;
  EXPECT_EQ(Log::format(region.span(), adr(), o).status().code(), Errc::invalid_argument);
  o.lanes = 64;  // 64 lanes of at least 4 KiB do not fit in 64 KiB
  auto small = Log::format(region.span(), adr(), o);
  EXPECT_EQ(small.status().code(), Errc::invalid_argument);
  EXPECT_NE(small.status().message().find("too small"), std::string::npos);
  o = Options{};
  o.kind = Kind::header_dancing;
  o.dancing_slots = 0;
  EXPECT_EQ(Log::format(region.span(), adr(), o).status().code(), Errc::invalid_argument);
  EXPECT_EQ(Log::format(region.span().subspan(8), adr(), Options{}).status().code(), Errc::invalid_argument);

  auto none = Log::open(region.span(), adr());  // stale bytes, never formatted
  EXPECT_EQ(none.status().code(), Errc::corrupted);
  EXPECT_NE(none.status().message().find("never formatted"), std::string::npos);
  EXPECT_EQ(Log::check(region.span()).code(), Errc::corrupted);
}

TEST(Log, DetectsCorruptedSuperblockAndSizeField) {
  Region region(64 << 10);
  Options o;
  o.kind = Kind::header;
  ASSERT_TRUE(Log::format(region.span(), adr(), o).ok());
  // A truncated region.
  EXPECT_EQ(Log::open(region.span().first(8 << 10), adr()).status().code(), Errc::corrupted);
  // The size field pointing past the lane.
  auto* size_field = reinterpret_cast<uint64_t*>(region.base + 128);
  *size_field = uint64_t{1} << 40;
  auto broken = Log::open(region.span(), adr());
  EXPECT_EQ(broken.status().code(), Errc::corrupted);
  EXPECT_NE(broken.status().message().find("size field"), std::string::npos);
  EXPECT_EQ(Log::check(region.span()).code(), Errc::corrupted);
  // A flipped superblock bit.
  *size_field = 0;
  region.base[20] ^= std::byte{1};
  EXPECT_NE(Log::open(region.span(), adr()).status().message().find("checksum"), std::string::npos);
}

TEST(Log, ZeroLogRecoveryZeroesATornTail) {
  Region region(16 << 10);
  Options o;
  o.kind = Kind::zero;
  auto log = Log::format(region.span(), adr(), o);
  ASSERT_TRUE(log.ok());
  std::vector<std::byte> p(300, std::byte{0xff});
  ASSERT_TRUE((*log)->append(0, p.data(), p.size()).ok());
  const uint64_t tail = (*log)->lane_used(0);
  ASSERT_TRUE((*log)->append(0, p.data(), p.size()).ok());
  log->reset();
  // Tear the second entry: its last payload line never reached the media.
  std::byte* lane = region.base + 4096;
  std::memset(lane + tail + 256, 0, 64);
  auto recovered = Log::open(region.span(), adr());
  ASSERT_TRUE(recovered.ok());
  EXPECT_EQ((*recovered)->entries().size(), 1u);
  EXPECT_EQ((*recovered)->recovery().torn_tails, 1u);
  for (uint64_t k = tail; k < tail + 400; ++k) ASSERT_EQ(lane[k], std::byte{0}) << k;
}

TEST(Log, PoolLayoutRecoversAndChecks) {
  pmlab::testing::TempDir dir;
  const std::string path = dir.file("log.pool");
  Options o;
  o.kind = Kind::header_dancing;
  o.padded = true;
  {
    auto made = create_pool(path, 4 << 20, o);
    ASSERT_TRUE(made.ok()) << made.status().message();
    auto log = open_in_pool(**made);
    ASSERT_TRUE(log.ok()) << log.status().message();
    ASSERT_TRUE((*log)->append(0, "hello", 5).ok());
  }
  EXPECT_EQ(create_pool(path, 4 << 20, o).status().code(), Errc::already_exists);
  const pool::Layout* layout = pool::LayoutRegistry::instance().find(kPoolLayout);
  ASSERT_NE(layout, nullptr);
  auto pool = pool::Pool::open(path, {.layout = kPoolLayout, .persist = std::nullopt, .read_only = false});
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  EXPECT_TRUE((*pool)->recover().ok());
  EXPECT_TRUE(layout->check(**pool).ok());
  auto log = open_in_pool(**pool);
  ASSERT_TRUE(log.ok());
  auto entries = (*log)->entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(entries[0].payload.data()), entries[0].payload.size()), "hello");
}

}  // namespace
}  // namespace pmlab::primitives::log
