// The skiplist: sorted by key, towers of forward links. Node: [key][height][next × height][cell].
// Insert writes and persists the whole node (its links already pointing at its successors), then commits
// it with one 8-byte store of the level-0 predecessor link; the upper links are index hints stored and
// written back after the commit (one fence for all), so a crash leaves each level a sorted subsequence of
// level 0. Tower heights come from a hash of the key (reproducible, geometric with p = 1/2).
// Locking: one reader-writer lock for the whole list.
#pragma once

#include <bit>

#include "pmlab/common/hash.hpp"
#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/common/locks.hpp"
#include "pmlab/ds/common/structure.hpp"
#include "pmlab/workload/random.hpp"

namespace pmlab::ds {

template <PersistencePolicy A>
class Skiplist : public StructureBase<Identity{"skiplist", "sl"}> {
 public:
  // How threads share it, as a run's context states it.
  static constexpr const char* kLocking = "one reader-writer lock";
  static constexpr bool kDenseKeysOnly = false;

  static constexpr uint32_t kMaxHeight = 24;

  Skiplist(A& arena, const Options& o) : StructureBase(o), arena_(arena) {}

  static uint64_t bytes_needed(const Options& o) {
    // Expected links per node are 2; round each node up to whole blocks, plus the head tower.
    const uint64_t node = block_bytes(16 + 8 * 4 + ValueCell(o.value_bytes).bytes());
    return sizeof(ArenaHeader) + o.capacity * (node + kBlockAlign) + 8 * kBlockAlign;
  }

  Status create(uint64_t) {
    const auto head = format_with_block(arena_, kMagic, node_bytes(kMaxHeight), "skiplist head");
    if (!head) return head.status();
    arena_.store(links(*head) - 1, kMaxHeight);  // the head's tower is full height
    arena_.flush(links(*head) - 1, 8);
    arena_.store(arena_.root(0), *head);
    arena_.persist(arena_.root(0), 8);
    return Status::success();
  }
  Status recover() {
    PMLAB_TRY(arena_.open(kMagic));
    const uint64_t head = arena_.load(arena_.root(0));
    if (!arena_.contains(head, node_bytes(kMaxHeight)) || height(head) != kMaxHeight)
      return error(Errc::corrupted, "skiplist head is damaged");
    return Status::success();
  }

  bool insert(uint64_t key, uint64_t, const std::byte* value) noexcept(A::kNothrow) {
    GlobalLock::Exclusive guard(lock_, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    uint64_t preds[kMaxHeight];
    if (const uint64_t found = search(key, preds)) {
      cell_.store(arena_, cell(found), value);
      return true;
    }
    const uint32_t h = height_of(key);
    const uint64_t off = arena_.alloc(node_bytes(h));
    if (off == 0) return false;
    arena_.store(arena_.template at<uint64_t>(off), key);
    uint64_t* next = links(off);
    arena_.store(next - 1, h);
    for (uint32_t i = 0; i < h; ++i) arena_.store(next + i, link(preds[i], i));
    cell_.init(arena_, cell(off), value);
    arena_.persist(arena_.bytes(off), node_bytes(h));
    arena_.store8(links(preds[0]), off);
    arena_.persist(links(preds[0]), 8);
    // Upper links are hints, never flushed: level 0 alone says what the list holds, and an upper link
    // that reaches memory by eviction points to a node whose level-0 link was durable before it.
    for (uint32_t i = 1; i < h; ++i) arena_.store8(links(preds[i]) + i, off);
    return true;
  }
  bool update(uint64_t key, uint64_t, const std::byte* value) noexcept(A::kNothrow) {
    GlobalLock::Exclusive guard(lock_, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    const uint64_t found = find(key);
    if (found == 0) return false;
    cell_.store(arena_, cell(found), value);
    return true;
  }
  bool read(uint64_t key, uint64_t, std::byte* out) noexcept(A::kNothrow) {
    GlobalLock::Shared guard(lock_, concurrent_);
    const uint64_t found = find(key);
    return found != 0 && cell_.read(arena_, cell(found), out);
  }
  uint32_t scan(uint64_t key, uint64_t, uint32_t n, std::byte* out) noexcept(A::kNothrow) {
    GlobalLock::Shared guard(lock_, concurrent_);
    uint64_t preds[kMaxHeight];
    search(key, preds);
    uint32_t seen = 0;
    for (uint64_t off = link(preds[0], 0); off != 0 && seen < n; off = link(off, 0), ++seen)
      cell_.read(arena_, cell(off), out);
    return seen;
  }

  uint64_t count() const noexcept(A::kNothrow) {
    uint64_t n = 0;
    for (uint64_t off = link(arena_.load(arena_.root(0)), 0); off != 0; off = link(off, 0)) ++n;
    return n;
  }
  // Level 0 strictly ascending and inside the arena; every upper level a sorted subsequence of level 0
  // reaching only nodes tall enough for it.
  Status check() const {
    const uint64_t head = arena_.load(arena_.root(0));
    const uint64_t limit = arena_.used() / A::kAlign;
    uint64_t steps = 0;
    bool first = true;
    uint64_t last = 0;
    for (uint64_t off = link(head, 0); off != 0; off = link(off, 0)) {
      if (!arena_.contains(off, 24) || off % A::kAlign != 0 || height(off) == 0 || height(off) > kMaxHeight ||
          !arena_.contains(off, node_bytes(height(off))))
        return error(Errc::corrupted, "skiplist level 0 links to a damaged node");
      if (++steps > limit) return error(Errc::corrupted, "skiplist level 0 has a cycle");
      const uint64_t k = key_at(off);
      if (!first && k <= last) return error(Errc::corrupted, "skiplist level 0 is not strictly ascending");
      if (!cell_.present(arena_, cell(off)) || !cell_.valid(arena_, cell(off)))
        return error(Errc::corrupted, "a linked skiplist node has no value");
      first = false;
      last = k;
    }
    for (uint32_t level = 1; level < kMaxHeight; ++level) {
      uint64_t at0 = link(head, 0);
      for (uint64_t off = link(head, level); off != 0; off = link(off, level)) {
        while (at0 != 0 && at0 != off) at0 = link(at0, 0);
        if (at0 == 0)
          return error(Errc::corrupted,
                       "skiplist level " + std::to_string(level) + " is not a sorted subsequence of level 0");
        if (height(off) <= level) return error(Errc::corrupted, "skiplist node linked above its height");
      }
    }
    return Status::success();
  }

 private:
  static uint32_t height_of(uint64_t key) noexcept {
    const uint64_t h = fnv1a64_word(key ^ 0x5ca1ab1eULL);
    return std::min<uint32_t>(1 + static_cast<uint32_t>(std::countr_one(h)), kMaxHeight);
  }
  size_t node_bytes(uint32_t h) const noexcept { return 16 + 8 * static_cast<size_t>(h) + cell_.bytes(); }
  uint64_t key_at(uint64_t off) const noexcept(A::kNothrow) { return arena_.load(arena_.template at<uint64_t>(off)); }
  uint64_t height(uint64_t off) const noexcept(A::kNothrow) {
    return arena_.load(arena_.template at<uint64_t>(off) + 1);
  }
  uint64_t* links(uint64_t off) const noexcept { return arena_.template at<uint64_t>(off) + 2; }
  uint64_t link(uint64_t off, uint32_t level) const noexcept(A::kNothrow) { return arena_.load(links(off) + level); }
  std::byte* cell(uint64_t off) const noexcept(A::kNothrow) { return arena_.bytes(off) + 16 + 8 * height(off); }

  // The node holding `key` (0 if none), filling preds[i] with the last node before key at level i.
  uint64_t search(uint64_t key, uint64_t* preds) const noexcept(A::kNothrow) {
    uint64_t x = arena_.load(arena_.root(0));
    for (int level = kMaxHeight - 1; level >= 0; --level) {
      for (uint64_t next = arena_.load8(links(x) + level); next != 0 && key_at(next) < key;
           next = arena_.load8(links(x) + level))
        x = next;
      preds[level] = x;
    }
    const uint64_t candidate = link(x, 0);
    return candidate != 0 && key_at(candidate) == key ? candidate : 0;
  }
  uint64_t find(uint64_t key) const noexcept(A::kNothrow) {
    uint64_t preds[kMaxHeight];
    return search(key, preds);
  }

  A& arena_;
  GlobalLock lock_;
};

}  // namespace pmlab::ds
