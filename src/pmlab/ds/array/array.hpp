// The array: one slot per record number, direct-indexed (no search). The simplest persistent structure:
// a slot is a key word and a value cell; insert and update publish through the cell's selector.
// Locking (threads > 1): a striped version lock by slot, which writers and scans hold; a point read
// validates it instead ([OLC]).
#pragma once

#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/common/locks.hpp"
#include "pmlab/ds/common/structure.hpp"

namespace pmlab::ds {

template <PersistencePolicy A>
class Array : public StructureBase<Identity{"array", "ar"}> {
 public:
  // How threads share it, as a run's context states it.
  static constexpr const char* kLocking =
      "striped version locks (per slot): writers take them, point reads validate them";
  // Keys are slot numbers below the capacity (an index for dense integer keys), not any 8-byte key.
  static constexpr bool kDenseKeysOnly = true;

  Array(A& arena, const Options& o) : StructureBase(o), arena_(arena), slot_bytes_(slot_bytes_for(cell_)) {}

  static uint64_t bytes_needed(const Options& o) {
    return sizeof(ArenaHeader) + o.capacity * slot_bytes_for(ValueCell(o.value_bytes)) + kBlockAlign;
  }

  Status create(uint64_t capacity) {
    return format_table(arena_, kMagic, capacity, slot_bytes_, "array of " + std::to_string(capacity) + " slots");
  }
  Status recover() {
    PMLAB_TRY(arena_.open(kMagic));
    if (!arena_.contains(arena_.load(arena_.root(0)), capacity() * slot_bytes_))
      return error(Errc::corrupted, "array slots outside the arena");
    return Status::success();
  }

  bool insert(uint64_t key, uint64_t record, const std::byte* value) noexcept(A::kNothrow) {
    if (record >= capacity()) return false;
    MaybeLocked<StripedVersionLocks, uint64_t> guard(locks_, record, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    std::byte* s = slot(record);
    // The key is written before the selector that makes the slot present, in the same durable step.
    if (!cell_.present(arena_, s + 8)) {
      arena_.store(key_word(s), key);
      arena_.flush(s, 8);
    }
    cell_.store(arena_, s + 8, value);
    return true;
  }
  bool update(uint64_t key, uint64_t record, const std::byte* value) noexcept(A::kNothrow) {
    if (record >= capacity()) return false;
    MaybeLocked<StripedVersionLocks, uint64_t> guard(locks_, record, concurrent_);
    [[maybe_unused]] const auto op = arena_.operation();
    std::byte* s = slot(record);
    if (!cell_.present(arena_, s + 8) || arena_.load(key_word(s)) != key) return false;
    cell_.store(arena_, s + 8, value);
    return true;
  }
  bool read(uint64_t key, uint64_t record, std::byte* out) noexcept(A::kNothrow) {
    if (record >= capacity()) return false;
    const std::byte* s = slot(record);
    auto read_slot = [&] { return arena_.load8(key_word(s)) == key && cell_.read(arena_, s + 8, out); };
    // Optimistic (StripedVersionLocks): a slot never moves, and its cell's selector names one of its own
    // buffers, so a read that raced a writer stays in the slot, and is done again.
    return concurrent_ ? locks_.read_validated(record, read_slot) : read_slot();
  }
  // Records record, record+1, … (slot order: the array's natural order), copying each value to `out`.
  uint32_t scan(uint64_t, uint64_t record, uint32_t n, std::byte* out) noexcept(A::kNothrow) {
    uint32_t seen = 0;
    for (uint64_t r = record; r < capacity() && seen < n; ++r) {
      MaybeLocked<StripedVersionLocks, uint64_t> guard(locks_, r, concurrent_);
      if (cell_.read(arena_, slot(r) + 8, out)) ++seen;
    }
    return seen;
  }

  uint64_t count() const noexcept(A::kNothrow) {
    uint64_t n = 0;
    for (uint64_t r = 0; r < capacity(); ++r) n += cell_.present(arena_, slot(r) + 8);
    return n;
  }
  Status check() const {
    for (uint64_t r = 0; r < capacity(); ++r)
      if (!cell_.valid(arena_, slot(r) + 8))
        return error(Errc::corrupted, "array slot " + std::to_string(r) + " has a bad selector");
    return Status::success();
  }

 private:
  // A slot: the key word, then the cell.
  static size_t slot_bytes_for(const ValueCell& cell) noexcept { return (8 + cell.bytes() + 7) & ~size_t{7}; }
  static uint64_t* key_word(const std::byte* s) noexcept {
    return reinterpret_cast<uint64_t*>(const_cast<std::byte*>(s));
  }
  uint64_t capacity() const noexcept(A::kNothrow) { return arena_.load(arena_.root(1)); }
  std::byte* slot(uint64_t r) const noexcept(A::kNothrow) {
    return arena_.bytes(arena_.load(arena_.root(0)) + r * slot_bytes_);
  }

  A& arena_;
  size_t slot_bytes_;
  StripedVersionLocks locks_;
};

}  // namespace pmlab::ds
