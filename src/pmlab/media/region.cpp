#include "pmlab/media/region.hpp"

#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/common/units.hpp"

namespace pmlab::media {

namespace {
constexpr auto kPageNames = enum_names<Pages>("page size", {{Pages::base, "base"}, {Pages::huge, "huge"}});
constexpr auto kKinds = enum_names<Kind>("medium", {{Kind::dram, "dram"}, {Kind::pool, "pool"}, {Kind::numa, "numa"}});
constexpr size_t kPage = 4096;
// Nodes a mask passed to mbind can name; node numbers above it are refused as a parameter.
constexpr int kMaxNode = 1023;
}  // namespace

const char* to_string(Kind k) noexcept { return kKinds.name(k); }
const char* to_string(Pages p) noexcept { return kPageNames.name(p); }
Result<Pages> parse_pages(std::string_view text) { return kPageNames.parse(text); }
Result<Kind> parse_kind(std::string_view text) { return kKinds.parse(text); }

Result<Medium> parse_medium(std::string_view text) {
  constexpr std::string_view kNuma = "numa:";
  if (text.substr(0, kNuma.size()) != kNuma) {
    if (text == "numa") return error(Errc::invalid_argument, "medium numa needs its node: numa:N");
    auto kind = parse_kind(text);
    if (!kind) return kind.status();
    return Medium{*kind, -1};
  }
  const std::string_view digits = text.substr(kNuma.size());
  int node = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), node);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || node < 0 || node > kMaxNode)
    return error(Errc::invalid_argument,
                 "medium " + std::string(text) + ": N of numa:N is a node number 0.." + std::to_string(kMaxNode));
  return Medium{Kind::numa, node};
}

bool names_a_node(std::string_view text) noexcept {
  auto medium = parse_medium(text);
  return medium && medium->kind == Kind::numa;
}

std::string to_string(const Medium& m) {
  return m.kind == Kind::numa ? "numa:" + std::to_string(m.node) : std::string(to_string(m.kind));
}

// Base pages are advised MADV_NOHUGEPAGE: a kernel whose transparent huge pages are `always` would otherwise
// back the mapping with 2 MiB pages, and DRAM and node memory would see another TLB than a tmpfs pool's base
// pages. Huge pages get a 2 MiB-aligned range (over-mapped, the ends trimmed) advised MADV_HUGEPAGE; a
// kernel without THP refuses either advice and keeps base pages (mapping_pages says which it gave).
Status AnonymousMapping::map(size_t bytes, Pages pages, const std::string& what) {
  release();
  pages_ = pages;
  const size_t unit = pages == Pages::huge ? size_t{2} << 20 : size_t{4096};
  const size_t rounded = (bytes + unit - 1) & ~(unit - 1);
  const size_t slack = pages == Pages::huge ? unit : 0;
  void* p = mmap(nullptr, rounded + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return error(Errc::no_space, "cannot map " + format_size(rounded) + " " + what + ": " + std::strerror(errno));
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + unit - 1) & ~(unit - 1);
  if (aligned > start) munmap(p, aligned - start);
  if (const uintptr_t tail = start + rounded + slack - (aligned + rounded); tail > 0)
    munmap(reinterpret_cast<void*>(aligned + rounded), tail);
  base_ = reinterpret_cast<std::byte*>(aligned);
  size_ = rounded;
  madvise(base_, size_, pages == Pages::huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  return Status::success();
}

void AnonymousMapping::release() noexcept {
  if (base_ != nullptr) munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
}

Status NodeBuffer::reserve(size_t bytes, Pages pages) {
  if (mapping_.holds(bytes, pages)) return Status::success();
  PMLAB_TRY(mapping_.map(bytes, pages, "for node " + std::to_string(node_)));
  const Status st = bind_and_fault();
  if (!st.ok()) mapping_.release();
  return st;
}

Status NodeBuffer::bind_and_fault() {
  std::byte* const base = mapping_.base();
  const size_t size = mapping_.size();
  // The policy before the first touch, so every fault allocates on the node; strict: no fallback.
  std::vector<unsigned long> mask(static_cast<size_t>(kMaxNode) / (8 * sizeof(unsigned long)) + 1, 0);
  mask[static_cast<size_t>(node_) / (8 * sizeof(unsigned long))] |= 1UL << (node_ % (8 * sizeof(unsigned long)));
  if (syscall(SYS_mbind, base, size, MPOL_BIND, mask.data(), static_cast<unsigned long>(kMaxNode) + 1,
              MPOL_MF_STRICT) != 0) {
    const int e = errno;
    return error(Errc::unsupported, "cannot bind memory to node " + std::to_string(node_) +
                                        " (mbind: " + std::strerror(e) +
                                        (e == EINVAL ? "; the node has no memory or is offline" : "") + ")");
  }
  prefault_for_writing(base, size);
  auto nodes = nodes_of_pages(base, size);
  if (!nodes) return nodes.status();
  const auto elsewhere = std::count_if(nodes->begin(), nodes->end(), [&](int n) { return n != node_; });
  if (elsewhere != 0)
    return error(Errc::no_space, std::to_string(elsewhere) + " of " + std::to_string(size / kPage) +
                                     " pages bound to node " + std::to_string(node_) +
                                     " are not on it (the node's free memory too small?)");
  return Status::success();
}

Result<std::vector<int>> nodes_of_pages(const std::byte* base, size_t bytes) {
  const size_t pages = (bytes + kPage - 1) / kPage;
  std::vector<void*> addresses(pages);
  for (size_t i = 0; i < pages; ++i) addresses[i] = const_cast<std::byte*>(base + i * kPage);
  std::vector<int> status(pages, -1);
  // The query in batches: the kernel walks each batch's pages under one lock.
  constexpr size_t kBatch = 4096;
  for (size_t first = 0; first < pages; first += kBatch) {
    const size_t n = std::min(kBatch, pages - first);
    if (syscall(SYS_move_pages, 0, n, addresses.data() + first, nullptr, status.data() + first, 0) != 0)
      return error(Errc::unsupported,
                   std::string("cannot ask which node a page is on (move_pages: ") + std::strerror(errno) + ")");
  }
  for (int& s : status)
    if (s < 0) s = -1;  // -ENOENT (not present) and other errors: on no node
  return status;
}

Status DramBuffer::reserve(size_t bytes, Pages pages) {
  if (mapping_.holds(bytes, pages)) return Status::success();
  PMLAB_TRY(mapping_.map(bytes, pages, "of DRAM"));
  prefault_for_writing(mapping_.base(), mapping_.size());
  return Status::success();
}

MappingPages mapping_pages(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(addr);
  std::string line;
  bool inside = false;
  MappingPages pages;
  while (std::getline(smaps, line)) {
    // A VMA starts with "lo-hi perms …"; its fields follow as "Name:   N kB".
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space && line.find(':') > space) {
      if (inside) break;
      uint64_t lo = 0, hi = 0;  // from_chars: a line that is not a range leaves them 0 (no match)
      std::from_chars(line.data(), line.data() + dash, lo, 16);
      std::from_chars(line.data() + dash + 1, line.data() + space, hi, 16);
      inside = lo <= a && a < hi;
      if (inside) pages.bytes = hi - lo;
      continue;
    }
    if (!inside) continue;
    std::istringstream fields(line);
    std::string name;
    uint64_t kb = 0;
    fields >> name >> kb;
    if (name == "AnonHugePages:" || name == "ShmemPmdMapped:" || name == "FilePmdMapped:")
      pages.huge_bytes += kb * 1024;
    if (name == "VmFlags:") {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string flag; words >> flag;) pages.flags.push_back(flag);
    }
  }
  return pages;
}

void prefault_for_writing(std::byte* base, uint64_t bytes) noexcept {
  if (base == nullptr || bytes == 0) return;
#ifdef MADV_POPULATE_WRITE
  const uintptr_t page = 4096;
  const uintptr_t start = reinterpret_cast<uintptr_t>(base) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(base) + bytes;
  if (madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_WRITE) == 0) return;
#endif
  for (uint64_t off = 0; off < bytes; off += 4096) {
    volatile std::byte* p = base + off;
    *p = *p;
  }
}

}  // namespace pmlab::media
