// FNV-1a, 64 bit (Fowler, Noll, Vo): config hashes, header checksums and YCSB's key scrambling. Not
// cryptographic: it detects accidents, not attacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pmlab/common/status.hpp"

namespace pmlab {

inline constexpr uint64_t kFnvOffsetBasis64 = 0xcbf29ce484222325ULL;
inline constexpr uint64_t kFnvPrime64 = 0x100000001b3ULL;

// One byte into the hash.
constexpr uint64_t fnv1a64_byte(uint64_t hash, uint8_t byte) noexcept { return (hash ^ byte) * kFnvPrime64; }

inline uint64_t fnv1a64(const void* data, size_t len, uint64_t seed = kFnvOffsetBasis64) noexcept {
  auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < len; ++i) h = fnv1a64_byte(h, p[i]);
  return h;
}

// The bytes of `object` from its member `first` up to, not including, its member `end`: an on-media root's
// checksum over the fields that lie between (the superblocks' and the structures' roots).
template <class T, class First, class End>
uint64_t fnv1a64_between(const T& object, First T::*first, End T::*end) noexcept {
  const auto* from = reinterpret_cast<const std::byte*>(&(object.*first));
  const auto* to = reinterpret_cast<const std::byte*>(&(object.*end));
  return fnv1a64(from, static_cast<size_t>(to - from));
}

// A root's stored check against the one its fields give now; `what` names the root in the error. A stored 0
// is a root written before roots had a check (an older pmlab), or never written.
inline Status verify_root_check(uint64_t stored, uint64_t computed, const std::string& what) {
  if (stored == computed) return Status::success();
  return error(Errc::corrupted,
               what + (stored == 0 ? " has no checksum (made by an older pmlab)" : " checksum mismatch"));
}

// The eight bytes of a value, low byte first (its bytes in memory on x86), from the offset basis.
constexpr uint64_t fnv1a64_word(uint64_t value) noexcept {
  uint64_t h = kFnvOffsetBasis64;
  for (int i = 0; i < 8; ++i, value >>= 8) h = fnv1a64_byte(h, static_cast<uint8_t>(value));
  return h;
}

}  // namespace pmlab
