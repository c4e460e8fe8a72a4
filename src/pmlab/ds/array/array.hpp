// The array: one slot per record number, direct-indexed (no search). The simplest persistent structure:
// a slot is a key word and a value cell; insert and update publish through the cell's selector.
// Locking: striped spinlocks by slot.
#pragma once

#include <cstring>

#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/common/locks.hpp"
#include "pmlab/ds/common/options.hpp"
#include "pmlab/ds/common/value_cell.hpp"

namespace pmlab::ds {

template <ModePolicy M>
class Array {
 public:
  static constexpr uint64_t kMagic = 0x706d6c61622d6172ULL;  // "pmlab-ar"
  static constexpr const char* kName = "array";

  Array(Arena<M>& arena, const Options& o) : arena_(arena), cell_(o.value_bytes), concurrent_(o.concurrent) {
    slot_bytes_ = (8 + cell_.bytes() + 7) & ~size_t{7};
  }

  static uint64_t bytes_needed(const Options& o) {
    return sizeof(ArenaHeader) + o.capacity * ((8 + ValueCell(o.value_bytes).bytes() + 7) & ~size_t{7}) + kBlockAlign;
  }

  Status create(uint64_t capacity) {
    PMLAB_TRY(arena_.format(kMagic));
    const uint64_t slots = arena_.alloc(capacity * slot_bytes_);
    if (slots == 0) return error(Errc::no_space, "array of " + std::to_string(capacity) + " slots does not fit the arena");
    std::memset(arena_.bytes(slots), 0, capacity * slot_bytes_);
    arena_.flush(arena_.bytes(slots), capacity * slot_bytes_);
    arena_.root(0) = slots;
    arena_.root(1) = capacity;
    arena_.persist(&arena_.root(0), 16);
    return Status::success();
  }
  Status recover() {
    PMLAB_TRY(arena_.open(kMagic));
    if (!arena_.contains(arena_.root(0), arena_.root(1) * slot_bytes_))
      return error(Errc::corrupted, "array slots outside the arena");
    return Status::success();
  }

  bool insert(uint64_t key, uint64_t record, const std::byte* value) noexcept {
    if (record >= capacity()) return false;
    MaybeLocked<StripedLocks, uint64_t> guard(locks_, record, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    std::byte* s = slot(record);
    // The key is written before the selector that makes the slot present, in the same durable step.
    if (!cell_.present(s + 8)) {
      *reinterpret_cast<uint64_t*>(s) = key;
      arena_.flush(s, 8);
    }
    cell_.store(arena_, s + 8, value);
    return true;
  }
  bool update(uint64_t key, uint64_t record, const std::byte* value) noexcept {
    if (record >= capacity()) return false;
    MaybeLocked<StripedLocks, uint64_t> guard(locks_, record, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    std::byte* s = slot(record);
    if (!cell_.present(s + 8) || *reinterpret_cast<uint64_t*>(s) != key) return false;
    cell_.store(arena_, s + 8, value);
    return true;
  }
  bool read(uint64_t key, uint64_t record, std::byte* out) noexcept {
    if (record >= capacity()) return false;
    MaybeLocked<StripedLocks, uint64_t> guard(locks_, record, concurrent_);
    const std::byte* s = slot(record);
    const std::byte* v = cell_.value(s + 8);
    if (v == nullptr || *reinterpret_cast<const uint64_t*>(s) != key) return false;
    std::memcpy(out, v, cell_.value_bytes());
    return true;
  }
  // Records record, record+1, … (slot order: the array's natural order), copying each value to `out`.
  uint32_t scan(uint64_t, uint64_t record, uint32_t n, std::byte* out) noexcept {
    uint32_t seen = 0;
    for (uint64_t r = record; r < capacity() && seen < n; ++r) {
      MaybeLocked<StripedLocks, uint64_t> guard(locks_, r, concurrent_);
      if (const std::byte* v = cell_.value(slot(r) + 8)) {
        std::memcpy(out, v, cell_.value_bytes());
        ++seen;
      }
    }
    return seen;
  }

  uint64_t count() const noexcept {
    uint64_t n = 0;
    for (uint64_t r = 0; r < capacity(); ++r) n += cell_.present(slot(r) + 8);
    return n;
  }
  Status check() const {
    for (uint64_t r = 0; r < capacity(); ++r)
      if (!cell_.valid(slot(r) + 8)) return error(Errc::corrupted, "array slot " + std::to_string(r) + " has a bad selector");
    return Status::success();
  }

 private:
  uint64_t capacity() const noexcept { return arena_.root(1); }
  std::byte* slot(uint64_t r) const noexcept { return arena_.bytes(arena_.root(0) + r * slot_bytes_); }

  Arena<M>& arena_;
  ValueCell cell_;
  bool concurrent_;
  size_t slot_bytes_;
  StripedLocks locks_;
};

}  // namespace pmlab::ds
