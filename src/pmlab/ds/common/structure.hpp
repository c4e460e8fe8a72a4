// What the bench and the crash tests ask of every structure, as a concept (no virtual call per operation:
// runtime -> template dispatch happens once, in the bench's factory), and the base every structure is
// built on.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"
#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/options.hpp"
#include "pmlab/ds/common/value_cell.hpp"

namespace pmlab::ds {

template <class S>
concept Structure = requires(S s, const S cs, uint64_t key, uint64_t record, const std::byte* in, std::byte* out,
                             uint32_t n, const Options& o) {
  { S::kName } -> std::convertible_to<std::string_view>;
  { S::bytes_needed(o) } -> std::convertible_to<uint64_t>;
  { s.create(record) } -> std::same_as<Status>;               // empty structure for `record` records
  { s.recover() } -> std::same_as<Status>;                    // reopen after a crash (rebuild volatile parts)
  { s.insert(key, record, in) } -> std::same_as<bool>;        // upsert; false: out of space
  { s.update(key, record, in) } -> std::same_as<bool>;        // false: no such key
  { s.read(key, record, out) } -> std::same_as<bool>;         // false: no such key
  { s.scan(key, record, n, out) } -> std::same_as<uint32_t>;  // records visited from `key` on
  { cs.count() } -> std::same_as<uint64_t>;
  { cs.check() } -> std::same_as<Status>;  // structural invariants
};

// A structure that also deletes (the hashtable): as failure-atomic as its inserts.
template <class S>
concept Removable = Structure<S> && requires(S s, uint64_t key, uint64_t record) {
  { s.remove(key, record) } -> std::same_as<bool>;  // false: no such key
};

// Who a structure is: its name (the bench's and the crash tests' label) and the two letters that end the
// magic its memory's header carries ("pmlab-" and the tag, as one big-endian word).
struct Identity {
  char name[16];
  char tag[3];
};

constexpr uint64_t magic_of(const Identity& id) noexcept {
  uint64_t m = 0;
  for (const char c : {'p', 'm', 'l', 'a', 'b', '-', id.tag[0], id.tag[1]}) m = m << 8 | static_cast<uint8_t>(c);
  return m;
}
static_assert(magic_of(Identity{"hashtable", "ht"}) == 0x706d6c61622d6874ULL);  // "pmlab-ht"

// What every structure keeps beside its memory (its persistence policy, which the structure holds itself):
// its identity, the value layout (a ValueCell: the record's bytes and their word stride, and the double
// buffer of the structures that update through one) and whether threads share it (then it takes its
// locks). It does not depend on the policy, so a structure's code names these members directly.
template <Identity I>
class StructureBase {
 public:
  static constexpr const char* kName = I.name;
  static constexpr uint64_t kMagic = magic_of(I);

  // Switches between the shared paths (locks) and the one-thread paths, between operations only: no thread
  // may be inside one, and the threads of the next must see the switch (a barrier between). A side-by-side
  // run measures one structure at one thread and at several this way (ds.vs_one_thread).
  Status set_concurrent(bool shared) {
    concurrent_ = shared;
    return Status::success();
  }

 protected:
  explicit StructureBase(const Options& o) noexcept : cell_(o.value_bytes), concurrent_(o.concurrent) {}

  ValueCell cell_;
  bool concurrent_;
};

// How a create() starts: the memory formatted for the structure `magic`, and the structure's first block
// (`what` in the error when it does not fit) zeroed and written back; the caller links it from its roots
// and persists them.
template <PersistencePolicy A>
Result<uint64_t> format_with_block(A& arena, uint64_t magic, uint64_t bytes, const std::string& what) {
  PMLAB_TRY(arena.format(magic));
  const uint64_t off = arena.alloc(bytes);
  if (off == 0) return error(Errc::no_space, what + " does not fit the arena");
  arena.zero(arena.bytes(off), bytes);
  arena.flush(arena.bytes(off), bytes);
  return off;
}

// create() of a structure that is one table (the array's slots, the hashtable's buckets): the table of
// `count` entries of `entry_bytes` as the first block, its offset in root 0 and `count` in root 1, durable.
template <PersistencePolicy A>
Status format_table(A& arena, uint64_t magic, uint64_t count, uint64_t entry_bytes, const std::string& what) {
  const auto table = format_with_block(arena, magic, count * entry_bytes, what);
  if (!table) return table.status();
  arena.store(arena.root(0), *table);
  arena.store(arena.root(1), count);
  arena.persist(arena.root(0), 16);
  return Status::success();
}

}  // namespace pmlab::ds
