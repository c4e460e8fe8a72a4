// The design itself: a persistent stack of records (push only), written once against pmlab::Persister so
// that the same code runs on a real pool (stack.cpp) and under pmlab's crash simulator (list.cpp).
//
//   region: [head][bump][nodes ...]       a node: [next][seq][value][check]
//   push:   carve a node past `bump` and fill it; write it back, store8 the new bump and persist both with
//           one fence; then store8 the head (the commit) and persist it. Links are offsets, never pointers.
//   recovery: nothing to repair (a node carved but never linked is unreachable); walk() checks the stack.
#ifndef EXAMPLE_STACK_HPP
#define EXAMPLE_STACK_HPP

#include <pmlab/persist.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace stack {

struct Node {
  uint64_t next, seq, value, check;
};
struct Header {
  uint64_t head, bump;
};

constexpr uint64_t kFirstNode = 64;

inline uint64_t value_of(uint64_t seq) { return seq * 0x9E3779B97F4A7C15ull + 7; }
inline uint64_t check_of(const Node& n) { return (n.next ^ n.seq * 31 ^ n.value * 131) + 1; }

// The bytes a stack of `pushes` nodes needs.
inline uint64_t bytes_for(uint64_t pushes) { return kFirstNode + (pushes + 1) * sizeof(Node); }

// Lays out an empty stack at `base`: zero-filled memory, as a new pool's data area is.
inline void format(std::byte* base, const pmlab::Persister& p) {
  auto* h = reinterpret_cast<Header*>(base);
  p.store8(&h->bump, kFirstNode);
  p.persist(h, sizeof *h);
}

inline bool formatted(const std::byte* base) { return reinterpret_cast<const Header*>(base)->bump != 0; }

// Pushes record `seq`, durably once it returns; false when `size` bytes have no room for it. `broken`: the
// twin's bug, the node is never written back before the head names it.
inline bool push(std::byte* base, uint64_t size, const pmlab::Persister& p, uint64_t seq, bool broken = false) {
  auto* h = reinterpret_cast<Header*>(base);
  const uint64_t at = h->bump;
  if (at + sizeof(Node) > size) return false;
  auto* n = reinterpret_cast<Node*>(base + at);
  n->next = h->head;
  n->seq = seq;
  n->value = value_of(seq);
  n->check = check_of(*n);
  // One fence makes the node and the bump durable before the head names the node. (A fence of the node's
  // own here would be redundant: `pmlab crash --mutate` reports it as a surviving mutant.)
  if (!broken) p.flush(n, sizeof *n);
  p.store8(&h->bump, at + sizeof(Node));  // a word the walk reads: stored whole, never torn
  p.persist(&h->bump, 8);
  p.store8(&h->head, at);
  p.persist(&h->head, 8);
  return true;
}

// Walks the stack: its length in *count, or what is wrong with it.
inline std::string walk(const std::byte* base, uint64_t size, uint64_t* count) {
  const auto* h = reinterpret_cast<const Header*>(base);
  uint64_t n_seen = 0, expect_seq = UINT64_MAX;
  for (uint64_t off = h->head; off != 0; ++n_seen) {
    if (off < kFirstNode || off + sizeof(Node) > size || off >= h->bump)
      return "a link points outside the carved nodes (offset " + std::to_string(off) + ")";
    Node n;
    std::memcpy(&n, base + off, sizeof n);
    if (n.check != check_of(n) || n.value != value_of(n.seq)) return "node " + std::to_string(n.seq) + " is torn";
    if (expect_seq != UINT64_MAX && n.seq != expect_seq) return "the stack skips a push";
    expect_seq = n.seq - 1;
    off = n.next;
  }
  *count = n_seen;
  return {};
}

}  // namespace stack

#endif  // EXAMPLE_STACK_HPP
