// pmlab/tree.hpp: pmlab's persist B+-tree, an ordered map in a pool file of its own — each operation
// durable and failure-atomic when it returns, through the tree's own write-backs and fences (no
// transaction, no log).
//
//   auto tree = pmlab::Tree::open("/mnt/pmem/index");        // recovers after a crash
//   tree.put("user0042", &record);                          // durable when put returns
//   tree.scan("user", 10, [](std::string_view key, const void* value) { ... });
//
// The structure the ds suite measures as "bptree, persist" and crash-tests as ds.bptree.persist: leaves
// in a persistent list in key order, each change to a leaf one 8-byte commit store (FPTree's and
// NV-Tree's selective persistence, docs/ds.md); the inner nodes are an index that is written back only
// when the tree closes, and rebuilt from the leaves when the open finds it unsound (after a crash).
// Keys and values are byte strings of the sizes chosen at create, as pmlab::Map's (keys up to 8 bytes,
// compared as unsigned bytes). Use pmlab::Map instead when several changes must be atomic together.
//
// Threads: one Tree is shared by any number of threads, which may call anything concurrently (leaf
// locks for writers, optimistic point reads, an exclusive lock for splits), except that no call may
// run while the Tree is moved or destroyed. Space: a removed key's slot takes later inserts of its leaf's
// key range; leaves are never merged or freed. Every open after a crash rebuilds the index in new
// space of the pool, leaving the old index's (about 1/16 of the leaves' size) unused.
#ifndef PMLAB_TREE_HPP
#define PMLAB_TREE_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <pmlab/error.hpp>

namespace pmlab {
inline namespace v0 {

// Options of Tree::create.
struct TreeOptions {
  unsigned key_bytes = 8;    // every key's size, 1..8
  unsigned value_bytes = 8;  // every value's size, 1..1024
};

// What a Tree holds and what its open found.
struct TreeStats {
  uint64_t keys = 0;            // keys present (counted by a walk of the leaves)
  uint64_t bytes_used = 0;      // of the pool's data area: leaves, index and the tree's header
  uint64_t bytes_capacity = 0;  // the pool's data area
  bool index_rebuilt = false;   // the open rebuilt the index (the last close was not clean)
};

// A persistent B+-tree in a pool file, open in this process (one per pool: a second open is refused).
// Every operation throws Error(PMLAB_E_INVALID_ARGUMENT) for a key or value of the wrong size.
class Tree {
 public:
  // Creates PATH (which must not exist) as a pool of `pool_bytes` (1 MiB at least) holding an empty tree; no
  // file is left behind on failure, and a crash during create leaves no PATH or a whole pool (pool.hpp).
  static Tree create(const std::string& path, uint64_t pool_bytes, const TreeOptions& options = {});
  // Opens a tree pool and recovers it: every operation that returned is there, one that had not returned
  // is there whole or not at all. Throws Error(PMLAB_E_BUSY) when the pool is open elsewhere,
  // Error(PMLAB_E_CORRUPTED) when its leaves do not hold a tree.
  static Tree open(const std::string& path);

  // Movable, not copyable. Destroying it closes the pool cleanly: the index is written back with the
  // leaves, so the next open keeps it instead of rebuilding it.
  Tree(Tree&&) noexcept;
  Tree& operator=(Tree&&) noexcept;
  ~Tree();

  // Copies the value of `key` into `value` (value_bytes); false when the tree has no such key.
  bool get(std::string_view key, void* value) const;
  // Sets the value of `key`, inserting it when absent. Throws Error(PMLAB_E_POOL_FULL) when a leaf must
  // split and the pool has no room (the tree is then as before the call).
  void put(std::string_view key, const void* value);
  // Sets the value of a present key only; false when it is absent (nothing changed). Never needs room.
  bool update(std::string_view key, const void* value);
  // Removes `key`; false when it is absent.
  bool remove(std::string_view key);
  // Visits up to `limit` entries from the first key not below `from` on, in key order:
  // visit(key, value), each valid during its call only; returns the entries visited. `from` may be
  // shorter than a key (then padded with zeros) or longer (then the scan starts after its prefix). A scan
  // holds the tree's shared lock (splits wait) and sees each leaf whole; `visit` must not call into
  // the tree.
  template <class Visit>
  uint64_t scan(std::string_view from, uint64_t limit, Visit&& visit) const {
    using V = std::remove_reference_t<Visit>;
    return scan_erased(
        from, limit, [](void* v, std::string_view key, const void* value) { (*static_cast<V*>(v))(key, value); },
        const_cast<void*>(static_cast<const void*>(std::addressof(visit))));
  }
  // Checks the leaves' invariants (inside the pool, keys in order and unique); throws
  // Error(PMLAB_E_CORRUPTED) saying what is broken.
  void check() const;

  // What the tree was created with, its pool file, and what it holds.
  const TreeOptions& options() const;
  const std::string& path() const noexcept;
  TreeStats stats() const;

 private:
  struct Impl;
  explicit Tree(std::unique_ptr<Impl> impl) noexcept;
  Impl& self() const;
  uint64_t scan_erased(std::string_view from, uint64_t limit, void (*visit)(void*, std::string_view, const void*),
                       void* state) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace v0
}  // namespace pmlab

#endif  // PMLAB_TREE_HPP
