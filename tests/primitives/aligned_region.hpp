// A 4 KiB-aligned DRAM region filled with stale bytes, as a reused pool would be.
#pragma once

#include <cstdlib>
#include <cstring>
#include <new>
#include <span>

namespace pmlab::testing {

struct AlignedRegion {
  explicit AlignedRegion(size_t bytes)
      : size((bytes + 4095) & ~size_t{4095}), base(static_cast<std::byte*>(std::aligned_alloc(4096, size))) {
    if (base == nullptr) throw std::bad_alloc();
    std::memset(base, 0xa5, size);
  }
  ~AlignedRegion() { std::free(base); }
  AlignedRegion(const AlignedRegion&) = delete;
  AlignedRegion& operator=(const AlignedRegion&) = delete;
  std::span<std::byte> span() const { return {base, size}; }
  size_t size;
  std::byte* base;
};

}  // namespace pmlab::testing
