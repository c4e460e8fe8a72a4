// pmlab::Tree and the C API's pmlab_tree: the ds B+-tree in its persist mode (ds::Arena<Durable>) in a pool of layout
// "tree". The data area holds a descriptor line, then the tree's arena:
//   [magic "pmlab-tr"][key bytes][value bytes][leaf slots] ... [arena: header, leaves and inner nodes]
// The descriptor is written and persisted before its magic, the magic last: a create that a crash cut
// short leaves a pool that no open takes for a tree.
#include <pmlab/tree.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/api/byte_keys.hpp"
#include "pmlab/api/errors.hpp"
#include "pmlab/common/hash.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ds/bptree/long_scan.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab {
inline namespace v0 {

using api::raise;

namespace {

constexpr const char* kTreeLayout = "tree";
constexpr uint64_t kTreeMagic = 0x706d6c61622d7472ull;  // "pmlab-tr"
constexpr unsigned kMaxValueBytes = 1024;
constexpr uint32_t kLeafSlots = 32;

struct alignas(64) Descriptor {
  uint64_t magic;
  uint64_t key_bytes;
  uint64_t value_bytes;
  uint64_t leaf_slots;
  // fnv1a64 of key_bytes .. leaf_slots: a flipped bit in a size would make the tree copy another number of
  // bytes in and out of the caller's buffers. 0 in a descriptor of an older format.
  uint64_t check;
};

uint64_t descriptor_check(const Descriptor& d) noexcept {
  return fnv1a64_between(d, &Descriptor::key_bytes, &Descriptor::check);
}
constexpr uint64_t kArenaOffset = sizeof(Descriptor);

using Arena = ds::Arena<ds::Durable>;
using BPTree = ds::BPTree<Arena>;

void validate(const TreeOptions& o) {
  if (o.key_bytes < 1 || o.key_bytes > api::ByteKeys::kMaxBytes)
    raise(PMLAB_E_INVALID_ARGUMENT, "tree keys must be 1..8 bytes, not " + std::to_string(o.key_bytes));
  if (o.value_bytes < 1 || o.value_bytes > kMaxValueBytes)
    raise(PMLAB_E_INVALID_ARGUMENT,
          "tree values must be 1.." + std::to_string(kMaxValueBytes) + " bytes, not " + std::to_string(o.value_bytes));
}

ds::Options structure_options(const TreeOptions& t) {
  ds::Options o;
  o.value_bytes = t.value_bytes;
  o.leaf_slots = kLeafSlots;
  o.concurrent = true;  // a Tree is shared by any number of threads
  return o;
}

Descriptor& descriptor_of(const pool::Pool& p) { return *reinterpret_cast<Descriptor*>(p.data()); }

// The options a pool's descriptor records, or the reason it holds no tree.
Result<TreeOptions> options_of(const pool::Pool& p) {
  if (p.data_size() < kArenaOffset + 2 * ds::kBlockAlign) return error(Errc::corrupted, "no room for a tree");
  const Descriptor& d = descriptor_of(p);
  if (d.magic != kTreeMagic) return error(Errc::corrupted, p.path() + " holds no tree (its creation did not finish?)");
  PMLAB_TRY(verify_root_check(d.check, descriptor_check(d), "tree descriptor"));
  TreeOptions o;
  o.key_bytes = static_cast<unsigned>(d.key_bytes);
  o.value_bytes = static_cast<unsigned>(d.value_bytes);
  if (d.key_bytes != o.key_bytes || d.value_bytes != o.value_bytes || d.leaf_slots != kLeafSlots)
    return error(Errc::corrupted, "a tree descriptor that does not validate");
  try {
    validate(o);
  } catch (const Error& e) { return error(Errc::corrupted, std::string("a tree descriptor: ") + e.what()); }
  return o;
}

// The pool's tree, open: its arena and structure over the pool's data area.
struct Opened {
  Opened(const pool::Pool& p, const TreeOptions& o)
      : arena(p.data() + kArenaOffset, p.data_size() - kArenaOffset, p.persister()),
        tree(arena, structure_options(o)) {}
  Arena arena;
  BPTree tree;
};

// `pmlab pool check` reads without changing: the descriptor and the leaves (the index is checked, and
// rebuilt when unsound, by the open's recovery).
[[maybe_unused]] const bool tree_layout_registered =
    pool::LayoutRegistry::instance().add({kTreeLayout, 1, "persistent B+-tree (pmlab::Tree)",
                                          [](pool::Pool& p) -> Status {
                                            const Result<TreeOptions> o = options_of(p);
                                            if (!o) return o.status();
                                            Opened opened(p, *o);
                                            return opened.tree.reopen();
                                          },
                                          [](const pool::Pool& p) -> Status {
                                            const Result<TreeOptions> o = options_of(p);
                                            if (!o) return o.status();
                                            const Opened opened(p, *o);
                                            PMLAB_TRY(opened.arena.open(BPTree::kMagic));
                                            return opened.tree.check();
                                          }});

// Out of line, so that the operations' own frames stay small.
[[noreturn, gnu::cold, gnu::noinline]] void no_room_to_split(const std::string& path) {
  raise(PMLAB_E_POOL_FULL, "the pool has no room to split a leaf of the tree (" + path + ")");
}

}  // namespace

struct Tree::Impl {
  std::unique_ptr<pool::Pool> pool;
  TreeOptions options;
  std::optional<Opened> opened;
  bool index_rebuilt = false;

  // A clean close: the whole arena written back, so that the next open finds the index and the leaves'
  // fingerprints (never persisted by the operations) as they are now, and keeps them.
  ~Impl() {
    if (opened) pool->persister().persist(pool->data() + kArenaOffset, opened->arena.used());
  }

  BPTree& tree() { return opened->tree; }
  api::ByteKeys keys() const noexcept { return api::ByteKeys(options.key_bytes); }
};

Tree::Impl& Tree::self() const { return api::impl_of(impl_, "pmlab::Tree"); }

Tree Tree::create(const std::string& path, uint64_t pool_bytes, const TreeOptions& options) {
  validate(options);
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  // The tree and its descriptor are written before the pool takes its name (pool::Pool::create).
  auto made = pool::Pool::create(path, pool_bytes, kTreeLayout, 1, {}, [&](pool::Pool& pool) -> Status {
    if (pool.data_size() < kArenaOffset + 4 * ds::kBlockAlign)
      return error(Errc::pool_full, "a pool of " + std::to_string(pool_bytes) + " bytes has no room for a tree");
    impl->opened.emplace(pool, options);
    if (Status st = impl->tree().create(0); !st) {
      impl->opened.reset();
      return st.code() == Errc::no_space ? Status(Errc::pool_full, st.message()) : st;
    }
    const persist::Persister& p = pool.persister();
    Descriptor& d = descriptor_of(pool);
    d.key_bytes = options.key_bytes;
    d.value_bytes = options.value_bytes;
    d.leaf_slots = kLeafSlots;
    d.check = descriptor_check(d);
    p.persist(&d, sizeof d);
    p.store8(&d.magic, kTreeMagic);
    p.persist(&d.magic, 8);
    return Status::success();
  });
  if (!made) {
    impl->opened.reset();  // it named the pool that create removed
    raise(made.status());
  }
  impl->pool = std::move(*made);
  return Tree(std::move(impl));
}

Tree Tree::open(const std::string& path) {
  pool::OpenOptions o;
  o.layout = kTreeLayout;
  auto opened = pool::Pool::open(path, o);
  if (!opened) raise(opened.status());
  auto impl = std::make_unique<Impl>();
  impl->pool = std::move(*opened);
  auto options = options_of(*impl->pool);
  if (!options) raise(options.status());
  impl->options = *options;
  auto& tree = impl->opened.emplace(*impl->pool, *options);
  const uint64_t used = tree.arena.open(BPTree::kMagic).ok() ? tree.arena.used() : 0;
  if (Status st = tree.tree.reopen(); !st) {
    impl->opened.reset();  // nothing to write back
    raise(st.code() == Errc::no_space ? st : Status(Errc::corrupted, st.message()));
  }
  impl->index_rebuilt = tree.arena.used() != used;
  return Tree(std::move(impl));
}

Tree::Tree(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Tree::Tree(Tree&&) noexcept = default;
Tree& Tree::operator=(Tree&&) noexcept = default;
Tree::~Tree() = default;

bool Tree::get(std::string_view key, void* value) const {
  Impl& t = self();
  return t.tree().read(t.keys().number(key), 0, static_cast<std::byte*>(value));
}

void Tree::put(std::string_view key, const void* value) {
  Impl& t = self();
  if (!t.tree().insert(t.keys().number(key), 0, static_cast<const std::byte*>(value))) [[unlikely]]
    no_room_to_split(path());
}

bool Tree::update(std::string_view key, const void* value) {
  Impl& t = self();
  const uint64_t k = t.keys().number(key);
  if (t.tree().update(k, 0, static_cast<const std::byte*>(value))) return true;
  // An update writes a free slot of the key's leaf: a full leaf splits first, which may find no room.
  std::vector<std::byte> scratch(t.options.value_bytes);
  if (t.tree().read(k, 0, scratch.data())) no_room_to_split(path());
  return false;
}

bool Tree::remove(std::string_view key) {
  Impl& t = self();
  return t.tree().remove(t.keys().number(key), 0);
}

uint64_t Tree::scan_erased(std::string_view from, uint64_t limit, void (*visit)(void*, std::string_view, const void*),
                           void* state) const {
  Impl& t = self();
  uint64_t next = 0;
  if (limit == 0 || !t.keys().lower_bound(from, &next)) return 0;
  std::vector<std::byte> value(t.options.value_bytes);
  return ds::scan_long(t.tree(), next, limit, value.data(),
                       [&](uint64_t k) { visit(state, t.keys().bytes_of(k), value.data()); });
}

void Tree::check() const {
  if (Status st = self().tree().check(); !st) raise(PMLAB_E_CORRUPTED, st.message());
}

const TreeOptions& Tree::options() const { return self().options; }

const std::string& Tree::path() const noexcept {
  static const std::string none;
  return impl_ ? impl_->pool->path() : none;
}

TreeStats Tree::stats() const {
  Impl& t = self();
  TreeStats s;
  s.keys = t.tree().count();
  s.bytes_used = kArenaOffset + t.opened->arena.used();
  s.bytes_capacity = t.pool->data_size();
  s.index_rebuilt = t.index_rebuilt;
  return s;
}

}  // namespace v0
}  // namespace pmlab

// ------------------------------------------------------------------------------------------------ C API

struct pmlab_tree {
  pmlab::Tree tree;
};

namespace {

using pmlab::api::fail;
using pmlab::api::guarded;
using pmlab::api::key_view;

// A call that names a key (and a value buffer, when `takes_value`): f() returns false for "no such key",
// which becomes PMLAB_E_NOT_FOUND with no message (an answer, not a failure).
template <class F>
int keyed_call(const pmlab_tree* tree, const void* key, const void* value, bool takes_value, F&& f) noexcept {
  if (tree == nullptr) return fail(PMLAB_E_INVALID_ARGUMENT, "null tree");
  if (key == nullptr || (takes_value && value == nullptr))
    return fail(PMLAB_E_INVALID_ARGUMENT, key == nullptr ? "null key" : "null value");
  bool absent = false;
  const int rc = guarded([&] { absent = !f(); });
  return rc == PMLAB_OK && absent ? PMLAB_E_NOT_FOUND : rc;
}

}  // namespace

extern "C" {

int pmlab_tree_create(const char* path, uint64_t pool_bytes, const pmlab_tree_config* config, pmlab_tree** tree) {
  pmlab::TreeOptions o;
  if (config != nullptr) {
    if (config->key_bytes != 0) o.key_bytes = config->key_bytes;
    if (config->value_bytes != 0) o.value_bytes = config->value_bytes;
  }
  return pmlab::api::new_handle(path, tree, [&] { return pmlab::Tree::create(path, pool_bytes, o); });
}

int pmlab_tree_open(const char* path, pmlab_tree** tree) {
  return pmlab::api::new_handle(path, tree, [&] { return pmlab::Tree::open(path); });
}

void pmlab_tree_close(pmlab_tree* tree) { delete tree; }

int pmlab_tree_get(const pmlab_tree* tree, const void* key, size_t key_size, void* value) {
  return keyed_call(tree, key, value, true, [&] { return tree->tree.get(key_view(key, key_size), value); });
}

int pmlab_tree_put(pmlab_tree* tree, const void* key, size_t key_size, const void* value) {
  return keyed_call(tree, key, value, true, [&] {
    tree->tree.put(key_view(key, key_size), value);
    return true;
  });
}

int pmlab_tree_update(pmlab_tree* tree, const void* key, size_t key_size, const void* value) {
  return keyed_call(tree, key, value, true, [&] { return tree->tree.update(key_view(key, key_size), value); });
}

int pmlab_tree_remove(pmlab_tree* tree, const void* key, size_t key_size) {
  return keyed_call(tree, key, nullptr, false, [&] { return tree->tree.remove(key_view(key, key_size)); });
}

int pmlab_tree_scan(const pmlab_tree* tree, const void* from, size_t from_size, uint64_t limit,
                    pmlab_map_visit_fn visit, void* arg, uint64_t* visited) {
  if (tree == nullptr || visit == nullptr || (from == nullptr && from_size != 0))
    return fail(PMLAB_E_INVALID_ARGUMENT, "null tree, visitor or start key");
  if (visited != nullptr) *visited = 0;
  int stopped = PMLAB_OK;
  const int rc = guarded([&] {
    try {
      const uint64_t n = tree->tree.scan(key_view(from, from_size), limit, [&](std::string_view k, const void* v) {
        const int r = visit(k.data(), v, arg);
        if (r != 0) throw pmlab::api::VisitorStopped{r};
      });
      if (visited != nullptr) *visited = n;
    } catch (const pmlab::api::VisitorStopped& s) { stopped = s.rc; }
  });
  return rc != PMLAB_OK ? rc : stopped;
}

int pmlab_tree_check(const pmlab_tree* tree) {
  if (tree == nullptr) return fail(PMLAB_E_INVALID_ARGUMENT, "null tree");
  return guarded([&] { tree->tree.check(); });
}

int pmlab_tree_get_stats(const pmlab_tree* tree, pmlab_tree_stats* stats) {
  if (tree == nullptr || stats == nullptr) return fail(PMLAB_E_INVALID_ARGUMENT, "null tree or stats");
  return guarded([&] {
    const pmlab::TreeStats s = tree->tree.stats();
    *stats = {s.keys, s.bytes_used, s.bytes_capacity, s.index_rebuilt ? 1 : 0};
  });
}

}  // extern "C"
