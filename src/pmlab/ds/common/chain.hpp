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

// What a walk of a chain that writers may be changing found (find_in_chain_racing).
enum class RacingFind { found, absent, torn };

// find_in_chain for a reader that holds no lock (an optimistic read: see StripedVersionLocks): writers may
// relink the chain under it, and a policy that reuses blocks may hand an unlinked node to another chain or
// to another use. Each word is loaded once, atomically; a link off the block grid or past the arena's
// used bytes, or a walk longer than the blocks those bytes hold, is reported torn instead of followed, so
// the walk stays inside the memory and ends whatever it reads. The caller keeps the answer only if its
// validation says no writer came by.
//
// The used bytes are read once: they only grow, and a node past them can only have been linked since by a
// writer of this chain, which the caller's validation sees. An aligned link below the first block is still
// memory of the arena (its header), read and thrown away like any other torn view. Few checks per step:
// this walk is a concurrent reader's whole lookup, and every instruction it adds is felt (docs/ds.md,
// Threads).
template <PersistencePolicy A>
RacingFind find_in_chain_racing(const A& arena, const ValueCell& cell, const uint64_t* head, uint64_t key,
                                const std::byte** node) noexcept(A::kNothrow) {
  const uint64_t used = arena.used();
  const uint64_t node_bytes = chain_node_bytes(cell);
  const uint64_t last = used >= node_bytes ? used - node_bytes : 0;  // the last offset a whole node fits at
  const uint64_t max_steps = used / A::kAlign;
  uint64_t off = arena.load8(head);
  for (uint64_t steps = 0; off != 0; ++steps) {
    if (off > last || off % A::kAlign != 0 || steps == max_steps) return RacingFind::torn;
    const auto* words = arena.template at<uint64_t>(off);
    if (arena.load8(words + 1) == key) {
      *node = arena.bytes(off);
      return RacingFind::found;
    }
    off = arena.load8(words);
  }
  return RacingFind::absent;
}

// Pushes a new node for `key` at the head: written and made durable first, then published by one 8-byte
// store of the head (the commit). False when the memory is full.
template <PersistencePolicy A>
bool push_on_chain(A& arena, const ValueCell& cell, uint64_t* head, uint64_t key, const std::byte* value) noexcept(A::kNothrow) {
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
