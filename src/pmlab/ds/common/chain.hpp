// The singly linked chain the list and each hashtable bucket are made of: a node is [next][key][cell],
// its first word the offset of the next node (0 ends the chain). A chain starts at a head word (the
// list's root, a hashtable bucket).
#pragma once

#include <cstddef>
#include <cstdint>

#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/value_cell.hpp"

namespace pmlab::ds {

// Bytes of a chain node holding `cell`.
inline uint64_t chain_node_bytes(const ValueCell& cell) noexcept { return 16 + cell.bytes(); }

// The node after the one at `off` (0: the chain ends).
template <PersistencePolicy A>
uint64_t next_in_chain(const A& arena, uint64_t off) noexcept(A::kNothrow) {
  return arena.load(arena.template at<uint64_t>(off));
}

// The node of `key` in the chain starting at the offset stored in `head`, or nullptr.
template <PersistencePolicy A>
std::byte* find_in_chain(const A& arena, const uint64_t* head, uint64_t key) noexcept(A::kNothrow) {
  for (uint64_t off = arena.load8(head); off != 0; off = next_in_chain(arena, off)) {
    std::byte* node = arena.bytes(off);
    if (arena.load(reinterpret_cast<const uint64_t*>(node) + 1) == key) return node;
  }
  return nullptr;
}

// find_in_chain for a reader that holds no lock while writers push, unlink and update (a shared
// hashtable's point read). It needs blocks that are never reused (!A::kReusesBlocks, the bump arena). Then
// every link a reader can load is one a writer wrote whole: a node is written before the store that links
// it, and the links are loaded with acquire. And a link always names a node pushed onto the same chain
// before the node holding it: a push links the new node to the older head, an unlink copies a link onward.
// So every walk ends, even one that goes on from a node unlinked meanwhile. A key linked for the whole walk
// is found. Each node the walk reaches was linked at some moment of it, so what the node holds when read
// was the key's value at that moment or at its unlinking, which comes later.
template <PersistencePolicy A>
const std::byte* find_in_chain_shared(const A& arena, const uint64_t* head, uint64_t key) noexcept(A::kNothrow) {
  static_assert(!A::kReusesBlocks, "a walk without a lock needs blocks that are never reused");
  for (uint64_t off = arena.load8(head); off != 0;) {
    const auto* words = arena.template at<uint64_t>(off);
    if (arena.load(words + 1) == key) return arena.bytes(off);  // a key never changes once linked
    off = arena.load8(words);
  }
  return nullptr;
}

// Pushes a new node for `key` at the head: written and made durable first, then published by one 8-byte
// store of the head (the commit). False when the memory is full.
template <PersistencePolicy A>
bool push_on_chain(A& arena, const ValueCell& cell, uint64_t* head, uint64_t key,
                   const std::byte* value) noexcept(A::kNothrow) {
  const uint64_t off = arena.alloc(chain_node_bytes(cell));
  if (off == 0) return false;
  std::byte* node = arena.bytes(off);
  auto* words = reinterpret_cast<uint64_t*>(node);
  arena.store(words, arena.load(head));
  arena.store(words + 1, key);
  cell.init(arena, node + 16, value);
  arena.persist(node, chain_node_bytes(cell));
  arena.store8(head, off);
  arena.persist(head, 8);
  return true;
}

// Takes the node of `key` out of the chain with one 8-byte store of the link that reaches it (the head or
// its predecessor's next word): a crash leaves the node linked or not, and its successors linked either
// way. The node is freed (its block reused only by a policy that reuses blocks). False: no such key.
template <PersistencePolicy A>
bool unlink_from_chain(A& arena, const ValueCell& cell, uint64_t* head, uint64_t key) noexcept(A::kNothrow) {
  uint64_t* link = head;
  for (uint64_t off = arena.load8(link); off != 0; off = arena.load(link)) {
    uint64_t* node = arena.template at<uint64_t>(off);
    if (arena.load(node + 1) == key) {
      arena.store8(link, arena.load(node));
      arena.persist(link, 8);
      arena.free(off, chain_node_bytes(cell));
      return true;
    }
    link = node;
  }
  return false;
}

}  // namespace pmlab::ds
