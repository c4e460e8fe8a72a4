// pmlab::Map and the C API's pmlab_map: a ds structure (the B+-tree or the hashtable) in a PTM heap through
// TxArena, so each operation is part of the caller's transaction. A descriptor block, linked from a root
// word, records what the map was made with and links to the structure's own header:
//   [magic "pmlab-mp"][kind][key bytes][value bytes][capacity][structure header]
// Keys are the structure's 64-bit keys as big-endian numbers (api/byte_keys.hpp).
#include <pmlab/map.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pmlab/api/byte_keys.hpp"
#include "pmlab/api/c_api.hpp"
#include "pmlab/api/errors.hpp"
#include "pmlab/common/hash.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/bptree/long_scan.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ptm/common/heap.hpp"
#include "pmlab/ptm/redo/redo_ptm.hpp"
#include "pmlab/ptm/undo/undo_ptm.hpp"
#include "pmlab/ptm/workloads/tx_arena.hpp"

namespace pmlab {
inline namespace v0 {

using api::raise;

namespace {

constexpr uint64_t kMapMagic = 0x706d6c61622d6d70ull;  // "pmlab-mp"
// A map's descriptor in the heap: its options, the structure's header word, and a check over the options,
// which never change after create: a flipped bit in a size would make the map copy another number of bytes
// in and out of the caller's buffers.
enum Descriptor : uint64_t {
  kMagic = 0,
  kKind = 8,
  kKeyBytes = 16,
  kValueBytes = 24,
  kCapacity = 32,
  kHeader = 40,
  kCheck = 48
};
constexpr uint64_t kDescriptorBytes = 56;
constexpr unsigned kMaxValueBytes = 1024;  // a split's copy of half a leaf then fits the default redo log

// The descriptor's kCheck word for these options.
uint64_t options_check(const MapOptions& o) noexcept {
  const uint64_t words[] = {static_cast<uint64_t>(o.kind), o.key_bytes, o.value_bytes, o.capacity};
  return fnv1a64(words, sizeof words);
}

// One structure on one PTM, behind the calls a Map makes; `tx` is that PTM's running transaction.
class Structure {
 public:
  virtual ~Structure() = default;
  virtual Status create(void* tx, uint64_t capacity) = 0;
  virtual Status open(void* tx) = 0;
  virtual bool get(void* tx, uint64_t key, std::byte* value) = 0;
  virtual bool put(void* tx, uint64_t key, const std::byte* value) = 0;  // false: no room
  virtual bool update(void* tx, uint64_t key, const std::byte* value) = 0;
  virtual bool remove(void* tx, uint64_t key) = 0;
  // Entries from `from` on, in key order: each value into `value`, then visit(key); false: unordered.
  virtual bool scan(void* tx, uint64_t from, uint64_t limit, std::byte* value, void (*visit)(void*, uint64_t),
                    void* state, uint64_t* visited) = 0;
  virtual uint64_t size(void* tx) = 0;
  virtual Status check(void* tx) = 0;
};

template <class P, template <class> class S>
class On final : public Structure {
  using Tx = typename P::Tx;
  using Arena = ptm::workloads::TxArena<Tx>;

 public:
  On(std::byte* base, uint64_t header_link, uint64_t limit, const ds::Options& o)
      : arena_(base, typename Arena::Link{header_link}, limit), s_(arena_, o) {}

  Status create(void* tx, uint64_t capacity) override {
    return in(tx, [&] { return s_.create(capacity); });
  }
  Status open(void* tx) override {
    return in(tx, [&] { return s_.recover(); });
  }
  bool get(void* tx, uint64_t key, std::byte* value) override {
    return in(tx, [&] { return s_.read(key, 0, value); });
  }
  bool put(void* tx, uint64_t key, const std::byte* value) override {
    return in(tx, [&] { return s_.insert(key, 0, value); });
  }
  bool update(void* tx, uint64_t key, const std::byte* value) override {
    return in(tx, [&] { return s_.update(key, 0, value); });
  }
  bool remove(void* tx, uint64_t key) override {
    return in(tx, [&] { return s_.remove(key, 0); });
  }
  bool scan(void* tx, uint64_t from, uint64_t limit, std::byte* value, void (*visit)(void*, uint64_t), void* state,
            uint64_t* visited) override {
    if constexpr (std::is_same_v<S<Arena>, ds::BPTree<Arena>>) {
      in(tx, [&] { *visited = ds::scan_long(s_, from, limit, value, [&](uint64_t k) { visit(state, k); }); });
      return true;
    } else {
      return false;
    }
  }
  uint64_t size(void* tx) override {
    return in(tx, [&] { return s_.count(); });
  }
  Status check(void* tx) override {
    return in(tx, [&] { return s_.check(); });
  }

 private:
  template <class F>
  decltype(auto) in(void* tx, F&& f) {
    const typename Arena::Binding bound(arena_, *static_cast<Tx*>(tx));
    return f();
  }
  Arena arena_;
  S<Arena> s_;
};

std::unique_ptr<Structure> structure_for(int ptm_kind, MapKind kind, std::byte* base, uint64_t header_link,
                                         uint64_t limit, const ds::Options& o) {
  const bool redo = ptm_kind == PMLAB_PTM_REDO;
  if (kind == MapKind::bptree) {
    if (redo) return std::make_unique<On<ptm::RedoPtm, ds::BPTree>>(base, header_link, limit, o);
    return std::make_unique<On<ptm::UndoPtm, ds::BPTree>>(base, header_link, limit, o);
  }
  if (redo) return std::make_unique<On<ptm::RedoPtm, ds::Hashtable>>(base, header_link, limit, o);
  return std::make_unique<On<ptm::UndoPtm, ds::Hashtable>>(base, header_link, limit, o);
}

ds::Options structure_options(const MapOptions& m) {
  ds::Options o;
  o.value_bytes = m.value_bytes;
  o.capacity = m.capacity;
  o.concurrent = false;  // the PTM isolates transactions: the structure takes no locks of its own
  return o;
}

void validate(const MapOptions& o) {
  if (o.kind != MapKind::bptree && o.kind != MapKind::hashtable)
    raise(PMLAB_E_INVALID_ARGUMENT, "unknown map kind " + std::to_string(static_cast<int>(o.kind)));
  if (o.key_bytes < 1 || o.key_bytes > api::ByteKeys::kMaxBytes)
    raise(PMLAB_E_INVALID_ARGUMENT, "map keys must be 1..8 bytes, not " + std::to_string(o.key_bytes));
  if (o.value_bytes < 1 || o.value_bytes > kMaxValueBytes)
    raise(PMLAB_E_INVALID_ARGUMENT,
          "map values must be 1.." + std::to_string(kMaxValueBytes) + " bytes, not " + std::to_string(o.value_bytes));
  if (o.kind == MapKind::hashtable && (o.capacity == 0 || o.capacity > (uint64_t{1} << 40)))
    raise(PMLAB_E_INVALID_ARGUMENT, "a hashtable map's capacity must be 1..2^40 keys");
}

}  // namespace

struct Map::Impl {
  MapOptions options;
  const void* heap = nullptr;  // the ptm::Heap the map lives in: its transactions only
  std::unique_ptr<Structure> structure;

  // The transaction's own PTM object, after checking it runs on this map's heap.
  api::ByteKeys keys() const noexcept { return api::ByteKeys(options.key_bytes); }

  void* tx_of(const Transaction& tx) const {
    if (tx.heap_ != heap) raise(PMLAB_E_INVALID_ARGUMENT, "a map used in a transaction of another PTM than its own");
    return tx.tx_;
  }
  // The map whose descriptor is at `descriptor` in the heap `tx` runs on (its words read through tx).
  static std::unique_ptr<Impl> at(const Transaction& tx, uint64_t descriptor) {
    auto impl = std::make_unique<Impl>();
    impl->heap = tx.heap_;
    const uint64_t heap_bytes = tx.heap_bytes_;
    if (descriptor % 8 != 0 || descriptor < ptm::kFirstBlock || descriptor > heap_bytes - kDescriptorBytes ||
        tx.read(descriptor + kMagic) != kMapMagic)
      raise(PMLAB_E_CORRUPTED, "the root word links to no pmlab map");
    MapOptions& o = impl->options;
    o.kind = static_cast<MapKind>(tx.read(descriptor + kKind));
    o.key_bytes = static_cast<unsigned>(tx.read(descriptor + kKeyBytes));
    o.value_bytes = static_cast<unsigned>(tx.read(descriptor + kValueBytes));
    o.capacity = tx.read(descriptor + kCapacity);
    // A descriptor of an older pmlab is 8 bytes shorter: what its kCheck reads is never its check.
    if (Status s = verify_root_check(tx.read(descriptor + kCheck), options_check(o), "map descriptor"); !s) raise(s);
    try {
      validate(o);
    } catch (const Error& e) {
      raise(PMLAB_E_CORRUPTED, std::string("a map descriptor that does not validate: ") + e.what());
    }
    impl->structure = structure_for(tx.kind_, o.kind, static_cast<ptm::Heap*>(tx.heap_)->base(), descriptor + kHeader,
                                    heap_bytes, structure_options(o));
    return impl;
  }
};

Map::Map(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Map::Map(Map&&) noexcept = default;
Map& Map::operator=(Map&&) noexcept = default;
Map::~Map() = default;

const Map::Impl& Map::self() const { return api::impl_of(impl_, "pmlab::Map"); }

Map Map::create(Ptm& ptm, unsigned root, const MapOptions& options) {
  validate(options);
  std::unique_ptr<Impl> made;
  ptm.run([&](Transaction& tx) {
    made.reset();
    const uint64_t link = tx.root(root);
    if (tx.read(link) != 0)
      raise(PMLAB_E_ALREADY_EXISTS, "root word " + std::to_string(root) + " already links to something");
    const uint64_t descriptor = tx.alloc(kDescriptorBytes);
    tx.write(descriptor + kMagic, kMapMagic);
    tx.write(descriptor + kKind, static_cast<uint64_t>(options.kind));
    tx.write(descriptor + kKeyBytes, options.key_bytes);
    tx.write(descriptor + kValueBytes, options.value_bytes);
    tx.write(descriptor + kCapacity, options.capacity);
    tx.write(descriptor + kHeader, 0);
    tx.write(descriptor + kCheck, options_check(options));
    auto impl = Impl::at(tx, descriptor);
    const Status st = impl->structure->create(tx.tx_, options.capacity);
    if (!st.ok()) raise(st.code() == Errc::no_space ? Status(Errc::pool_full, st.message()) : st);
    tx.write(link, descriptor);
    made = std::move(impl);
  });
  return Map(std::move(made));
}

Map Map::open(Ptm& ptm, unsigned root) {
  std::unique_ptr<Impl> opened;
  ptm.run([&](Transaction& tx) {
    opened.reset();
    const uint64_t descriptor = tx.read(tx.root(root));
    if (descriptor == 0) raise(PMLAB_E_NOT_FOUND, "root word " + std::to_string(root) + " links to no map");
    auto impl = Impl::at(tx, descriptor);
    const Status st = impl->structure->open(tx.tx_);
    if (!st.ok()) raise(st);
    opened = std::move(impl);
  });
  return Map(std::move(opened));
}

bool Map::get(Transaction& tx, std::string_view key, void* value) const {
  const Impl& m = self();
  return m.structure->get(m.tx_of(tx), m.keys().number(key), static_cast<std::byte*>(value));
}

void Map::put(Transaction& tx, std::string_view key, const void* value) {
  const Impl& m = self();
  if (!m.structure->put(m.tx_of(tx), m.keys().number(key), static_cast<const std::byte*>(value)))
    raise(PMLAB_E_POOL_FULL, "the heap has no room for another map entry");
}

bool Map::update(Transaction& tx, std::string_view key, const void* value) {
  const Impl& m = self();
  return m.structure->update(m.tx_of(tx), m.keys().number(key), static_cast<const std::byte*>(value));
}

bool Map::remove(Transaction& tx, std::string_view key) {
  const Impl& m = self();
  return m.structure->remove(m.tx_of(tx), m.keys().number(key));
}

uint64_t Map::scan_erased(Transaction& tx, std::string_view from, uint64_t limit,
                          void (*visit)(void*, std::string_view, const void*), void* state) const {
  const Impl& m = self();
  void* t = m.tx_of(tx);
  if (m.options.kind != MapKind::bptree) raise(PMLAB_E_UNSUPPORTED, "a hashtable map has no key order to scan");
  uint64_t start = 0;
  if (limit == 0 || !m.keys().lower_bound(from, &start)) return 0;
  std::vector<std::byte> value(m.options.value_bytes);
  struct Visitor {
    const Impl& m;
    const std::byte* value;
    void (*visit)(void*, std::string_view, const void*);
    void* state;
  } v{m, value.data(), visit, state};
  uint64_t visited = 0;
  m.structure->scan(
      t, start, limit, value.data(),
      [](void* s, uint64_t key) {
        auto& vs = *static_cast<Visitor*>(s);
        const std::string bytes = vs.m.keys().bytes_of(key);
        vs.visit(vs.state, bytes, vs.value);
      },
      &v, &visited);
  return visited;
}

uint64_t Map::size(Transaction& tx) const {
  const Impl& m = self();
  return m.structure->size(m.tx_of(tx));
}

void Map::check(Transaction& tx) const {
  const Impl& m = self();
  const Status st = m.structure->check(m.tx_of(tx));
  if (!st.ok()) raise(PMLAB_E_CORRUPTED, st.message());
}

const MapOptions& Map::options() const { return self().options; }

}  // namespace v0
}  // namespace pmlab

// ------------------------------------------------------------------------------------------------ C API

struct pmlab_map {
  pmlab::Map map;
};

namespace {

using pmlab::api::fail;
using pmlab::api::key_view;
using pmlab::api::tx_call;

// A call on a map inside a transaction: f(transaction) returns false for "no such key", which becomes
// PMLAB_E_NOT_FOUND (no message: a missing key is an answer, not a failure).
template <class F>
int map_call(pmlab_tx* tx, const pmlab_map* map, F&& f) noexcept {
  if (map == nullptr) return fail(PMLAB_E_INVALID_ARGUMENT, "null map");
  bool absent = false;
  const int rc = tx_call(tx, [&](pmlab::Transaction& t) { absent = !f(t); });
  return rc == PMLAB_OK && absent ? PMLAB_E_NOT_FOUND : rc;
}

// A call that names a key (and a value buffer, `value`, when it takes one).
template <class F>
int keyed_call(pmlab_tx* tx, const pmlab_map* map, const void* key, const void* value, bool takes_value,
               F&& f) noexcept {
  if (tx != nullptr && map != nullptr && (key == nullptr || (takes_value && value == nullptr)))
    return fail(PMLAB_E_INVALID_ARGUMENT, key == nullptr ? "null key" : "null value");
  return map_call(tx, map, std::forward<F>(f));  // a null transaction or map is named there
}

}  // namespace

extern "C" {

int pmlab_map_create(pmlab_ptm* ptm, unsigned root, const pmlab_map_config* config, pmlab_map** map) {
  if (ptm == nullptr || map == nullptr) return fail(PMLAB_E_INVALID_ARGUMENT, "null handle");
  *map = nullptr;
  pmlab::MapOptions o;
  if (config != nullptr) {
    if (const int kind = pmlab::api::c_enum_value(config->kind); kind != 0) o.kind = static_cast<pmlab::MapKind>(kind);
    if (config->key_bytes != 0) o.key_bytes = config->key_bytes;
    if (config->value_bytes != 0) o.value_bytes = config->value_bytes;
    if (config->capacity != 0) o.capacity = config->capacity;
  }
  return pmlab::api::guarded([&] { *map = new pmlab_map{pmlab::Map::create(ptm->ptm, root, o)}; });
}

int pmlab_map_open(pmlab_ptm* ptm, unsigned root, pmlab_map** map) {
  if (ptm == nullptr || map == nullptr) return fail(PMLAB_E_INVALID_ARGUMENT, "null handle");
  *map = nullptr;
  return pmlab::api::guarded([&] { *map = new pmlab_map{pmlab::Map::open(ptm->ptm, root)}; });
}

int pmlab_map_get(pmlab_tx* tx, const pmlab_map* map, const void* key, size_t key_size, void* value) {
  return keyed_call(tx, map, key, value, true,
                    [&](pmlab::Transaction& t) { return map->map.get(t, key_view(key, key_size), value); });
}

int pmlab_map_put(pmlab_tx* tx, pmlab_map* map, const void* key, size_t key_size, const void* value) {
  return keyed_call(tx, map, key, value, true, [&](pmlab::Transaction& t) {
    map->map.put(t, key_view(key, key_size), value);
    return true;
  });
}

int pmlab_map_update(pmlab_tx* tx, pmlab_map* map, const void* key, size_t key_size, const void* value) {
  return keyed_call(tx, map, key, value, true,
                    [&](pmlab::Transaction& t) { return map->map.update(t, key_view(key, key_size), value); });
}

int pmlab_map_remove(pmlab_tx* tx, pmlab_map* map, const void* key, size_t key_size) {
  return keyed_call(tx, map, key, nullptr, false,
                    [&](pmlab::Transaction& t) { return map->map.remove(t, key_view(key, key_size)); });
}

int pmlab_map_scan(pmlab_tx* tx, const pmlab_map* map, const void* from, size_t from_size, uint64_t limit,
                   pmlab_map_visit_fn visit, void* arg, uint64_t* visited) {
  if (visit == nullptr || (from == nullptr && from_size != 0))
    return fail(PMLAB_E_INVALID_ARGUMENT, "null visitor or start key");
  if (visited != nullptr) *visited = 0;
  int stopped = PMLAB_OK;
  const int rc = map_call(tx, map, [&](pmlab::Transaction& t) {
    try {
      const uint64_t n = map->map.scan(t, key_view(from, from_size), limit, [&](std::string_view k, const void* v) {
        const int r = visit(k.data(), v, arg);
        if (r != 0) throw pmlab::api::VisitorStopped{r};
      });
      if (visited != nullptr) *visited = n;
    } catch (const pmlab::api::VisitorStopped& s) { stopped = s.rc; }
    return true;
  });
  return rc != PMLAB_OK ? rc : stopped;
}

int pmlab_map_size(pmlab_tx* tx, const pmlab_map* map, uint64_t* size) {
  if (size == nullptr) return fail(PMLAB_E_INVALID_ARGUMENT, "null size");
  *size = 0;
  return map_call(tx, map, [&](pmlab::Transaction& t) {
    *size = map->map.size(t);
    return true;
  });
}

int pmlab_map_check(pmlab_tx* tx, const pmlab_map* map) {
  return map_call(tx, map, [&](pmlab::Transaction& t) {
    map->map.check(t);
    return true;
  });
}

void pmlab_map_close(pmlab_map* map) { delete map; }

}  // extern "C"
