// The persistence policy of the ds family, as a concept: the memory a structure is written against. Each
// structure (array, hashtable, list, skiplist, B+-tree) is one class template over it, so the same code
// runs in every ds mode and inside a persistent transaction:
//   Arena<Volatile>, Arena<Durable>, Arena<Transactional>  the ds modes (ds/common/arena.hpp, mode.hpp): a
//        region addressed by offsets; loads and stores are plain, the ordering points flush and fence as
//        the mode says (nothing, the persister, PMDK's transaction hooks);
//   ptm::workloads::TxArena<Tx>  a PTM transaction (ptm/workloads/tx_arena.hpp): every load is tx.read,
//        every store tx.write, blocks come from tx.alloc / tx.free, and the ordering points are nothing —
//        the PTM's commit makes the whole operation failure-atomic.
// A structure therefore never reads or writes a word of its memory but through the policy: a plain
// dereference would bypass a redo PTM's write set, where a word written earlier in the same transaction
// lives until the commit.
//
// What a structure may ask of its policy `a`:
//   words     a.load(w)       a word only this operation's thread changes (plain)
//             a.load8(w)      a word concurrent readers watch change (the commit words: acquire)
//             a.store(w, v)   a word not reachable yet, or one never made durable (plain)
//             a.store8(w, v)  the commit store: atomic for concurrent readers, durable after persist
//   bytes     a.write_bytes(dst, src, n), a.read_bytes(dst, src, n)   a value into / out of the memory
//             a.copy(dst, src, n), a.zero(dst, n)                      within the memory
//             (the memory's side 8-byte aligned; the caller's buffer anywhere)
//   ordering  a.flush(p, n), a.persist(p, n), a.fence()   the persist mode's write-backs and fences
//             a.declare_volatile(p, n)   bytes never made durable, rebuilt by recover() — unless
//                                        A::kDeclaredVolatileSurvives: every store is part of the
//                                        operation's failure-atomic whole, so they survive consistent
//             a.will_overwrite(p, n)     bytes unreachable now that were reachable when the operation began
//             a.operation()              the scope of one failure-atomic operation (take it after the locks)
//   space     a.format(magic), a.open(magic)   lay out / check the memory for the structure `magic` names
//             a.alloc(bytes) -> offset, 0 when full, a multiple of A::kAlign;  a.free(offset, bytes)
//             a.at<T>(offset), a.bytes(offset), a.offset_of(p);  a.root(i) -> the i-th root word
//             a.contains(offset, len)   a block inside the memory (recovery's bounds check)
//             a.used()                  bytes blocks may occupy (a bound for cycle checks)
//             A::kReusesBlocks          whether a freed block may be handed out again (a reader that holds
//                                       no lock may then find a node put to another use)
//   failure   A::kNothrow   false when a load may throw to abandon the operation: a PTM transaction whose
//                           snapshot turned inconsistent ends at that read, before the structure acts on
//                           what it read (its loops need not be proof against a mix of old and new words);
//                           a structure's operations are noexcept(A::kNothrow)
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "pmlab/common/status.hpp"

namespace pmlab::ds {

// Root words a structure may own in its memory.
inline constexpr int kRootWords = 6;

// operation() of a policy whose operations need no scope of their own.
struct NoScope {};

// Memory addressed by offsets from where it is mapped, never by pointers (a persistent structure survives
// being mapped at another address): the policies' at / bytes / offset_of.
class Offsets {
 public:
  explicit Offsets(std::byte* base) noexcept : base_(base) {}

  template <class T>
  T* at(uint64_t off) const noexcept {
    return reinterpret_cast<T*>(base_ + off);
  }
  std::byte* bytes(uint64_t off) const noexcept { return base_ + off; }
  uint64_t offset_of(const void* p) const noexcept {
    return static_cast<uint64_t>(static_cast<const std::byte*>(p) - base_);
  }

 protected:
  std::byte* base_;
};

template <class A>
concept PersistencePolicy = requires(A& a, const A& ca, uint64_t* w, const uint64_t* cw, uint64_t v, void* p,
                                     const void* cp, size_t n, int i) {
  { A::kAlign } -> std::convertible_to<uint64_t>;
  { A::kReusesBlocks } -> std::convertible_to<bool>;
  { A::kDeclaredVolatileSurvives } -> std::convertible_to<bool>;
  { A::kNothrow } -> std::convertible_to<bool>;
  { ca.load(cw) } -> std::same_as<uint64_t>;
  { ca.load8(cw) } -> std::same_as<uint64_t>;
  ca.store(w, v);
  ca.store8(w, v);
  ca.write_bytes(p, cp, n);
  ca.read_bytes(p, cp, n);
  ca.copy(p, cp, n);
  ca.zero(p, n);
  ca.flush(cp, n);
  ca.persist(cp, n);
  ca.fence();
  ca.declare_volatile(cp, n);
  ca.will_overwrite(cp, n);
  ca.operation();
  { a.format(v) } -> std::same_as<Status>;
  { a.open(v) } -> std::same_as<Status>;
  { a.alloc(n) } -> std::same_as<uint64_t>;
  a.free(v, n);
  { ca.template at<uint64_t>(v) } -> std::same_as<uint64_t*>;
  { ca.bytes(v) } -> std::same_as<std::byte*>;
  { ca.offset_of(cp) } -> std::same_as<uint64_t>;
  { ca.root(i) } -> std::same_as<uint64_t*>;
  { ca.contains(v, n) } -> std::same_as<bool>;
  { ca.used() } -> std::same_as<uint64_t>;
};

}  // namespace pmlab::ds
