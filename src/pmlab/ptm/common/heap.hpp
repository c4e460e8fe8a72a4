// The transactional heap both PTMs share: one region addressed by offsets (a crash image is mapped back
// at another address), a header with the bump top and the root words, and blocks that carry their own
// size and allocated bit.
//
// Layout: HeapHeader (128 B) at offset 0, then blocks from kFirstBlock up to `top`. A block is an 8-byte
// header word (bytes | kAllocated) followed by its payload; sizes are multiples of 16. Allocation state
// lives only in those header words and in `top`, and a PTM changes both through its own transactional
// writes — so a crash rolls an uncommitted allocation or free back with the rest of the transaction and
// nothing leaks. The free lists are volatile: rebuilt from a walk of the blocks when the heap is opened
// (after recovery), and changed only under the PTM's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::ptm {

inline constexpr int kRoots = 12;
inline constexpr uint64_t kHeapMagic = 0x70746d2d68656170ull;  // "ptm-heap"
inline constexpr uint64_t kBlockGrain = 16;
inline constexpr uint64_t kBlockHeader = 8;
inline constexpr uint64_t kAllocated = 1;

struct alignas(64) HeapHeader {
  uint64_t magic;
  uint64_t size;  // bytes of the region the heap may use
  uint64_t top;   // end of the last block ever carved (transactional)
  uint64_t reserved;
  uint64_t root[kRoots];  // the structure's entry points (transactional)
};
static_assert(sizeof(HeapHeader) == 128);
inline constexpr uint64_t kFirstBlock = sizeof(HeapHeader);

struct HeapStats {
  uint64_t allocated_blocks = 0;
  uint64_t allocated_bytes = 0;
  uint64_t free_blocks = 0;
  uint64_t top = 0;
};

class Heap {
 public:
  Heap() = default;
  Heap(std::byte* base, size_t size) noexcept : base_(base), size_(size & ~(kBlockGrain - 1)) {}

  // Lays out an empty heap and makes it durable through `data`.
  Status format(const persist::Persister& data);
  // Checks the header and every block below top, and rebuilds the free lists.
  Status open();
  // The same walk without touching the free lists.
  Result<HeapStats> stats() const;

  // Block bytes (header included) for a payload of `bytes`.
  static uint64_t block_bytes(uint64_t payload) noexcept {
    return (payload + kBlockHeader + kBlockGrain - 1) & ~(kBlockGrain - 1);
  }
  // A free block of exactly `bytes` (its offset), or 0. Volatile; the caller writes the header.
  uint64_t take_free(uint64_t bytes) noexcept;
  void give_free(uint64_t block, uint64_t bytes);

  HeapHeader& header() const noexcept { return *reinterpret_cast<HeapHeader*>(base_); }
  std::byte* base() const noexcept { return base_; }
  size_t size() const noexcept { return size_; }
  template <class T>
  T* at(uint64_t off) const noexcept {
    return reinterpret_cast<T*>(base_ + off);
  }
  uint64_t offset_of(const void* p) const noexcept {
    return static_cast<uint64_t>(static_cast<const std::byte*>(p) - base_);
  }

 private:
  static constexpr uint64_t kSmallClasses = 256;  // blocks up to 4 KiB have a list per size
  std::byte* base_ = nullptr;
  size_t size_ = 0;
  std::vector<std::vector<uint64_t>> small_;
  std::map<uint64_t, std::vector<uint64_t>> large_;
};

// Per-transaction bookkeeping both PTMs share: the blocks carved in this transaction (their payloads
// need no logging — if the transaction does not commit, the block is free again) and the frees that take
// effect on the volatile lists only once it has committed.
struct TxAllocState {
  struct Range {
    uint64_t begin, end;
  };
  std::vector<Range> fresh;
  std::vector<std::pair<uint64_t, uint64_t>> frees;  // (block, bytes)

  void clear() noexcept {
    fresh.clear();
    frees.clear();
  }
  bool is_fresh(uint64_t off) const noexcept {
    for (const Range& r : fresh)
      if (off >= r.begin && off < r.end) return true;
    return false;
  }
};

// alloc/free written once over a transaction's read/write (Tx has read(const uint64_t*), write(uint64_t*,
// uint64_t), heap() and alloc_state()). Returns the payload offset, 0 when the heap is full.
template <class Tx>
uint64_t tx_alloc(Tx& tx, uint64_t payload) {
  Heap& heap = tx.heap();
  TxAllocState& st = tx.alloc_state();
  const uint64_t bytes = Heap::block_bytes(payload);
  uint64_t block = heap.take_free(bytes);
  if (block == 0) {
    uint64_t* top = &heap.header().top;
    const uint64_t old = tx.read(top);
    if (old + bytes > heap.size()) return 0;
    tx.write(top, old + bytes);
    block = old;
  }
  tx.write(heap.template at<uint64_t>(block), bytes | kAllocated);
  st.fresh.push_back({block + kBlockHeader, block + bytes});
  return block + kBlockHeader;
}

template <class Tx>
void tx_free(Tx& tx, uint64_t payload_off) {
  Heap& heap = tx.heap();
  uint64_t* hdr = heap.template at<uint64_t>(payload_off - kBlockHeader);
  const uint64_t word = tx.read(hdr);
  tx.write(hdr, word & ~kAllocated);
  tx.alloc_state().frees.push_back({payload_off - kBlockHeader, word & ~kAllocated});
}

// After commit: freed blocks become allocatable.
inline void finish_frees(Heap& heap, TxAllocState& st) {
  for (const auto& [block, bytes] : st.frees) heap.give_free(block, bytes);
}

// Fatal misuse of a PTM (a transaction larger than its log slot): a message and abort, never a silent
// truncation of the log.
[[noreturn]] void ptm_fatal(const std::string& what);

}  // namespace pmlab::ptm
