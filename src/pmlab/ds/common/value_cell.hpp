// A record's value, updated failure-atomically without allocation: two buffers and a selector word.
// An update writes the buffer not in use, makes it durable, then flips the selector with one 8-byte store:
// a crash leaves either the old or the new value, never a torn one, and nothing is leaked.
//
// Layout (all 8-byte aligned): [selector][buffer 0][buffer 1], each buffer `value_bytes` rounded up to 8.
// Selector 0: no value (empty slot); 1: buffer 0 holds it; 2: buffer 1 does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pmlab/ds/common/access.hpp"

namespace pmlab::ds {

class ValueCell {
 public:
  explicit ValueCell(uint32_t value_bytes) noexcept : value_bytes_(value_bytes), stride_((value_bytes + 7u) & ~7u) {}

  uint32_t value_bytes() const noexcept { return value_bytes_; }
  // A value's bytes rounded up to whole words (a buffer, or a B+-tree slot's value).
  uint32_t stride() const noexcept { return stride_; }
  size_t bytes() const noexcept { return 8 + 2 * static_cast<size_t>(stride_); }

  // Fills buffer 0 of a cell not yet reachable; the caller persists the enclosing block, then links it.
  template <PersistencePolicy A>
  void init(const A& arena, std::byte* cell, const std::byte* value) const noexcept(A::kNothrow) {
    arena.write_bytes(cell + 8, value, value_bytes_);
    arena.store(selector(cell), 1);
  }
  // Publishes a value into a reachable cell (empty or not): write the spare buffer, persist, flip.
  template <PersistencePolicy A>
  void store(const A& arena, std::byte* cell, const std::byte* value) const noexcept(A::kNothrow) {
    uint64_t* const s = selector(cell);
    const uint64_t next = arena.load8(s) == 1 ? 2 : 1;
    std::byte* buffer = cell + 8 + (next - 1) * stride_;
    arena.write_bytes(buffer, value, value_bytes_);
    arena.persist(buffer, value_bytes_);
    arena.store8(s, next);
    arena.persist(s, 8);
  }
  template <PersistencePolicy A>
  bool present(const A& arena, const std::byte* cell) const noexcept(A::kNothrow) {
    return arena.load8(selector(cell)) != 0;
  }
  // Copies the current value to `out`; false when the cell is empty. Callers hold the lock that orders
  // them against store(), or read optimistically and keep the copy only if no store() came by. A selector
  // above 2 (a damaged cell, or an optimistic reader's view of a block put to another use) reads as empty
  // rather than send the copy outside the cell.
  template <PersistencePolicy A>
  bool read(const A& arena, const std::byte* cell, std::byte* out) const noexcept(A::kNothrow) {
    const uint64_t s = arena.load8(selector(cell));
    if (s == 0 || s > 2) return false;
    arena.read_bytes(out, cell + 8 + (s - 1) * stride_, value_bytes_);
    return true;
  }
  // Recovery check: a selector other than 0, 1, 2 is corruption.
  template <PersistencePolicy A>
  bool valid(const A& arena, const std::byte* cell) const noexcept(A::kNothrow) {
    return arena.load8(selector(cell)) <= 2;
  }

 private:
  static uint64_t* selector(const std::byte* cell) noexcept {
    return reinterpret_cast<uint64_t*>(const_cast<std::byte*>(cell));
  }
  uint32_t value_bytes_;
  uint32_t stride_;
};

}  // namespace pmlab::ds
