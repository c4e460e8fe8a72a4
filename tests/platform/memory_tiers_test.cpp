#include "pmlab/platform/memory_tiers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace pmlab::platform {
namespace {

const std::filesystem::path kTrees = std::filesystem::path(PMLAB_SOURCE_DIR) / "tests" / "platform" / "sysfs";

const MemoryNode& node(const MemoryTopology& t, int id) {
  for (const MemoryNode& n : t.nodes)
    if (n.id == id) return n;
  throw std::runtime_error("no node " + std::to_string(id));
}

bool says(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MemoryTiers, ATwoSocketServerHasALocalAndARemoteSocket) {
  const MemoryTopology t = read_memory_topology(kTrees / "two-socket");
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.initiator_node, 0);
  EXPECT_EQ(node(t, 0).label, TierLabel::local);
  EXPECT_EQ(node(t, 0).cpus.size(), 32u);
  EXPECT_EQ(node(t, 0).memory_bytes, 263'864'000ULL * 1024);
  const MemoryNode& remote = node(t, 1);
  EXPECT_EQ(remote.label, TierLabel::remote_socket);
  EXPECT_TRUE(says(remote.evidence, "16-31,48-63")) << remote.evidence;
  EXPECT_TRUE(says(remote.evidence, "SLIT distance from node 0: 21")) << remote.evidence;
  EXPECT_TRUE(t.cxl_memdevs.empty() && t.cxl_regions.empty());
  bool no_cxl = false, no_hmat = false;
  for (const std::string& note : t.notes) {
    no_cxl = no_cxl || says(note, "no CXL bus");
    no_hmat = no_hmat || says(note, "no HMAT");
  }
  EXPECT_TRUE(no_cxl && no_hmat);
}

TEST(MemoryTiers, ACxlExpanderIsACpuLessNodeNamedByItsRegion) {
  const MemoryTopology t = read_memory_topology(kTrees / "cxl-expander");
  ASSERT_EQ(t.nodes.size(), 3u);
  EXPECT_EQ(node(t, 0).label, TierLabel::local);
  EXPECT_EQ(node(t, 1).label, TierLabel::remote_socket);
  const MemoryNode& cxl = node(t, 2);
  EXPECT_EQ(cxl.label, TierLabel::cxl);
  EXPECT_TRUE(cxl.cpus.empty());
  EXPECT_TRUE(says(cxl.evidence, "dax0.0 of CXL region0")) << cxl.evidence;
  EXPECT_TRUE(says(cxl.evidence, "SLIT distance from node 0: 14")) << cxl.evidence;
  EXPECT_TRUE(says(cxl.evidence, "HMAT read latency 265 ns")) << cxl.evidence;
  ASSERT_FALSE(cxl.access.empty());
  EXPECT_EQ(cxl.access[0].initiators, std::vector<int>{0});
  EXPECT_EQ(cxl.access[0].read_bandwidth_mb_s, 28000u);
  ASSERT_EQ(t.cxl_memdevs.size(), 1u);
  EXPECT_EQ(t.cxl_memdevs[0].ram_bytes, 64ULL << 30);
  ASSERT_EQ(t.cxl_regions.size(), 1u);
  EXPECT_EQ(t.cxl_regions[0].mode, "ram");
  ASSERT_EQ(t.dax_devices.size(), 1u);
  EXPECT_EQ(t.dax_devices[0].mode, "system-ram");
  EXPECT_EQ(t.dax_devices[0].target_node, 2);
  EXPECT_EQ(t.dax_devices[0].cxl_region, "region0");
}

TEST(MemoryTiers, LabelsFollowTheInitiatorNode) {
  const MemoryTopology t = read_memory_topology(kTrees / "cxl-expander", 1);
  EXPECT_EQ(node(t, 1).label, TierLabel::local);
  EXPECT_EQ(node(t, 0).label, TierLabel::remote_socket);
  EXPECT_TRUE(says(node(t, 2).evidence, "SLIT distance from node 1: 24")) << node(t, 2).evidence;
}

TEST(MemoryTiers, ACxlPmemRegionAddsNoNodeAndIsListedAsPmem) {
  const MemoryTopology t = read_memory_topology(kTrees / "cxl-pmem-region");
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(node(t, 0).label, TierLabel::local);
  ASSERT_EQ(t.cxl_memdevs.size(), 3u);
  EXPECT_EQ(t.cxl_memdevs[0].pmem_bytes, 32ULL << 30);
  ASSERT_EQ(t.cxl_regions.size(), 2u);
  EXPECT_EQ(t.cxl_regions[0].mode, "pmem");
  EXPECT_EQ(t.cxl_regions[0].interleave_ways, 2u);
  EXPECT_EQ(t.cxl_regions[0].targets, (std::vector<std::string>{"decoder2.0", "decoder3.0"}));
  ASSERT_EQ(t.dax_devices.size(), 1u);
  EXPECT_EQ(t.dax_devices[0].mode, "devdax");
  EXPECT_FALSE(t.dax_devices[0].target_node.has_value());
  EXPECT_EQ(t.dax_devices[0].cxl_region, "region1");
}

TEST(PoolBacking, AFileSystemOnACxlPmemRegionIsLabelledWithItsRegionsAndDomain) {
  const PoolBacking b = pool_backing("/dev/pmem1", kTrees / "cxl-pmem-region");
  EXPECT_EQ(b.label, "cxl-pmem");
  EXPECT_EQ(b.nd_region, "region1");
  EXPECT_EQ(b.cxl_region, "region0");
  EXPECT_EQ(b.persistence_domain, "memory_controller");
  EXPECT_TRUE(says(b.evidence, "CXL persistent-memory region region0")) << b.evidence;
}

TEST(PoolBacking, AnOptaneNamespaceIsAnNvdimmWithTheDomainItsRegionReports) {
  const PoolBacking b = pool_backing("/dev/pmem0", kTrees / "two-socket");
  EXPECT_EQ(b.label, "nvdimm-pmem");
  EXPECT_EQ(b.nd_region, "region0");
  EXPECT_EQ(b.cxl_region, "");
  EXPECT_EQ(b.persistence_domain, "cpu_cache");
}

TEST(PoolBacking, ADaxDeviceOfACxlRegionAndWhatCannotBeTraced) {
  const PoolBacking dax = pool_backing("/dev/dax1.0", kTrees / "cxl-pmem-region");
  EXPECT_EQ(dax.label, "cxl-devdax");
  EXPECT_EQ(dax.cxl_region, "region1");
  EXPECT_EQ(dax.persistence_domain, "");  // a devdax region reports none: unknown, not guessed
  EXPECT_EQ(pool_backing("tmpfs", kTrees / "two-socket").label, "dram");
  const PoolBacking absent = pool_backing("/dev/pmem7", kTrees / "two-socket");
  EXPECT_EQ(absent.label, "unknown");
  EXPECT_TRUE(says(absent.evidence, "no block device")) << absent.evidence;
  EXPECT_EQ(pool_backing("/dev/sda1", kTrees / "cxl-expander").label, "unknown");
}

TEST(MemoryTiers, ThisMachineReadsWithoutError) {
  const MemoryTopology t = read_memory_topology();
  if (t.nodes.empty()) {  // a kernel without NUMA in sysfs: said, not guessed
    ASSERT_FALSE(t.notes.empty());
    EXPECT_TRUE(says(t.notes.front(), "no NUMA node")) << t.notes.front();
    return;
  }
  EXPECT_EQ(node(t, t.initiator_node).label, TierLabel::local);
}

}  // namespace
}  // namespace pmlab::platform
