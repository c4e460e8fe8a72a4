// A record's value, updated failure-atomically without allocation: two buffers and a selector word.
// An update writes the buffer not in use, makes it durable, then flips the selector with one 8-byte store:
// a crash leaves either the old or the new value, never a torn one, and nothing is leaked.
//
// Layout (all 8-byte aligned): [selector][buffer 0][buffer 1], each buffer `value_bytes` rounded up to 8.
// Selector 0: no value (empty slot); 1: buffer 0 holds it; 2: buffer 1 does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pmlab/ds/common/arena.hpp"

namespace pmlab::ds {

class ValueCell {
 public:
  explicit ValueCell(uint32_t value_bytes) noexcept : value_bytes_(value_bytes), stride_((value_bytes + 7u) & ~7u) {}

  uint32_t value_bytes() const noexcept { return value_bytes_; }
  size_t bytes() const noexcept { return 8 + 2 * static_cast<size_t>(stride_); }

  // Fills buffer 0 of a cell not yet reachable; the caller persists the enclosing block, then links it.
  template <ModePolicy M>
  void init(const Arena<M>&, std::byte* cell, const std::byte* value) const noexcept {
    std::memcpy(cell + 8, value, value_bytes_);
    *reinterpret_cast<uint64_t*>(cell) = 1;
  }
  // Publishes a value into a reachable cell (empty or not): write the spare buffer, persist, flip.
  template <ModePolicy M>
  void store(const Arena<M>& arena, std::byte* cell, const std::byte* value) const noexcept {
    auto* selector = reinterpret_cast<uint64_t*>(cell);
    const uint64_t current = Arena<M>::load8(selector);
    const uint64_t next = current == 1 ? 2 : 1;
    std::byte* buffer = cell + 8 + (next - 1) * stride_;
    std::memcpy(buffer, value, value_bytes_);
    arena.persist(buffer, value_bytes_);
    arena.store8(selector, next);
    arena.persist(selector, 8);
  }
  bool present(const std::byte* cell) const noexcept { return selector(cell) != 0; }
  // The current value (null when empty). Callers hold the lock that orders them against store().
  const std::byte* value(const std::byte* cell) const noexcept {
    const uint64_t s = selector(cell);
    return s == 0 ? nullptr : cell + 8 + (s - 1) * stride_;
  }
  // Recovery check: a selector other than 0, 1, 2 is corruption.
  bool valid(const std::byte* cell) const noexcept { return selector(cell) <= 2; }

 private:
  static uint64_t selector(const std::byte* cell) noexcept {
    return persist::Persister::load8(reinterpret_cast<const uint64_t*>(cell));
  }
  uint32_t value_bytes_;
  uint32_t stride_;
};

}  // namespace pmlab::ds
