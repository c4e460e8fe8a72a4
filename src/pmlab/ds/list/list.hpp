// The linked list, the simplest case: unsorted, new nodes pushed at the head. Node: [next][key][cell].
// A new node is made durable, then published by one 8-byte store of the head. Every lookup walks the
// list (O(n)): the structure that shows what a pointer chase per record costs on each medium.
// Locking: one reader-writer lock for the whole list.
#pragma once

#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/common/chain.hpp"
#include "pmlab/ds/common/locks.hpp"
#include "pmlab/ds/common/structure.hpp"

namespace pmlab::ds {

template <PersistencePolicy A>
class List : public StructureBase<Identity{"list", "ll"}> {
 public:
  // How threads share it, as a run's context states it.
  static constexpr const char* kLocking = "one reader-writer lock";
  static constexpr bool kDenseKeysOnly = false;

  List(A& arena, const Options& o) : StructureBase(o), arena_(arena) {}

  static uint64_t bytes_needed(const Options& o) {
    return sizeof(ArenaHeader) + o.capacity * block_bytes(chain_node_bytes(ValueCell(o.value_bytes))) + kBlockAlign;
  }

  Status create(uint64_t) {
    PMLAB_TRY(arena_.format(kMagic));
    arena_.store(arena_.root(0), 0);
    arena_.persist(arena_.root(0), 8);
    return Status::success();
  }
  Status recover() { return arena_.open(kMagic); }

  bool insert(uint64_t key, uint64_t, const std::byte* value) noexcept(A::kNothrow) {
    GlobalLock::Exclusive guard(lock_, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    if (std::byte* node = find(key)) {
      cell_.store(arena_, node + 16, value);
      return true;
    }
    return push_on_chain(arena_, cell_, arena_.root(0), key, value);
  }
  bool update(uint64_t key, uint64_t, const std::byte* value) noexcept(A::kNothrow) {
    GlobalLock::Exclusive guard(lock_, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    std::byte* node = find(key);
    if (node == nullptr) return false;
    cell_.store(arena_, node + 16, value);
    return true;
  }
  bool read(uint64_t key, uint64_t, std::byte* out) noexcept(A::kNothrow) {
    GlobalLock::Shared guard(lock_, concurrent_);
    const std::byte* node = find(key);
    return node != nullptr && cell_.read(arena_, node + 16, out);
  }
  // List order (newest first) from the key's node on.
  uint32_t scan(uint64_t key, uint64_t, uint32_t n, std::byte* out) noexcept(A::kNothrow) {
    GlobalLock::Shared guard(lock_, concurrent_);
    uint32_t seen = 0;
    for (const std::byte* node = find(key); node != nullptr && seen < n; ++seen) {
      cell_.read(arena_, node + 16, out);
      const uint64_t next = arena_.load(reinterpret_cast<const uint64_t*>(node));
      node = next == 0 ? nullptr : arena_.bytes(next);
    }
    return seen;
  }

  uint64_t count() const noexcept(A::kNothrow) {
    uint64_t n = 0;
    for (uint64_t off = arena_.load(arena_.root(0)); off != 0; off = next_in_chain(arena_, off)) ++n;
    return n;
  }
  Status check() const {
    const uint64_t limit = arena_.used() / A::kAlign;
    uint64_t steps = 0;
    for (uint64_t off = arena_.load(arena_.root(0)); off != 0; off = next_in_chain(arena_, off)) {
      if (!arena_.contains(off, chain_node_bytes(cell_)) || off % A::kAlign != 0)
        return error(Errc::corrupted, "list links outside the arena");
      if (++steps > limit) return error(Errc::corrupted, "list has a cycle");
      if (!cell_.valid(arena_, arena_.bytes(off) + 16) || !cell_.present(arena_, arena_.bytes(off) + 16))
        return error(Errc::corrupted, "a linked list node has no value");
    }
    return Status::success();
  }

 private:
  std::byte* find(uint64_t key) const noexcept(A::kNothrow) { return find_in_chain(arena_, arena_.root(0), key); }

  A& arena_;
  GlobalLock lock_;
};

}  // namespace pmlab::ds
