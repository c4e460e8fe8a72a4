// The linked list, the simplest case: unsorted, new nodes pushed at the head. Node: [next][key][cell].
// A new node is made durable, then published by one 8-byte store of the head. Every lookup walks the
// list (O(n)): the structure that shows what a pointer chase per record costs on each medium.
// Locking: one reader-writer lock for the whole list.
#pragma once

#include <cstring>

#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/common/chain.hpp"
#include "pmlab/ds/common/locks.hpp"
#include "pmlab/ds/common/options.hpp"
#include "pmlab/ds/common/value_cell.hpp"

namespace pmlab::ds {

template <ModePolicy M>
class List {
 public:
  static constexpr uint64_t kMagic = 0x706d6c61622d6c6cULL;  // "pmlab-ll"
  static constexpr const char* kName = "list";

  List(Arena<M>& arena, const Options& o) : arena_(arena), cell_(o.value_bytes), concurrent_(o.concurrent) {}

  static uint64_t bytes_needed(const Options& o) {
    const uint64_t node = (16 + ValueCell(o.value_bytes).bytes() + kBlockAlign - 1) & ~(kBlockAlign - 1);
    return sizeof(ArenaHeader) + o.capacity * node + kBlockAlign;
  }

  Status create(uint64_t) {
    PMLAB_TRY(arena_.format(kMagic));
    arena_.root(0) = 0;
    arena_.persist(&arena_.root(0), 8);
    return Status::success();
  }
  Status recover() {
    PMLAB_TRY(arena_.open(kMagic));
    return Status::success();
  }

  bool insert(uint64_t key, uint64_t, const std::byte* value) noexcept {
    GlobalLock::Exclusive guard(lock_, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    if (std::byte* node = find(key)) {
      cell_.store(arena_, node + 16, value);
      return true;
    }
    const uint64_t off = arena_.alloc(16 + cell_.bytes());
    if (off == 0) return false;
    std::byte* node = arena_.bytes(off);
    reinterpret_cast<uint64_t*>(node)[0] = arena_.root(0);
    reinterpret_cast<uint64_t*>(node)[1] = key;
    cell_.init(arena_, node + 16, value);
    arena_.persist(node, 16 + cell_.bytes());
    arena_.store8(&arena_.root(0), off);
    arena_.persist(&arena_.root(0), 8);
    return true;
  }
  bool update(uint64_t key, uint64_t, const std::byte* value) noexcept {
    GlobalLock::Exclusive guard(lock_, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    std::byte* node = find(key);
    if (node == nullptr) return false;
    cell_.store(arena_, node + 16, value);
    return true;
  }
  bool read(uint64_t key, uint64_t, std::byte* out) noexcept {
    GlobalLock::Shared guard(lock_, concurrent_);
    const std::byte* node = find(key);
    if (node == nullptr) return false;
    std::memcpy(out, cell_.value(node + 16), cell_.value_bytes());
    return true;
  }
  // List order (newest first) from the key's node on.
  uint32_t scan(uint64_t key, uint64_t, uint32_t n, std::byte* out) noexcept {
    GlobalLock::Shared guard(lock_, concurrent_);
    uint32_t seen = 0;
    for (const std::byte* node = find(key); node != nullptr && seen < n; ++seen) {
      std::memcpy(out, cell_.value(node + 16), cell_.value_bytes());
      const uint64_t next = *reinterpret_cast<const uint64_t*>(node);
      node = next == 0 ? nullptr : arena_.bytes(next);
    }
    return seen;
  }

  uint64_t count() const noexcept {
    uint64_t n = 0;
    for (uint64_t off = arena_.root(0); off != 0; off = *arena_.template at<uint64_t>(off)) ++n;
    return n;
  }
  Status check() const {
    const uint64_t limit = arena_.used() / kBlockAlign;
    uint64_t steps = 0;
    for (uint64_t off = arena_.root(0); off != 0; off = *arena_.template at<uint64_t>(off)) {
      if (!arena_.contains(off, 16 + cell_.bytes()) || off % kBlockAlign != 0)
        return error(Errc::corrupted, "list links outside the arena");
      if (++steps > limit) return error(Errc::corrupted, "list has a cycle");
      if (!cell_.valid(arena_.bytes(off) + 16) || !cell_.present(arena_.bytes(off) + 16))
        return error(Errc::corrupted, "a linked list node has no value");
    }
    return Status::success();
  }

 private:
  std::byte* find(uint64_t key) const noexcept { return find_in_chain(arena_, &arena_.root(0), key); }

  Arena<M>& arena_;
  ValueCell cell_;
  bool concurrent_;
  GlobalLock lock_;
};

}  // namespace pmlab::ds
