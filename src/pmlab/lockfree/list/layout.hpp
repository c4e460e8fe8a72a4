// The region every persistent list lays out: a root line, the head sentinel's line, one line per thread
// for TLog's micro-log (unused by the other designs, kept so all share one layout), then the node slab.
// Everything is addressed by offsets from the region base.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/lockfree/alloc/epoch.hpp"
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
  // fnv1a64 of design .. node_bytes, which never change after format: a flipped bit in the capacity would
  // make recovery drop the nodes past it. 0 in a root of an older format.
  uint64_t check;
  uint64_t pad[2];
};
static_assert(sizeof(Root) == 64);

inline uint64_t root_check(const Root& r) noexcept { return fnv1a64_between(r, &Root::design, &Root::check); }

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

// Zeroes the region a list of `design` needs, writes its root and makes both durable. What holds its
// formatted value already (a new pool's zeros) is only read (store_changed).
inline Status format(std::byte* base, size_t size, const persist::Persister& p, uint64_t design, uint32_t capacity,
                     int max_threads) {
  if (max_threads < 1 || max_threads > Slab::kMaxThreads)
    return error(Errc::invalid_argument, "max_threads out of range");
  const uint64_t bytes = bytes_needed(capacity, max_threads);
  if (bytes > size) return error(Errc::no_space, "region too small for the list");
  Root root{kListMagic, design, capacity, static_cast<uint64_t>(max_threads), sizeof(Node), 0, {}};
  root.check = root_check(root);
  const size_t written =
      p.store_changed(base, &root, sizeof root) + p.zero_changed(base + sizeof root, bytes - sizeof root);
  if (written > 0) p.fence();
  return Status::success();
}

// Checks, before recovery trusts it, that the root names a list of `design` (`what` in the error) that fits.
inline Status check_root(const std::byte* base, size_t size, uint64_t design, const char* what) {
  const Root& r = *reinterpret_cast<const Root*>(base);
  if (r.magic != kListMagic || r.design != design) return error(Errc::corrupted, std::string("not a ") + what);
  PMLAB_TRY(verify_root_check(r.check, root_check(r), std::string(what) + " root"));
  if (r.max_threads < 1 || r.max_threads > static_cast<uint64_t>(Slab::kMaxThreads) ||
      bytes_needed(static_cast<uint32_t>(r.capacity), static_cast<int>(r.max_threads)) > size)
    return error(Errc::corrupted, "list root describes a larger region");
  return Status::success();
}

// What every list design keeps of its region, and the steps of Harris's algorithm they all take: where the
// region lies, the persister its stores go through, and how many inserts gave up on a full slab. A design
// (List) adds its slabs, made by its make_slabs(), and, after them, its reclaimer (destroyed first, while
// the slabs it frees into still exist); it names its ListDesign kDesign and offers try_insert, find (the
// search window of a key), link (a node's link word as an atomic) and reclaimer().
template <class List>
class Region {
 public:
  static uint64_t bytes_needed(uint32_t capacity, int max_threads) {
    return list_layout::bytes_needed(capacity, max_threads);
  }
  uint64_t alloc_failures() const noexcept { return alloc_failures_.load(); }

  // Lays out an empty list (every node zeroed) and makes it durable.
  Status format(uint32_t capacity, int max_threads) {
    PMLAB_TRY(list_layout::format(base_, size_, p_, static_cast<uint64_t>(List::kDesign), capacity, max_threads));
    self().make_slabs();
    return Status::success();
  }

  bool insert(int tid, uint64_t key) {
    List& list = self();
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

  // Before recovery trusts the region: its root names this design (`what` in the error) and fits.
  Status check_root(const char* what) const {
    return list_layout::check_root(base_, size_, static_cast<uint64_t>(List::kDesign), what);
  }

  // Harris's retry loop: under the thread's epoch guard, finds the window of `key` and hands it to
  // `attempt`, again after every attempt that returns no answer (another thread changed the window).
  template <class Attempt>
  auto at_window(int tid, uint64_t key, Attempt&& attempt) {
    List& list = self();
    EpochReclaimer::Guard guard(list.reclaimer(), tid);
    for (;;)
      if (auto answer = attempt(list.find(tid, key))) return *answer;
  }

  // A marked node's physical removal: swings the window's predecessor past it, or, when another thread
  // changed that link first, leaves the unlink to find(). True when this thread unlinked it (and so
  // retires it).
  bool unlink(int tid, uint64_t key, const Window& w, uint64_t succ) {
    List& list = self();
    uint64_t expected = w.pred_word;
    if (list.link(w.pred).compare_exchange_strong(expected, ptr(succ), std::memory_order_acq_rel)) return true;
    (void)list.find(tid, key);
    return false;
  }

  // A quiescent list reaches every node its slab (`slab`, for the error) has taken, and no other.
  static Status reaches_every_taken_node(const char* slab, uint64_t taken, uint64_t reached) {
    if (taken == reached) return Status::success();
    return error(Errc::corrupted, std::string(slab) + " has " + std::to_string(taken) + " nodes taken, list reaches " +
                                      std::to_string(reached));
  }

  std::byte* base_;
  size_t size_;
  const persist::Persister& p_;
  std::atomic<uint64_t> alloc_failures_{0};

 private:
  List& self() noexcept { return static_cast<List&>(*this); }
};

}  // namespace pmlab::lockfree::list_layout
