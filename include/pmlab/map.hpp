// pmlab/map.hpp: a persistent map in a Ptm's heap — pmlab's B+-tree (ordered) or chained hash table,
// their operations part of the heap's transactions.
//
//   auto ptm = pmlab::Ptm::open("/mnt/pmem/kv");
//   auto map = pmlab::Map::open(ptm, 0);                    // the map whose descriptor root 0 holds
//   ptm.run([&](pmlab::Transaction& tx) {
//     map.put(tx, "user0042", &balance);                    // and anything else: one atomic change
//     map.remove(tx, "user0017");
//   });
//
// Keys are byte strings of a fixed size (MapOptions::key_bytes, up to 8), compared as unsigned bytes
// (memcmp order; an integer key in big-endian bytes sorts by value); values are byte strings of a fixed
// size (MapOptions::value_bytes). A map's operations run inside a transaction of the Ptm that holds it:
// they commit with it (durable together with the transaction's other writes), vanish with it when it
// aborts or a crash interrupts it, and see the transaction's own earlier writes. Threads: as the Ptm's
// transactions (the redo PTM runs disjoint ones in parallel); a Map handle is shared by any number of
// threads. The map is recovered with the heap (Ptm::open): no step of its own.
#ifndef PMLAB_MAP_HPP
#define PMLAB_MAP_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include <pmlab/pmlab.h>
#include <pmlab/ptm.hpp>

namespace pmlab {
inline namespace v0 {

// Which structure a map is: chosen at create, recorded in the heap.
enum class MapKind {
  bptree = PMLAB_MAP_BPTREE,       // ordered: scan() visits keys in order; grows as it fills
  hashtable = PMLAB_MAP_HASHTABLE  // no order (scan() is unsupported); buckets fixed at create
};

// Options of Map::create.
struct MapOptions {
  MapKind kind = MapKind::bptree;  // the structure
  unsigned key_bytes = 8;          // every key's size, 1..8
  unsigned value_bytes = 8;        // every value's size, 1..1024
  uint64_t capacity = 1024;  // hashtable: the keys it is sized for (buckets: the power of two above); bptree: unused
};

// A persistent map in a Ptm's heap, reached from one of its root words. A handle: it holds no data of
// its own, must not outlive its Ptm, and serves that Ptm's transactions only (another's throws
// Error(PMLAB_E_INVALID_ARGUMENT)). Every operation throws Error(PMLAB_E_INVALID_ARGUMENT) for a key or
// value of the wrong size, and lets pass what the transaction throws to start over.
class Map {
 public:
  // Makes an empty map in a transaction of its own and links it from root word `root` (which must hold
  // 0: else Error(PMLAB_E_ALREADY_EXISTS)). Throws Error(PMLAB_E_POOL_FULL) when the heap has no room.
  static Map create(Ptm& ptm, unsigned root, const MapOptions& options = {});
  // The map that root word `root` links to (Error(PMLAB_E_NOT_FOUND) when it holds 0,
  // Error(PMLAB_E_CORRUPTED) when it links to no map). Read in a transaction of its own: like create, not
  // called from within a body of `ptm` (transactions do not nest: Ptm::run).
  static Map open(Ptm& ptm, unsigned root);

  // Movable, not copyable; destroying a handle changes nothing in the heap.
  Map(Map&&) noexcept;
  Map& operator=(Map&&) noexcept;
  ~Map();

  // Copies the value of `key` into `value` (value_bytes); false when the map has no such key.
  bool get(Transaction& tx, std::string_view key, void* value) const;
  // Sets the value of `key`, inserting it when absent. Throws Error(PMLAB_E_POOL_FULL) when the heap has
  // no room (the transaction then has no part of this put).
  void put(Transaction& tx, std::string_view key, const void* value);
  // Sets the value of a present key only; false when it is absent (nothing changed).
  bool update(Transaction& tx, std::string_view key, const void* value);
  // Removes `key`; false when it is absent. A B+-tree leaf emptied by removes stays for later inserts.
  bool remove(Transaction& tx, std::string_view key);
  // Visits up to `limit` entries from the first key not below `from` on, in key order:
  // visit(key, value), each valid during its call only. Returns the entries visited. Throws
  // Error(PMLAB_E_UNSUPPORTED) for a hashtable. `visit` must not call into this map.
  template <class Visit>
  uint64_t scan(Transaction& tx, std::string_view from, uint64_t limit, Visit&& visit) const {
    using V = std::remove_reference_t<Visit>;
    return scan_erased(
        tx, from, limit, [](void* v, std::string_view key, const void* value) { (*static_cast<V*>(v))(key, value); },
        const_cast<void*>(static_cast<const void*>(std::addressof(visit))));
  }
  // The number of keys (walks the whole map).
  uint64_t size(Transaction& tx) const;
  // Checks the structure's invariants (keys in order, links inside the heap, …); throws
  // Error(PMLAB_E_CORRUPTED) saying what is broken.
  void check(Transaction& tx) const;

  // What the map was created with.
  const MapOptions& options() const;

 private:
  struct Impl;
  explicit Map(std::unique_ptr<Impl> impl) noexcept;
  const Impl& self() const;
  uint64_t scan_erased(Transaction& tx, std::string_view from, uint64_t limit,
                       void (*visit)(void*, std::string_view, const void*), void* state) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace v0
}  // namespace pmlab

#endif  // PMLAB_MAP_HPP
