// The live device model as a run attaches it: persistence-layer events in, modelled metrics out, and
// emulation's waits. Wait checks are lower bounds on a spin, which cannot return early; how long the
// model makes each request wait is pinned exactly, without a clock, in device_test.cpp.
#include "pmlab/model/device_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "pmlab/model/presets.hpp"
#include "pmlab/persist/persister.hpp"
#include "pmlab/platform/clock.hpp"

namespace pmlab::model {
namespace {

const record::Metric* metric(const record::RunRecord& r, const std::string& name) { return r.find(name); }

persist::Persister adr_persister() {
  persist::Config c;
  c.domain = persist::Domain::adr;
  c.flush = persist::best_line_flush(platform::CpuFeatures::host());
  return persist::Persister::create(c).value();
}

struct alignas(4096) Page {
  std::byte bytes[1 << 16];
};

TEST(DeviceModel, SeesThePersistersWritebacksAndAddsModelledMetrics) {
  DeviceModel model(*preset("dcpmm"), /*emulate=*/false);
  persist::Persister p = adr_persister();
  p.attach(&model);
  auto page = std::make_unique<Page>();
  for (int i = 0; i < 64; ++i) p.persist(page->bytes + i * 64 * 17 % (1 << 16) / 64 * 64, 64);
  const DeviceCounters c = model.counters();
  EXPECT_EQ(c.imc_writes, 64u);
  EXPECT_EQ(c.fences, 64u);

  record::RunRecord rec;
  rec.metrics.push_back({"latency_avg", 10.0, "ns", record::MetricKind::measured, ""});
  model.add_metrics(rec);
  for (const char* name : {"ewr", "rwr", "ebr", "write_hit_ratio", "imc_write_bytes", "media_write_bytes",
                           "ipmctl_write_requests", "ipmctl_media_writes", "device_bandwidth"}) {
    const record::Metric* m = metric(rec, name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->kind, record::MetricKind::modelled) << name;
    EXPECT_EQ(m->origin, "dcpmm") << name;
  }
  EXPECT_EQ(metric(rec, "ipmctl_write_requests")->value, 64.0);
  EXPECT_EQ(metric(rec, "emulation_wait_per_fence"), nullptr);  // not emulating
  EXPECT_EQ(metric(rec, "latency_avg")->kind, record::MetricKind::measured);
}

TEST(DeviceModel, NonTemporalCopiesAreModelledWithTheirExactBytes) {
  DeviceModel model(*preset("dcpmm"), false);
  persist::Config cfg;
  cfg.domain = persist::Domain::adr;
  cfg.flush = persist::FlushInstruction::ntstore;
  persist::Persister p = persist::Persister::create(cfg).value();
  p.attach(&model);
  auto page = std::make_unique<Page>();
  std::vector<unsigned char> src(4096, 7);
  p.copy_persist(page->bytes, src.data(), 256);  // one whole XPLine
  EXPECT_EQ(model.counters().media_writes, 1u);
  p.copy_persist(page->bytes + 1024 + 8, src.data(), 100);  // partial requests at both ends
  EXPECT_EQ(model.counters().imc_writes, 4u + 2u);
}

TEST(DeviceModel, NothingSeenMeansNoMetrics) {
  DeviceModel model(*preset("dcpmm"), false);
  record::RunRecord rec;
  model.add_metrics(rec);
  EXPECT_TRUE(rec.metrics.empty());
}

TEST(DeviceModel, ResetStartsAFreshRun) {
  DeviceModel model(*preset("dcpmm"), false);
  auto page = std::make_unique<Page>();
  model.on_writeback(page->bytes, 4096, persist::Writeback::flush);
  model.on_fence();
  model.reset();
  const DeviceCounters c = model.counters();
  EXPECT_EQ(c.imc_writes + c.fences, 0u);
}

TEST(DeviceModel, ThreadsShareOneDevice) {
  DeviceModel model(*preset("dcpmm"), false);
  auto page = std::make_unique<Page>();
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        model.on_writeback(page->bytes + (t * 4096 + (i % 64) * 64), 64, persist::Writeback::flush);
        model.on_fence();
      }
    });
  for (auto& w : workers) w.join();
  EXPECT_EQ(model.counters().imc_writes, 8000u);
  EXPECT_EQ(model.counters().fences, 8000u);
}

// Emulation: a fence after a write to a line that is not on the DIMM waits for the read-modify-write
// read (305 ns) and the write (62.3 ns) — measured from the write-back, so at least that long.
TEST(Emulation, AFenceWaitsForTheModelledReadModifyWrite) {
  const DeviceParams p = *preset("dcpmm");
  DeviceModel model(p, /*emulate=*/true);
  auto page = std::make_unique<Page>();
  const platform::Clock& clock = platform::Clock::get();
  for (int i = 0; i < 20; ++i) {
    // Lines 8 KB apart: each its own XPLine, far enough apart that the prefetcher never helps.
    const uint64_t t0 = platform::Clock::start();
    model.on_writeback(page->bytes + (i % 8) * 8192, 64, persist::Writeback::flush);
    model.on_fence();
    EXPECT_GE(clock.to_ns(platform::Clock::stop() - t0), p.media_read_ns + p.write_ns);
    model.reset();  // the next write misses again
  }
  record::RunRecord rec;
  model.on_writeback(page->bytes, 64, persist::Writeback::flush);
  model.on_fence();
  model.add_metrics(rec);
  ASSERT_NE(rec.find("emulation_wait_per_fence"), nullptr);
  EXPECT_EQ(rec.find("emulation_wait_per_fence")->origin, "emulated:dcpmm");
  EXPECT_GT(rec.find("emulation_wait_per_fence")->value, 0.0);
}

TEST(Emulation, AFenceThatOrdersNoWriteDoesNotWait) {
  DeviceModel model(*preset("dcpmm"), true);
  auto page = std::make_unique<Page>();
  model.on_read(page->bytes, 64);  // the model has seen something, but no write
  model.on_fence();
  model.on_fence();
  record::RunRecord rec;
  model.add_metrics(rec);
  ASSERT_NE(rec.find("emulation_wait_per_fence"), nullptr);
  EXPECT_EQ(rec.find("emulation_wait_per_fence")->value, 0.0);
}

TEST(Emulation, AReadPaysTheDeviceLatencyBeyondTheHostsOwn) {
  const DeviceParams p = *preset("dcpmm");
  DeviceModel model(p, true);
  auto page = std::make_unique<Page>();
  const platform::Clock& clock = platform::Clock::get();
  const uint64_t t0 = platform::Clock::start();
  model.on_read(page->bytes + 8192, 64);
  const double waited = clock.to_ns(platform::Clock::stop() - t0);
  EXPECT_GE(waited, p.media_read_ns - p.host_read_ns);
}

TEST(Emulation, LabelsEveryMeasuredNumberOfTheRun) {
  record::RunRecord rec;
  rec.metrics.push_back({"throughput", 5.0, "ops/s", record::MetricKind::measured, ""});
  rec.metrics.push_back({"x_published", 1.0, "ratio", record::MetricKind::published, "a paper"});
  label_emulated(rec, "emulated:dcpmm");
  EXPECT_EQ(rec.find("throughput")->kind, record::MetricKind::modelled);
  EXPECT_EQ(rec.find("throughput")->origin, "emulated:dcpmm");
  EXPECT_EQ(rec.find("x_published")->kind, record::MetricKind::published);
}

}  // namespace
}  // namespace pmlab::model
