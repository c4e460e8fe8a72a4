#include "pmlab/platform/memory_tiers.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

#include "pmlab/platform/topology.hpp"

namespace pmlab::platform {
namespace fs = std::filesystem;

namespace {

std::optional<std::string> read_line(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

// A decimal or 0x-prefixed hexadecimal number, as sysfs writes sizes and attributes.
std::optional<uint64_t> read_number(const fs::path& path) {
  auto text = read_line(path);
  if (!text || text->empty()) return std::nullopt;
  const bool hex = text->starts_with("0x");
  const char* first = text->data() + (hex ? 2 : 0);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(first, text->data() + text->size(), value, hex ? 16 : 10);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

// read_number, where a file that is there and holds no number is named in `notes` (as `shown`), so that it
// does not read as a fact the firmware or the kernel left out.
std::optional<uint64_t> read_number_noted(const fs::path& path, const std::string& shown,
                                          std::vector<std::string>& notes) {
  auto value = read_number(path);
  if (!value && read_line(path)) notes.push_back(shown + " could not be read: left unknown");
  return value;
}

std::optional<int> read_int(const fs::path& path) {
  auto text = read_line(path);
  if (!text) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
}

// The numeric suffix of "node12" -> 12; nullopt for other names.
std::optional<int> numbered(const std::string& name, std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(name.data() + prefix.size(), name.data() + name.size(), value);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return value;
}

std::vector<std::string> entries(const fs::path& dir, std::string_view prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (const std::string name = entry.path().filename().string(); name.starts_with(prefix)) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

// "Node 2 MemTotal:       67108864 kB"; nullopt where the file or its MemTotal line cannot be read, or holds no
// count of KiB that fits in 64 bits of bytes.
std::optional<uint64_t> mem_total_bytes(const fs::path& meminfo) {
  std::ifstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find("MemTotal:");
    if (at == std::string::npos) continue;
    std::string_view rest = std::string_view(line).substr(at + 9);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    uint64_t kib = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
    if (ec != std::errc() || end == rest.data() || kib > UINT64_MAX / 1024) return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

// The kernel's online nodes (node/online, "0-3"): the nodes each SLIT row lists distances to, in order. Where
// the file is missing, the numbered node directories.
std::vector<int> online_nodes(const fs::path& node_root) {
  if (auto listed = read_line(node_root / "online"); listed && !listed->empty())
    if (std::vector<int> ids = parse_cpu_list(*listed); !ids.empty()) return ids;
  std::vector<int> ids;
  for (const std::string& name : entries(node_root, "node"))
    if (auto id = numbered(name, "node")) ids.push_back(*id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<NodeAccess> read_access(const fs::path& node_dir, std::vector<std::string>& notes) {
  std::vector<NodeAccess> out;
  for (const std::string& name : entries(node_dir, "access")) {
    const auto access_class = numbered(name, "access");
    if (!access_class) continue;
    const fs::path initiators = node_dir / name / "initiators";
    NodeAccess a;
    a.access_class = *access_class;
    for (const std::string& entry : entries(initiators, "node"))
      if (auto id = numbered(entry, "node")) a.initiators.push_back(*id);
    std::sort(a.initiators.begin(), a.initiators.end());
    const auto attribute = [&](const char* file) {
      return read_number_noted(initiators / file, node_dir.filename().string() + "/" + name + "/initiators/" + file,
                               notes);
    };
    a.read_latency_ns = attribute("read_latency");
    a.write_latency_ns = attribute("write_latency");
    a.read_bandwidth_mb_s = attribute("read_bandwidth");
    a.write_bandwidth_mb_s = attribute("write_bandwidth");
    out.push_back(std::move(a));
  }
  return out;
}

// The nodes with CPUs or memory, and the online nodes their SLIT rows index; a file that is there and cannot
// be read is named in the notes (what it leaves unknown), never taken for an answer.
void read_nodes(const fs::path& node_root, MemoryTopology& t) {
  t.online_nodes = online_nodes(node_root);
  for (const std::string& name : entries(node_root, "node")) {
    const auto id = numbered(name, "node");
    if (!id) continue;
    const fs::path dir = node_root / name;
    const auto unreadable = [&](const std::string& file, const std::string& leaves) {
      t.notes.push_back(name + "/" + file + " could not be read: " + leaves);
    };
    MemoryNode node;
    node.id = *id;
    const auto cpulist = read_line(dir / "cpulist");
    node.cpus = parse_cpu_list(cpulist.value_or(""));
    if (!cpulist || (node.cpus.empty() && !cpulist->empty())) unreadable("cpulist", "its CPUs are unknown");
    const auto memory = mem_total_bytes(dir / "meminfo");
    if (!memory) unreadable("meminfo", "its memory is unknown");
    node.memory_bytes = memory.value_or(0);
    if (auto row = read_line(dir / "distance")) {
      std::istringstream distances(*row);
      for (int d = 0; distances >> d;) node.distances.push_back(d);
      if (!distances.eof() || node.distances.size() != t.online_nodes.size()) {
        node.distances.clear();
        unreadable("distance", "its SLIT distances are unknown (not one number per online node)");
      }
    }
    node.access = read_access(dir, t.notes);
    if (!node.cpus.empty() || node.memory_bytes > 0) t.nodes.push_back(std::move(node));
  }
  std::sort(t.nodes.begin(), t.nodes.end(), [](const MemoryNode& a, const MemoryNode& b) { return a.id < b.id; });
}

void read_cxl(const fs::path& cxl_devices, MemoryTopology& t) {
  for (const std::string& name : entries(cxl_devices, "mem")) {
    if (!numbered(name, "mem")) continue;
    CxlMemdev m;
    m.name = name;
    m.ram_bytes = read_number(cxl_devices / name / "ram" / "size").value_or(0);
    m.pmem_bytes = read_number(cxl_devices / name / "pmem" / "size").value_or(0);
    if (auto node = read_int(cxl_devices / name / "numa_node"); node && *node >= 0) m.numa_node = node;
    t.cxl_memdevs.push_back(std::move(m));
  }
  for (const std::string& name : entries(cxl_devices, "region")) {
    if (!numbered(name, "region")) continue;
    const fs::path dir = cxl_devices / name;
    CxlRegion r;
    r.name = name;
    r.mode = read_line(dir / "mode").value_or("");
    r.size_bytes = read_number_noted(dir / "size", "CXL " + name + "/size", t.notes).value_or(0);
    r.interleave_ways = static_cast<unsigned>(
        read_number_noted(dir / "interleave_ways", "CXL " + name + "/interleave_ways", t.notes).value_or(0));
    for (const std::string& target : entries(dir, "target"))
      if (auto decoder = read_line(dir / target); decoder && !decoder->empty()) r.targets.push_back(*decoder);
    t.cxl_regions.push_back(std::move(r));
  }
}

// The CXL region a DAX device was carved from: a component of the device's place in the device tree that
// names one of the CXL regions below a CXL decoder (an nvdimm region below its ndbus may have the same name).
std::string cxl_region_of(const fs::path& device, const std::vector<CxlRegion>& regions) {
  std::error_code ec;
  const fs::path real = fs::canonical(device, ec);
  if (ec) return {};
  std::string parent;
  for (const auto& part : real) {
    if (parent.starts_with("decoder"))
      for (const CxlRegion& r : regions)
        if (part == r.name) return r.name;
    parent = part.string();
  }
  return {};
}

void read_dax(const fs::path& dax_devices, MemoryTopology& t) {
  for (const std::string& name : entries(dax_devices, "dax")) {
    const fs::path dir = dax_devices / name;
    DaxDevice d;
    d.name = name;
    d.size_bytes = read_number(dir / "size").value_or(0);
    if (auto node = read_int(dir / "target_node"); node && *node >= 0) d.target_node = node;
    std::error_code ec;
    const std::string driver = fs::read_symlink(dir / "driver", ec).filename().string();
    d.mode = ec ? "unbound" : driver == "kmem" ? "system-ram" : driver == "device_dax" ? "devdax" : driver;
    d.cxl_region = cxl_region_of(dir, t.cxl_regions);
    t.dax_devices.push_back(std::move(d));
  }
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return out;
}

std::string gib(uint64_t bytes) {
  std::ostringstream out;
  out.precision(3);
  out << static_cast<double>(bytes) / (1ULL << 30) << " GiB";
  return out.str();
}

// HMAT's read latency of a node from its nearest initiators, in words, when the firmware gives it.
std::string hmat_words(const MemoryNode& node) {
  for (const NodeAccess& a : node.access)
    if (a.access_class == 0 && a.read_latency_ns)
      return "; HMAT read latency " + std::to_string(*a.read_latency_ns) + " ns" +
             (a.read_bandwidth_mb_s ? ", read bandwidth " + std::to_string(*a.read_bandwidth_mb_s) + " MB/s" : "");
  return "";
}

void label(MemoryTopology& t) {
  const bool cxl_capacity =
      std::any_of(t.cxl_memdevs.begin(), t.cxl_memdevs.end(), [](const CxlMemdev& m) { return m.ram_bytes > 0; });
  for (MemoryNode& node : t.nodes) {
    const int d = slit_distance(t, t.initiator_node, node.id);
    const std::string slit =
        d >= 0 ? "SLIT distance from node " + std::to_string(t.initiator_node) + ": " + std::to_string(d)
               : "no SLIT distance";
    auto dax = std::find_if(t.dax_devices.begin(), t.dax_devices.end(), [&](const DaxDevice& x) {
      return x.mode == "system-ram" && x.target_node == node.id && !x.cxl_region.empty();
    });
    if (node.id == t.initiator_node) {
      node.label = TierLabel::local;
      node.evidence = "the initiator node (CPUs " + cpu_list_text(node.cpus) + "); " + slit + hmat_words(node);
    } else if (dax != t.dax_devices.end()) {
      node.label = TierLabel::cxl;
      node.evidence = dax->name + " of CXL " + dax->cxl_region + " (" + gib(dax->size_bytes) +
                      ") is onlined as system RAM into this node; " + slit + hmat_words(node);
    } else if (!node.cpus.empty()) {
      node.label = TierLabel::remote_socket;
      node.evidence = "another node with CPUs (" + cpu_list_text(node.cpus) + "); " + slit + hmat_words(node);
    } else if (cxl_capacity) {
      node.label = TierLabel::cxl;
      node.evidence =
          "a CPU-less node while CXL memory devices offer volatile capacity, but no CXL region's "
          "DAX device names this node (firmware-configured CXL memory?); " +
          slit + hmat_words(node);
    } else {
      node.label = TierLabel::unknown;
      node.evidence =
          "a CPU-less node with no CXL device behind it (HBM, a memory-only socket, or an emulated "
          "node); " +
          slit + hmat_words(node);
    }
  }
}

}  // namespace

namespace {

// The regions on the way from a device to the root of the device tree: an nvdimm region is a "regionN"
// under an "ndbusN", a CXL region a "regionN" under a root decoder ("decoderX.Y"). Returns the nvdimm
// region's directory (empty when there is none).
fs::path regions_above(const fs::path& device, PoolBacking& b) {
  fs::path dir, nd_dir;
  std::string parent;
  for (const auto& part : device) {
    dir /= part;
    const std::string name = part.string();
    if (numbered(name, "region")) {
      if (parent.rfind("ndbus", 0) == 0) {
        b.nd_region = name;
        nd_dir = dir;
      }
      if (parent.rfind("decoder", 0) == 0) b.cxl_region = name;
    }
    parent = name;
  }
  return nd_dir;
}

PoolBacking dax_backing(const std::string& name, const fs::path& root) {
  PoolBacking b;
  std::error_code ec;
  const fs::path real = fs::canonical(root / "sys/bus/dax/devices" / name, ec);
  if (ec) {
    b.label = "unknown";
    b.evidence = "no /sys/bus/dax/devices/" + name;
    return b;
  }
  regions_above(real, b);
  b.label = b.cxl_region.empty() ? "devdax" : "cxl-devdax";
  b.evidence = "DAX device " + name + (b.cxl_region.empty() ? "" : " of CXL region " + b.cxl_region);
  return b;
}

}  // namespace

PoolBacking pool_backing(const std::string& source, const fs::path& root) {
  PoolBacking b;
  const std::string name = fs::path(source).filename().string();
  if (source == "tmpfs" || source == "ramfs") {
    b.label = "dram";
    b.evidence = "a " + source + " file system: DRAM pages, no persistence";
    return b;
  }
  if (name.rfind("dax", 0) == 0 && source.rfind("/dev/", 0) == 0) return dax_backing(name, root);
  std::error_code ec;
  const fs::path block = fs::canonical(root / "sys/block" / name, ec);
  if (source.rfind("/dev/", 0) != 0 || ec) {
    b.label = "unknown";
    b.evidence = "mounted from " + source + ", which is no block device sysfs describes";
    return b;
  }
  const fs::path nd_dir = regions_above(block, b);
  if (nd_dir.empty()) {
    b.label = "unknown";
    b.evidence = source + " is in no nvdimm region";
    return b;
  }
  b.persistence_domain = read_line(nd_dir / "persistence_domain").value_or("");
  b.label = b.cxl_region.empty() ? "nvdimm-pmem" : "cxl-pmem";
  b.evidence = source + " in nvdimm region " + b.nd_region +
               (b.cxl_region.empty() ? "" : ", provided by CXL persistent-memory region " + b.cxl_region) +
               "; persistence_domain: " + (b.persistence_domain.empty() ? "not reported" : b.persistence_domain);
  return b;
}

const char* to_string(TierLabel label) noexcept {
  switch (label) {
    case TierLabel::local: return "local";
    case TierLabel::remote_socket: return "remote-socket";
    case TierLabel::cxl: return "cxl";
    case TierLabel::unknown: return "unknown";
  }
  return "unknown";
}

int slit_distance(const MemoryTopology& t, int from, int to) {
  const auto source =
      std::find_if(t.nodes.begin(), t.nodes.end(), [from](const MemoryNode& n) { return n.id == from; });
  const auto column = std::find(t.online_nodes.begin(), t.online_nodes.end(), to);
  if (source == t.nodes.end() || column == t.online_nodes.end()) return -1;
  const size_t index = static_cast<size_t>(column - t.online_nodes.begin());
  return index < source->distances.size() ? source->distances[index] : -1;
}

MemoryTopology read_memory_topology(const fs::path& root, std::optional<int> initiator_node) {
  MemoryTopology t;
  const fs::path sys = root / "sys";
  read_nodes(sys / "devices" / "system" / "node", t);
  if (t.nodes.empty()) t.notes.push_back("no NUMA node in sysfs: a kernel without NUMA; the machine is one tier");
  std::error_code ec;
  if (fs::is_directory(sys / "bus" / "cxl" / "devices", ec)) read_cxl(sys / "bus" / "cxl" / "devices", t);
  else t.notes.push_back("no CXL bus in sysfs (no CXL device, or a kernel without CXL support)");
  read_dax(sys / "bus" / "dax" / "devices", t);
  const bool any_hmat =
      std::any_of(t.nodes.begin(), t.nodes.end(), [](const MemoryNode& n) { return !n.access.empty(); });
  if (!t.nodes.empty() && !any_hmat)
    t.notes.push_back("no HMAT access attributes: the firmware gives no latency or bandwidth per node");
  if (initiator_node) {
    t.initiator_node = *initiator_node;
  } else {
    auto first = std::find_if(t.nodes.begin(), t.nodes.end(),
                              [](const MemoryNode& n) { return !n.cpus.empty() && n.memory_bytes > 0; });
    t.initiator_node = first != t.nodes.end() ? first->id : 0;
  }
  label(t);
  return t;
}

}  // namespace pmlab::platform
