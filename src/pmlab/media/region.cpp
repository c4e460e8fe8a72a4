#include "pmlab/media/region.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/common/units.hpp"

namespace pmlab::media {

namespace {
constexpr auto kKinds = enum_names<Kind>("medium", {{Kind::dram, "dram"}, {Kind::pool, "pool"}});
}  // namespace

const char* to_string(Kind k) noexcept { return kKinds.name(k); }
Result<Kind> parse_kind(std::string_view text) { return kKinds.parse(text); }

DramBuffer::~DramBuffer() { release(); }

void DramBuffer::release() noexcept {
  if (base_ != nullptr) munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
}

Status DramBuffer::reserve(size_t bytes, Pages pages) {
  if (bytes <= size_ && pages == pages_) return Status::success();
  release();
  pages_ = pages;
  if (pages == Pages::base) {
    const size_t rounded = (bytes + 4095) & ~size_t{4095};
    void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED)
      return error(Errc::no_space, "cannot map " + format_size(rounded) + " of DRAM: " + std::strerror(errno));
    base_ = static_cast<std::byte*>(p);
    size_ = rounded;
    return Status::success();
  }
  // Huge pages: a 2 MiB-aligned range (over-map, trim the ends), advised before the first touch so the
  // faults take whole huge pages; then every page is touched, as MAP_POPULATE would.
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t rounded = (bytes + kHuge - 1) & ~(kHuge - 1);
  void* p = mmap(nullptr, rounded + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return error(Errc::no_space, "cannot map " + format_size(rounded) + " of DRAM: " + std::strerror(errno));
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (start + kHuge - 1) & ~(kHuge - 1);
  if (aligned > start) munmap(p, aligned - start);
  if (const uintptr_t tail = start + rounded + kHuge - (aligned + rounded); tail > 0)
    munmap(reinterpret_cast<void*>(aligned + rounded), tail);
  base_ = reinterpret_cast<std::byte*>(aligned);
  size_ = rounded;
  madvise(base_, size_, MADV_HUGEPAGE);  // a kernel without THP keeps base pages: huge_mapped_bytes says so
  for (size_t o = 0; o < size_; o += 4096) base_[o] = std::byte{0};
  return Status::success();
}

uint64_t huge_mapped_bytes(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(addr);
  std::string line;
  bool inside = false;
  uint64_t bytes = 0;
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
      continue;
    }
    if (!inside) continue;
    std::istringstream fields(line);
    std::string name;
    uint64_t kb = 0;
    fields >> name >> kb;
    if (name == "AnonHugePages:" || name == "ShmemPmdMapped:" || name == "FilePmdMapped:") bytes += kb * 1024;
  }
  return bytes;
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
