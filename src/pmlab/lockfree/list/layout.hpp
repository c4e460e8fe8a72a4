// The region every persistent list lays out: a root line, the head sentinel's line, one line per thread
// for TLog's micro-log (unused by the other designs, kept so all share one layout), then the node slab.
// Everything is addressed by offsets from the region base.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/lockfree/alloc/slab.hpp"
#include "pmlab/lockfree/list/set.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::lockfree::list_layout {

inline constexpr uint64_t kLine = 64;

struct alignas(64) Root {
  uint64_t magic;
  uint64_t design;       // ListDesign, so a region is never recovered as another design
  uint64_t capacity;     // nodes in the slab
  uint64_t max_threads;  // TLog log lines
  uint64_t node_bytes;
  uint64_t pad[3];
};
static_assert(sizeof(Root) == 64);

// A list node. The link word carries flags in its low bits (nodes are 32-byte aligned).
struct Node {
  uint64_t key;
  uint64_t meta;  // Link-free: validity and flush flags; unused by the others
  uint64_t next;  // offset | kMark | kDirty
  uint64_t aux;   // SOFT: the persistent node of a volatile node
};
static_assert(sizeof(Node) == 32);

inline constexpr uint64_t kMark = 1;   // Harris: the node is logically deleted
inline constexpr uint64_t kDirty = 2;  // TLog: the link was written and may not be durable yet
inline constexpr uint64_t kFlags = 31;
inline constexpr uint64_t ptr(uint64_t word) noexcept { return word & ~kFlags; }

inline constexpr uint64_t kHead = kLine;  // offset of the head sentinel node
inline constexpr uint64_t log_offset(int tid) noexcept { return 2 * kLine + static_cast<uint64_t>(tid) * kLine; }
inline constexpr uint64_t slab_offset(int max_threads) noexcept { return log_offset(max_threads); }
inline constexpr uint64_t bytes_needed(uint32_t capacity, int max_threads) noexcept {
  return slab_offset(max_threads) + static_cast<uint64_t>(capacity) * sizeof(Node);
}

inline constexpr uint64_t kListMagic = 0x706d6c61622d6c6cULL;  // "pmlab-ll"

inline Root& root_of(std::byte* base) noexcept { return *reinterpret_cast<Root*>(base); }

// Zeroes the region a list of `design` needs, writes its root and makes both durable.
inline Status format(std::byte* base, size_t size, const persist::Persister& p, uint64_t design, uint32_t capacity,
                     int max_threads) {
  if (max_threads < 1 || max_threads > Slab::kMaxThreads)
    return error(Errc::invalid_argument, "max_threads out of range");
  const uint64_t bytes = bytes_needed(capacity, max_threads);
  if (bytes > size) return error(Errc::no_space, "region too small for the list");
  std::memset(base, 0, bytes);
  root_of(base) = Root{kListMagic, design, capacity, static_cast<uint64_t>(max_threads), sizeof(Node), {}};
  p.persist(base, bytes);
  return Status::success();
}

// Checks, before recovery trusts it, that the root names a list of `design` (`what` in the error) that fits.
inline Status check_root(const std::byte* base, size_t size, uint64_t design, const char* what) {
  const Root& r = *reinterpret_cast<const Root*>(base);
  if (r.magic != kListMagic || r.design != design) return error(Errc::corrupted, std::string("not a ") + what);
  if (r.max_threads < 1 || r.max_threads > static_cast<uint64_t>(Slab::kMaxThreads) ||
      bytes_needed(static_cast<uint32_t>(r.capacity), static_cast<int>(r.max_threads)) > size)
    return error(Errc::corrupted, "list root describes a larger region");
  return Status::success();
}

// What every list design keeps of its region: where the region lies, the persister its stores go through,
// and how many inserts gave up on a full slab. A design (List) adds its slabs and, after them, its
// reclaimer (destroyed first, while the slabs it frees into still exist), and its try_insert.
template <class List>
class Region {
 public:
  static uint64_t bytes_needed(uint32_t capacity, int max_threads) {
    return list_layout::bytes_needed(capacity, max_threads);
  }
  uint64_t alloc_failures() const noexcept { return alloc_failures_.load(); }

  bool insert(int tid, uint64_t key) {
    List& list = static_cast<List&>(*this);
    return insert_with_backpressure([&] { return list.try_insert(tid, key); }, [&] { list.reclaimer().reclaim_all(); },
                                    alloc_failures_);
  }

 protected:
  // Harris's search window: pred.key < key <= curr.key, with the link words the search read.
  struct Window {
    uint64_t pred, pred_word, curr, curr_word;
  };

  Region(std::byte* base, size_t size, const persist::Persister& p) noexcept : base_(base), size_(size), p_(p) {}

  Root& root() const noexcept { return root_of(base_); }

  std::byte* base_;
  size_t size_;
  const persist::Persister& p_;
  std::atomic<uint64_t> alloc_failures_{0};
};

}  // namespace pmlab::lockfree::list_layout
