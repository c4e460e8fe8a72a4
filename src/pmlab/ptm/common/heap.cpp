#include "pmlab/ptm/common/heap.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pmlab::ptm {

void ptm_fatal(const std::string& what) {
  std::fprintf(stderr, "pmlab: ptm: fatal: %s\n", what.c_str());
  std::abort();
}

Status Heap::format(const persist::Persister& data) {
  if (size_ < kFirstBlock + 4 * kBlockGrain)
    return error(Errc::no_space, "ptm heap of " + std::to_string(size_) + " bytes is too small");
  if (reinterpret_cast<uintptr_t>(base_) % 64 != 0) return error(Errc::invalid_argument, "ptm heap base is not 64-byte aligned");
  HeapHeader& h = header();
  std::memset(&h, 0, sizeof h);
  h.magic = kHeapMagic;
  h.size = size_;
  h.top = kFirstBlock;
  data.persist(&h, sizeof h);
  small_.assign(kSmallClasses + 1, {});
  large_.clear();
  return Status::success();
}

namespace {
template <class F>
Status walk(const std::byte* base, size_t size, F&& f) {
  const HeapHeader& h = *reinterpret_cast<const HeapHeader*>(base);
  if (h.magic != kHeapMagic) return error(Errc::corrupted, "ptm heap magic does not match");
  if (h.size != size) return error(Errc::corrupted, "ptm heap size " + std::to_string(h.size) + " != region " + std::to_string(size));
  if (h.top < kFirstBlock || h.top > size || h.top % kBlockGrain != 0)
    return error(Errc::corrupted, "ptm heap top " + std::to_string(h.top) + " outside the region");
  for (uint64_t off = kFirstBlock; off < h.top;) {
    const uint64_t word = *reinterpret_cast<const uint64_t*>(base + off);
    const uint64_t bytes = word & ~kAllocated;
    if (bytes == 0 || bytes % kBlockGrain != 0 || off + bytes > h.top)
      return error(Errc::corrupted, "ptm heap block at " + std::to_string(off) + " has a bad header " + std::to_string(word));
    f(off, bytes, (word & kAllocated) != 0);
    off += bytes;
  }
  return Status::success();
}
}  // namespace

Status Heap::open() {
  small_.assign(kSmallClasses + 1, {});
  large_.clear();
  return walk(base_, size_, [&](uint64_t off, uint64_t bytes, bool allocated) {
    if (!allocated) give_free(off, bytes);
  });
}

Result<HeapStats> Heap::stats() const {
  HeapStats s;
  Status st = walk(base_, size_, [&](uint64_t, uint64_t bytes, bool allocated) {
    if (allocated) {
      ++s.allocated_blocks;
      s.allocated_bytes += bytes;
    } else {
      ++s.free_blocks;
    }
  });
  if (!st) return st;
  s.top = header().top;
  return s;
}

uint64_t Heap::take_free(uint64_t bytes) noexcept {
  const uint64_t cls = bytes / kBlockGrain;
  if (cls <= kSmallClasses) {
    std::vector<uint64_t>& list = small_[cls];
    if (list.empty()) return 0;
    const uint64_t off = list.back();
    list.pop_back();
    return off;
  }
  auto it = large_.find(bytes);
  if (it == large_.end() || it->second.empty()) return 0;
  const uint64_t off = it->second.back();
  it->second.pop_back();
  return off;
}

void Heap::give_free(uint64_t block, uint64_t bytes) {
  const uint64_t cls = bytes / kBlockGrain;
  if (cls <= kSmallClasses)
    small_[cls].push_back(block);
  else
    large_[bytes].push_back(block);
}

}  // namespace pmlab::ptm
