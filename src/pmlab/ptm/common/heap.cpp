#include "pmlab/ptm/common/heap.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pmlab::ptm {

void ptm_fatal(const std::string& what) {
  std::fprintf(stderr, "pmlab: ptm: fatal: %s\n", what.c_str());
  std::abort();
}

Status Heap::format(const persist::Persister& data, uint64_t recovered_seq) {
  if (size_ < kFirstBlock + 4 * kBlockGrain)
    return error(Errc::no_space, "ptm heap of " + std::to_string(size_) + " bytes is too small");
  if (reinterpret_cast<uintptr_t>(base_) % 64 != 0)
    return error(Errc::invalid_argument, "ptm heap base is not 64-byte aligned");
  HeapHeader formatted{};  // every byte set: the header has no padding
  formatted.magic = kHeapMagic;
  formatted.size = size_;
  formatted.top = kFirstBlock;
  formatted.recovered_seq = recovered_seq;
  if (data.store_changed(&header(), &formatted, sizeof formatted) > 0) data.fence();
  clear_lists();
  return Status::success();
}

namespace {
template <class F>
Status walk(const std::byte* base, size_t size, F&& f) {
  const HeapHeader& h = *reinterpret_cast<const HeapHeader*>(base);
  if (h.magic != kHeapMagic) return error(Errc::corrupted, "ptm heap magic does not match");
  if (h.size != size)
    return error(Errc::corrupted, "ptm heap size " + std::to_string(h.size) + " != region " + std::to_string(size));
  if (h.top < kFirstBlock || h.top > size || h.top % kBlockGrain != 0)
    return error(Errc::corrupted, "ptm heap top " + std::to_string(h.top) + " outside the region");
  for (uint64_t off = kFirstBlock; off < h.top;) {
    const uint64_t word = *reinterpret_cast<const uint64_t*>(base + off);
    const uint64_t bytes = word & ~kAllocated;
    if (bytes == 0 || bytes % kBlockGrain != 0 || off + bytes > h.top)
      return error(Errc::corrupted,
                   "ptm heap block at " + std::to_string(off) + " has a bad header " + std::to_string(word));
    f(off, bytes, (word & kAllocated) != 0);
    off += bytes;
  }
  return Status::success();
}
}  // namespace

void Heap::clear_lists() {
  for (auto& a : arenas_) {
    a->small.assign(kSmallClasses + 1, {});
    a->large.clear();
    a->blocks.store(0, std::memory_order_relaxed);
  }
}

Status Heap::open() {
  clear_lists();
  size_t next = 0;
  return walk(base_, size_, [&](uint64_t off, uint64_t bytes, bool allocated) {
    if (!allocated) give_free(off, bytes, static_cast<int>(next++ % arenas_.size()));
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

uint64_t Heap::Arena::take(uint64_t bytes) {
  if (blocks.load(std::memory_order_relaxed) == 0) return 0;
  const std::lock_guard<std::mutex> guard(lock);
  const uint64_t cls = bytes / kBlockGrain;
  if (cls <= kSmallClasses) {
    std::vector<uint64_t>& list = small[cls];
    if (list.empty()) return 0;
    const uint64_t off = list.back();
    list.pop_back();
    blocks.fetch_sub(1, std::memory_order_relaxed);
    return off;
  }
  auto it = large.find(bytes);
  if (it == large.end() || it->second.empty()) return 0;
  const uint64_t off = it->second.back();
  it->second.pop_back();
  blocks.fetch_sub(1, std::memory_order_relaxed);
  return off;
}

uint64_t Heap::take_free(uint64_t bytes, int arena) {
  const size_t n = arenas_.size();
  const size_t own = static_cast<size_t>(arena) % n;
  for (size_t i = 0; i < n; ++i)
    if (const uint64_t off = arenas_[(own + i) % n]->take(bytes)) return off;
  return 0;
}

void Heap::give_free(uint64_t block, uint64_t bytes, int arena) {
  Arena& a = *arenas_[static_cast<size_t>(arena) % arenas_.size()];
  const std::lock_guard<std::mutex> guard(a.lock);
  const uint64_t cls = bytes / kBlockGrain;
  if (cls <= kSmallClasses) a.small[cls].push_back(block);
  else a.large[bytes].push_back(block);
  a.blocks.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace pmlab::ptm
