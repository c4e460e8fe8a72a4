#include "pmlab/platform/memory_tiers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "../support/temp_dir.hpp"

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

// A machine made in a temporary directory, file by file.
class MadeTree : public ::testing::Test {
 protected:
  void file(const std::string& path, const std::string& text) {
    const auto at = std::filesystem::path(dir_.path()) / path;
    std::filesystem::create_directories(at.parent_path());
    std::ofstream(at) << text << "\n";
  }
  // A node: its cpulist, its MemTotal in KiB and its SLIT row.
  void node(int id, const std::string& cpus, const std::string& kib, const std::string& distances) {
    const std::string dir = "sys/devices/system/node/node" + std::to_string(id) + "/";
    file(dir + "cpulist", cpus);
    file(dir + "meminfo", "Node " + std::to_string(id) + " MemTotal:       " + kib + " kB");
    file(dir + "distance", distances);
  }
  MemoryTopology read() const { return read_memory_topology(dir_.path()); }
  bool noted(const MemoryTopology& t, const std::string& part) const {
    return std::any_of(t.notes.begin(), t.notes.end(), [&](const std::string& n) { return says(n, part); });
  }
  testing::TempDir dir_;
};

// Each node's SLIT row lists a distance to every online node, also to one with neither CPUs nor memory (a
// CXL node whose memory was taken offline): the distances are read by those nodes, not by the ones listed.
TEST_F(MadeTree, DistancesAreReadByTheKernelsOnlineNodes) {
  file("sys/devices/system/node/online", "0-2");
  node(0, "0-1", "8388608", "10 99 21");
  node(1, "", "0", "99 10 99");
  node(2, "2-3", "8388608", "21 99 10");
  const MemoryTopology t = read();
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.online_nodes, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(slit_distance(t, 0, 2), 21);
  EXPECT_EQ(slit_distance(t, 2, 0), 21);
  EXPECT_EQ(slit_distance(t, 0, 7), -1);
  EXPECT_TRUE(says(::pmlab::platform::node(t, 2).evidence, "SLIT distance from node 0: 21"))
      << ::pmlab::platform::node(t, 2).evidence;
}

// A file that is there and cannot be read is named, never taken for an answer: a CPU list it cannot parse
// (or one naming a CPU no kernel has, which would also take memory without bound), a MemTotal that is no
// count, a SLIT row that is not one number per online node.
TEST_F(MadeTree, UnreadableFilesAreNamedNotGuessed) {
  file("sys/devices/system/node/online", "0-3");
  node(0, "0-1", "8388608", "10 21 21 21");
  node(1, "2-3,x", "8388608", "21 10 21 21");
  node(2, "2147483647-2147483647", "8388608", "21 21 10");
  node(3, "", "lots", "21 21 21 ten");
  file("sys/devices/system/node/node0/access0/initiators/read_latency", "fast");
  file("sys/devices/system/node/node0/access0/initiators/read_bandwidth", "28000");
  const MemoryTopology t = read();
  EXPECT_TRUE(noted(t, "node0/access0/initiators/read_latency could not be read"));
  ASSERT_FALSE(::pmlab::platform::node(t, 0).access.empty());
  EXPECT_FALSE(::pmlab::platform::node(t, 0).access[0].read_latency_ns.has_value());
  EXPECT_EQ(::pmlab::platform::node(t, 0).access[0].read_bandwidth_mb_s, 28000u);
  EXPECT_TRUE(noted(t, "node1/cpulist could not be read")) << t.notes.size() << " notes";
  EXPECT_TRUE(noted(t, "node2/cpulist could not be read"));
  EXPECT_TRUE(noted(t, "node2/distance could not be read"));
  EXPECT_TRUE(noted(t, "node3/meminfo could not be read"));
  EXPECT_TRUE(noted(t, "node3/distance could not be read"));
  EXPECT_EQ(slit_distance(t, 2, 0), -1);
  EXPECT_EQ(slit_distance(t, 0, 1), 21);
}

// An Optane DAX device onlined as system RAM sits below its nvdimm bus's region0: a CXL region of the same
// name elsewhere does not make it CXL memory.
TEST_F(MadeTree, AnNvdimmRegionIsNoCxlRegionOfTheSameName) {
  file("sys/devices/system/node/online", "0-1");
  node(0, "0-1", "8388608", "10 17");
  node(1, "", "268435456", "17 10");
  file("sys/bus/cxl/devices/region0/mode", "pmem");
  const std::string dax = "sys/devices/LNXSYSTM:00/ndbus0/region0/dax0.0/dax0.0";
  file(dax + "/size", "274877906944");
  file(dax + "/target_node", "1");
  std::filesystem::create_directories(std::filesystem::path(dir_.path()) / "sys/bus/dax/devices");
  std::filesystem::create_directory_symlink("../../../devices/LNXSYSTM:00/ndbus0/region0/dax0.0/dax0.0",
                                            std::filesystem::path(dir_.path()) / "sys/bus/dax/devices/dax0.0");
  const MemoryTopology t = read();
  ASSERT_EQ(t.dax_devices.size(), 1u);
  EXPECT_EQ(t.dax_devices[0].cxl_region, "");
  EXPECT_NE(::pmlab::platform::node(t, 1).label, TierLabel::cxl) << ::pmlab::platform::node(t, 1).evidence;
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
