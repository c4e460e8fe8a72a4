// The transactional heap both PTMs share: one region addressed by offsets (a crash image is mapped back
// at another address), a header with the bump top and the root words, and blocks that carry their own
// size and allocated bit.
//
// Layout: HeapHeader (128 B) at offset 0, then blocks from kFirstBlock up to `top`. A block is an 8-byte
// header word (bytes | kAllocated) followed by its payload; sizes are multiples of 16. Allocation state
// lives only in those header words and in `top`, and a PTM changes both through its own transactional
// writes — so a crash rolls an uncommitted allocation or free back with the rest of the transaction and
// nothing leaks. The free lists are volatile: rebuilt from a walk of the blocks when the heap is opened
// (after recovery), one set per arena (a PTM's log slot, i.e. its thread) under the arena's own lock, so
// threads that allocate and free concurrently mostly touch only their own lists.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
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
  uint64_t size;           // bytes of the region the heap may use
  uint64_t top;            // end of the last block ever carved (transactional)
  uint64_t recovered_seq;  // the redo PTM's: no log record up to this seq is ever replayed (one word: see recover())
  uint64_t root[kRoots];   // the structure's entry points (transactional)
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
  Heap() : Heap(nullptr, 0) {}
  Heap(std::byte* base, size_t size, int arenas = 1)
      : base_(base), size_(size & ~(kBlockGrain - 1)), arenas_(static_cast<size_t>(arenas < 1 ? 1 : arenas)) {
    for (auto& a : arenas_) a = std::make_unique<Arena>();
  }

  // Lays out an empty heap and makes it durable through `data`, its header's recovered_seq set. A header
  // that holds its formatted value already (a new pool's zeros hold most of it) is only read.
  Status format(const persist::Persister& data, uint64_t recovered_seq = 0);
  // Checks the header and every block below top, and rebuilds the free lists (dealt to the arenas by
  // turns).
  Status open();
  // The same walk without touching the free lists.
  Result<HeapStats> stats() const;

  // Block bytes (header included) for a payload of `bytes`.
  static uint64_t block_bytes(uint64_t payload) noexcept {
    return (payload + kBlockHeader + kBlockGrain - 1) & ~(kBlockGrain - 1);
  }
  // A free block of exactly `bytes` (its offset), or 0: from arena `arena`'s lists, else from another
  // arena's. Volatile; the caller writes the header.
  uint64_t take_free(uint64_t bytes, int arena = 0);
  void give_free(uint64_t block, uint64_t bytes, int arena = 0);

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
  // A line of its own: each thread's commits take and give blocks in their own arena, and an arena that
  // shared a line with its neighbour's counter would move it between the cores on every allocation.
  struct alignas(64) Arena {
    std::mutex lock;
    std::vector<std::vector<uint64_t>> small;
    std::map<uint64_t, std::vector<uint64_t>> large;
    // Blocks on the lists, read without the lock: an empty arena is passed over without taking it (its
    // lock's line would move between cores on every allocation that finds its own arena empty).
    std::atomic<uint64_t> blocks{0};
    uint64_t take(uint64_t bytes);
  };
  void clear_lists();

  std::byte* base_ = nullptr;
  size_t size_ = 0;
  std::vector<std::unique_ptr<Arena>> arenas_;
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
  std::vector<std::pair<uint64_t, uint64_t>> taken;  // blocks from the free lists: given back on abort

  void clear() noexcept {
    fresh.clear();
    frees.clear();
    taken.clear();
  }
  bool is_fresh(uint64_t off) const noexcept {
    for (const Range& r : fresh)
      if (off >= r.begin && off < r.end) return true;
    return false;
  }
};

// alloc/free written once over a transaction's read/write (Tx has read(const uint64_t*), write(uint64_t*,
// uint64_t), heap(), alloc_state(), arena(), and the policy of which new blocks it writes in place:
// in_place_reused() for a block from the free lists, in_place_carved(bytes) for one carved at the top,
// asked before the top is read — a PTM may take the top for itself there). Returns the payload offset, 0
// when the heap is full.
template <class Tx>
uint64_t tx_alloc(Tx& tx, uint64_t payload) {
  Heap& heap = tx.heap();
  TxAllocState& st = tx.alloc_state();
  const uint64_t bytes = Heap::block_bytes(payload);
  uint64_t block = heap.take_free(bytes, tx.arena());
  bool in_place = false;
  if (block != 0) {
    st.taken.push_back({block, bytes});
    in_place = tx.in_place_reused();
  } else {
    in_place = tx.in_place_carved(bytes);
    uint64_t* top = &heap.header().top;
    const uint64_t old = tx.read(top);
    if (old < kFirstBlock || old + bytes > heap.size()) return 0;
    tx.write(top, old + bytes);
    block = old;
  }
  tx.write(heap.template at<uint64_t>(block), bytes | kAllocated);
  if (in_place) st.fresh.push_back({block + kBlockHeader, block + bytes});
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

// After commit: freed blocks become allocatable (in the committing thread's arena).
inline void finish_frees(Heap& heap, TxAllocState& st, int arena) {
  for (const auto& [block, bytes] : st.frees) heap.give_free(block, bytes, arena);
}
// After an abort: blocks taken from the free lists go back.
inline void return_taken(Heap& heap, TxAllocState& st, int arena) {
  for (const auto& [block, bytes] : st.taken) heap.give_free(block, bytes, arena);
  st.taken.clear();
}

// Fatal misuse of a PTM (a transaction larger than its log slot): a message and abort, never a silent
// truncation of the log.
[[noreturn]] void ptm_fatal(const std::string& what);
// What a transaction too large for its log slot is told to do.
inline constexpr const char* kLargerSlot =
    "a larger slot holds more: log_bytes_per_thread in the library's options, slot_bytes in the engine's";

}  // namespace pmlab::ptm
