// The singly linked chain the list and each hashtable bucket are made of: a node's first word is the
// offset of the next node (0 ends the chain), its second word the key.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pmlab/ds/common/arena.hpp"

namespace pmlab::ds {

// The node of `key` in the chain starting at the offset stored in `head`, or nullptr.
template <ModePolicy M>
std::byte* find_in_chain(const Arena<M>& arena, const uint64_t* head, uint64_t key) noexcept {
  for (uint64_t off = Arena<M>::load8(head); off != 0; off = *arena.template at<uint64_t>(off)) {
    std::byte* node = arena.bytes(off);
    if (reinterpret_cast<const uint64_t*>(node)[1] == key) return node;
  }
  return nullptr;
}

}  // namespace pmlab::ds
