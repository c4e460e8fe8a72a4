// The CXL presets: valid, accepted wherever a preset is, shaped like CXL memory (64 B lines, no buffers),
// and reproducing the published points of data/reference/cxl within the 5% docs/device-model.md states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "pmlab/model/device.hpp"
#include "pmlab/model/device_model.hpp"
#include "pmlab/model/presets.hpp"
#include "pmlab/model/published.hpp"
#include "pmlab/model/validation_streams.hpp"

namespace pmlab::model {
namespace {

constexpr double kTolerance = 0.05;
const char* const kSunDevices[] = {"cxl-a", "cxl-b", "cxl-c"};

double published(const std::string& point) {
  auto p = published_cxl(point);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? p->value : NAN;
}

double read_gbps(const DeviceParams& p) {
  return reads(p, true, 64, 16, uint64_t{4} << 20).metrics.device_bandwidth_mib_s * 1048576.0 / 1e9;
}

TEST(CxlPresets, AreValidListedAndResolvable) {
  for (const char* name : {"cxl-a", "cxl-b", "cxl-c", "cxl-pool"}) {
    auto p = preset(name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_TRUE(validate(*p).ok()) << name << ": " << validate(*p).message();
    EXPECT_EQ(p->name, name);
    const auto& names = preset_names();
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    auto resolved = resolve_device(name);
    ASSERT_TRUE(resolved.ok()) << name;
    EXPECT_EQ(resolved->name, name);
  }
  // The PMEM classes keep their place at the front of the list.
  EXPECT_EQ(preset_names().front(), "c1");
}

TEST(CxlPresets, AreCxlShapedMemory) {
  for (const char* name : {"cxl-a", "cxl-b", "cxl-c", "cxl-pool"}) {
    const DeviceParams p = *preset(name);
    EXPECT_EQ(p.media_line_bytes, kImcLine) << name;  // the CPU reads CXL memory in 64 B lines
    EXPECT_EQ(p.write_buffer_lines, 0u) << name;
    EXPECT_EQ(p.read_buffer_lines, 0u) << name;
    EXPECT_EQ(p.dimms, 1u) << name;
    EXPECT_GT(p.media_read_ns, p.host_read_ns) << name;  // emulation adds latency, never removes it
    // Random small writes need no read-modify-write: every 64 B line is whole.
    EXPECT_NEAR(small_writes(p, true, 64, 16, uint64_t{1} << 20).metrics.ewr, 1.0, 1e-9) << name;
  }
}

TEST(CxlPresets, OrderedAsPublishedAsicBeforeFpga) {
  const double a = idle_read_ns(*preset("cxl-a"), 2048), b = idle_read_ns(*preset("cxl-b"), 2048),
               c = idle_read_ns(*preset("cxl-c"), 2048);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_GT(read_gbps(*preset("cxl-a")), read_gbps(*preset("cxl-c")));
}

TEST(CxlPresets, ReproduceSunEtAlLatencyRatiosAndBandwidthWithinFivePercent) {
  const double remote_over_local = published("pond.fig4.remote_ns") / published("pond.fig4.local_ns");
  for (const char* name : kSunDevices) {
    const DeviceParams p = *preset(name);
    const std::string base = std::string("sun23.") + name;
    const double ratio = idle_read_ns(p, 4096) / (p.host_read_ns * remote_over_local);
    const double want_ratio = published(base + ".ld_over_ddr5r");
    EXPECT_LE(std::abs(ratio - want_ratio) / want_ratio, kTolerance) << name << ": " << ratio << " vs " << want_ratio;
    const double want_gbps = published(base + ".read_efficiency") * published(base + ".peak_gbps");
    const double gbps = read_gbps(p);
    EXPECT_LE(std::abs(gbps - want_gbps) / want_gbps, kTolerance) << name << ": " << gbps << " vs " << want_gbps;
  }
}

TEST(CxlPresets, PoolAddsPondsPublishedLatencyOverLocalDram) {
  const DeviceParams p = *preset("cxl-pool");
  const double added = idle_read_ns(p, 4096) - p.host_read_ns;
  EXPECT_GE(added, published("pond.pool_added_ns.low"));
  EXPECT_LE(added, published("pond.pool_added_ns.high"));
}

TEST(CxlPresets, IdleLatencyIsTheMediaLatencyAndLoadAddsQueueing) {
  // One read in flight never waits for the media: the pointer chase sees media_read_ns alone.
  const DeviceParams p = *preset("cxl-a");
  EXPECT_NEAR(idle_read_ns(p, 1000), p.media_read_ns, 1e-6);
  // Many readers queue on the media's bandwidth: reads then take longer than idle ones.
  Device d(p);
  double last = 0;
  for (uint64_t i = 0; i < 256; ++i) last = std::max(last, d.read(i * 4096, kImcLine, 0));
  EXPECT_GT(last, p.media_read_ns + 200 * kImcLine / p.media_read_gbps);
}

TEST(CxlPresets, EmulationIsLabelledByThePreset) {
  DeviceModel model(*preset("cxl-pool"), /*emulate=*/true);
  EXPECT_EQ(model.emulation_label(), "emulated:cxl-pool");
}

TEST(CxlPresets, ReferenceRowsNameTheirStudy) {
  auto p = published_cxl("sun23.cxl-a.ld_over_ddr5r");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NE(p->source.find("[CXLDemystified]"), std::string::npos) << p->source;
  auto pond = published_cxl("pond.pool_added_ns.low");
  ASSERT_TRUE(pond.ok());
  EXPECT_NE(pond->source.find("[Pond]"), std::string::npos) << pond->source;
  EXPECT_FALSE(published_cxl("no.such.point").ok());
}

}  // namespace
}  // namespace pmlab::model
