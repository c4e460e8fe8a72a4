// A record's value, updated failure-atomically without allocation: two buffers and a selector word.
// An update writes the buffer not in use, makes it durable, then flips the selector with one 8-byte store:
// a crash leaves either the old or the new value, never a torn one, and nothing is leaked.
//
// Layout (all 8-byte aligned): [selector][buffer 0][buffer 1], each buffer `value_bytes` rounded up to 8.
// The selector's bits 0-1 name the buffer holding the value (0: none, an empty slot; 1: buffer 0; 2:
// buffer 1; 3 is corruption); bits 2-63 count the updates, so the word never takes a value twice and a
// reader that holds no lock can tell whether an update came by while it copied (read_unlocked). Cells
// written before the count existed hold 1 or 2: a count of 0.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/locks.hpp"

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
  // Publishes a value into a reachable cell (empty or not): write the spare buffer, persist, flip (and
  // count the update).
  template <PersistencePolicy A>
  void store(const A& arena, std::byte* cell, const std::byte* value) const noexcept(A::kNothrow) {
    uint64_t* const s = selector(cell);
    const uint64_t word = arena.load8(s);
    const uint64_t next = (word & kBufferBits) == 1 ? 2 : 1;
    arena.write_bytes(buffer(cell, next), value, value_bytes_);
    arena.persist(buffer(cell, next), value_bytes_);
    arena.store8(s, (word & ~kBufferBits) + kOneUpdate + next);
    arena.persist(s, 8);
  }
  template <PersistencePolicy A>
  bool present(const A& arena, const std::byte* cell) const noexcept(A::kNothrow) {
    return (arena.load8(selector(cell)) & kBufferBits) != 0;
  }
  // Copies the current value to `out`; false when the cell is empty. Callers hold the lock that orders
  // them against store(), or read optimistically and keep the copy only if no store() came by. A selector
  // naming buffer "3" (a damaged cell) reads as empty rather than send the copy outside the cell.
  template <PersistencePolicy A>
  bool read(const A& arena, const std::byte* cell, std::byte* out) const noexcept(A::kNothrow) {
    return copy_named(arena, cell, arena.load8(selector(cell)) & kBufferBits, out);
  }
  // read() for a reader that holds no lock while store() may run: the copy is kept only if the selector
  // word is unchanged after it, else taken again. store() writes only the buffer the selector does not
  // name and changes the word every time, so an unchanged word means no store() wrote the buffer that was
  // copied. The cell must stay a cell of this record while readers hold it (its block never reused).
  template <PersistencePolicy A>
  bool read_unlocked(const A& arena, const std::byte* cell, std::byte* out) const noexcept(A::kNothrow) {
    const uint64_t* const s = selector(cell);
    for (;;) {
      const uint64_t word = arena.load8(s);
      {
        const OptimisticReads racy;
        if (!copy_named(arena, cell, word & kBufferBits, out)) return false;
      }
      // The copy's loads must not move below the check: x86 keeps loads in order, this keeps the compiler
      // from moving them (as StripedVersionLocks' validation).
      std::atomic_signal_fence(std::memory_order_acq_rel);
      if (arena.load8(s) == word) return true;
    }
  }
  // Recovery check: a selector naming buffer 3, or an empty cell that counts updates, is corruption.
  template <PersistencePolicy A>
  bool valid(const A& arena, const std::byte* cell) const noexcept(A::kNothrow) {
    const uint64_t word = arena.load8(selector(cell));
    return (word & kBufferBits) != 3 && ((word & kBufferBits) != 0 || word == 0);
  }

 private:
  static constexpr uint64_t kBufferBits = 3, kOneUpdate = 4;
  static uint64_t* selector(const std::byte* cell) noexcept {
    return reinterpret_cast<uint64_t*>(const_cast<std::byte*>(cell));
  }
  // Copies the buffer that selector bits `b` name; false for none (0) or a damaged cell (3). The buffer is
  // chosen by a branch, not by an address computed from `b`: the processor predicts the branch and issues
  // the copy's loads as soon as the cell's address is known, where a computed address would wait for the
  // selector's line first — on a table larger than the cache, a second miss in a row on every read
  // (docs/ds.md, "Reading a value"). The empty asm keeps the compiler from merging the two copies back
  // into one with a selected address.
  template <PersistencePolicy A>
  bool copy_named(const A& arena, const std::byte* cell, uint64_t b, std::byte* out) const noexcept(A::kNothrow) {
    if (b == 1) {
      arena.read_bytes(out, cell + 8, value_bytes_);
      return true;
    }
    if (b == 2) {
      asm volatile("" ::: "memory");
      arena.read_bytes(out, cell + 8 + stride_, value_bytes_);
      return true;
    }
    return false;
  }
  // Buffer `b` (1 or 2, as the selector names it).
  std::byte* buffer(const std::byte* cell, uint64_t b) const noexcept {
    return const_cast<std::byte*>(cell) + 8 + (b - 1) * stride_;
  }
  uint32_t value_bytes_;
  uint32_t stride_;
};

}  // namespace pmlab::ds
