#include "pmlab/pmdk/maps.hpp"

#include "pmlab/pmdk/obj_pool.hpp"
#include "pmlab/pmdk/environment.hpp"

#include <cstring>
#include <filesystem>

#ifdef PMLAB_HAVE_PMDK_MAPS
#include <libpmemobj.h>

#include "hashmap.h"
#include "map.h"
#include "map_btree.h"
#include "map_ctree.h"
#include "map_hashmap_atomic.h"
#include "map_hashmap_tx.h"
#include "map_rbtree.h"
#include "map_skiplist.h"
#endif

namespace pmlab::pmdk {

const std::vector<std::string>& Map::names() {
  static const std::vector<std::string> n{"pmdk-btree",      "pmdk-ctree",          "pmdk-rbtree",
                                          "pmdk-hashmap-tx", "pmdk-hashmap-atomic", "pmdk-skiplist"};
  return n;
}

bool Map::is_pmdk(const std::string& structure) { return structure.rfind("pmdk-", 0) == 0; }

uint64_t Map::pool_bytes_for(uint64_t records, uint32_t value_bytes) noexcept {
  return 2 * records * (value_bytes + 256) + (64ull << 20);
}

#ifdef PMLAB_HAVE_PMDK_MAPS
namespace {

constexpr const char* kLayout = "pmlab-ds-pmdk-map";
constexpr unsigned kValueType = 3000;  // above every map's own type numbers

struct PeerRoot {
  TOID(struct map) map;
};

const map_ops* ops_of(const std::string& s) {
  if (s == "pmdk-btree") return MAP_BTREE;
  if (s == "pmdk-ctree") return MAP_CTREE;
  if (s == "pmdk-rbtree") return MAP_RBTREE;
  if (s == "pmdk-hashmap-tx") return MAP_HASHMAP_TX;
  if (s == "pmdk-hashmap-atomic") return MAP_HASHMAP_ATOMIC;
  if (s == "pmdk-skiplist") return MAP_SKIPLIST;
  return nullptr;
}

struct CopyArg {
  const std::byte* value;
  uint32_t bytes;
};

// hashmap_atomic's values: constructed (and persisted) by the atomic allocator.
int construct_value(PMEMobjpool* pop, void* ptr, void* arg) {
  const auto* a = static_cast<const CopyArg*>(arg);
  pmemobj_memcpy_persist(pop, ptr, a->value, a->bytes);
  return 0;
}

int count_one(uint64_t, PMEMoid, void* arg) {
  ++*static_cast<uint64_t*>(arg);
  return 0;
}

}  // namespace

struct Map::Impl {
  std::string path;
  const map_ops* ops = nullptr;
  bool atomic = false;
  uint32_t value_bytes = 0;
  PMEMobjpool* pop = nullptr;
  map_ctx* mapc = nullptr;
  TOID(struct map) map;

  ~Impl() {
    if (mapc != nullptr) map_ctx_free(mapc);
    if (pop != nullptr) pmemobj_close(pop);
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  PeerRoot* root() const { return static_cast<PeerRoot*>(pmemobj_direct(pmemobj_root(pop, sizeof(PeerRoot)))); }
};

std::string Map::unavailable_reason() { return {}; }

Map::Map(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Map::~Map() = default;

Result<std::unique_ptr<Map>> Map::create(const std::string& structure, const std::string& path, uint64_t pool_bytes,
                                         uint32_t value_bytes) {
  force_pmem_is_pmem();  // before PMDK's first is-it-PMEM question, which it answers once
  auto impl = std::make_unique<Impl>();
  impl->ops = ops_of(structure);
  if (impl->ops == nullptr) return error(Errc::invalid_argument, "no PMDK map named " + structure);
  impl->atomic = structure == "pmdk-hashmap-atomic";
  impl->value_bytes = value_bytes;
  std::error_code ec;
  std::filesystem::remove(path, ec);  // a stale file of an earlier crashed run with our pid
  impl->path = path;
  impl->pop = pmemobj_create(path.c_str(), kLayout, std::max<uint64_t>(pool_bytes, PMEMOBJ_MIN_POOL), 0600);
  if (impl->pop == nullptr) return error(Errc::io_error, "pmemobj_create " + path + ": " + pmemobj_errormsg());
  impl->mapc = map_ctx_init(impl->ops, impl->pop);
  if (impl->mapc == nullptr) return error(Errc::io_error, "map_ctx_init failed");
  PeerRoot* root = impl->root();
  if (root == nullptr) return error(Errc::no_space, std::string("pmemobj_root: ") + pmemobj_errormsg());
  hashmap_args args{0x5eed};
  if (map_create(impl->mapc, &root->map, &args) != 0)
    return error(Errc::io_error, structure + ": map_create failed: " + pmemobj_errormsg());
  impl->map = root->map;
  if (map_init(impl->mapc, impl->map) != 0) return error(Errc::io_error, structure + ": map_init failed");
  return std::unique_ptr<Map>(new Map(std::move(impl)));
}

bool Map::insert(uint64_t key, uint64_t record, const std::byte* value) noexcept {
  Impl& m = *impl_;
  if (map_lookup(m.mapc, m.map, key)) return update(key, record, value);
  if (m.atomic) {
    CopyArg arg{value, m.value_bytes};
    PMEMoid v;
    if (pmemobj_alloc(m.pop, &v, m.value_bytes, kValueType, construct_value, &arg) != 0) return false;
    return map_insert(m.mapc, m.map, key, v) == 0;
  }
  if (pmemobj_tx_begin(m.pop, nullptr, TX_PARAM_NONE) != 0) {
    pmemobj_tx_end();
    ++aborts_;
    return false;
  }
  const PMEMoid v = pmemobj_tx_alloc(m.value_bytes, kValueType);
  if (!OID_IS_NULL(v)) {
    std::memcpy(pmemobj_direct(v), value, m.value_bytes);  // a transaction's new object is flushed at commit
    map_insert(m.mapc, m.map, key, v);
  }
  if (pmemobj_tx_stage() == TX_STAGE_WORK) pmemobj_tx_commit();
  if (pmemobj_tx_end() != 0) {
    ++aborts_;
    return false;
  }
  return true;
}

bool Map::update(uint64_t key, uint64_t, const std::byte* value) noexcept {
  Impl& m = *impl_;
  const PMEMoid v = map_get(m.mapc, m.map, key);
  if (OID_IS_NULL(v)) return false;
  void* p = pmemobj_direct(v);
  if (pmemobj_tx_begin(m.pop, nullptr, TX_PARAM_NONE) != 0) {
    pmemobj_tx_end();
    ++aborts_;
    return false;
  }
  if (pmemobj_tx_add_range_direct(p, m.value_bytes) == 0) std::memcpy(p, value, m.value_bytes);
  if (pmemobj_tx_stage() == TX_STAGE_WORK) pmemobj_tx_commit();
  if (pmemobj_tx_end() != 0) {
    ++aborts_;
    return false;
  }
  return true;
}

bool Map::read(uint64_t key, uint64_t, std::byte* out) noexcept {
  Impl& m = *impl_;
  const PMEMoid v = map_get(m.mapc, m.map, key);
  if (OID_IS_NULL(v)) return false;
  std::memcpy(out, pmemobj_direct(v), m.value_bytes);
  return true;
}

uint64_t Map::count() const noexcept {
  uint64_t n = 0;
  map_foreach(impl_->mapc, impl_->map, count_one, &n);
  return n;
}

Status Map::check() const {
  if (map_check(impl_->mapc, impl_->map) != 0) return error(Errc::corrupted, "the PMDK map's own check failed");
  return Status::success();
}

Status Map::reopen() {
  Impl& m = *impl_;
  map_ctx_free(m.mapc);
  m.mapc = nullptr;
  pmemobj_close(m.pop);
  m.pop = pmemobj_open(m.path.c_str(), kLayout);
  if (m.pop == nullptr) return error(Errc::io_error, "pmemobj_open " + m.path + ": " + pmemobj_errormsg());
  m.mapc = map_ctx_init(m.ops, m.pop);
  if (m.mapc == nullptr) return error(Errc::io_error, "map_ctx_init failed");
  m.map = m.root()->map;
  if (map_init(m.mapc, m.map) != 0) return error(Errc::io_error, "map_init after reopening failed");
  return Status::success();
}
#else
struct Map::Impl {};
std::string Map::unavailable_reason() {
#ifdef PMLAB_PMDK_MAPS_MISSING
  return std::string("PMDK's example map sources are missing (") + PMLAB_PMDK_MAPS_MISSING +
         "; install libpmemobj-dev and rebuild)";
#else
  return "pmlab was built without libpmemobj (install libpmemobj-dev and rebuild)";
#endif
}
Map::Map(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Map::~Map() = default;
Result<std::unique_ptr<Map>> Map::create(const std::string&, const std::string&, uint64_t, uint32_t) {
  return error(Errc::unsupported, unavailable_reason());
}
bool Map::insert(uint64_t, uint64_t, const std::byte*) noexcept { return false; }
bool Map::update(uint64_t, uint64_t, const std::byte*) noexcept { return false; }
bool Map::read(uint64_t, uint64_t, std::byte*) noexcept { return false; }
uint64_t Map::count() const noexcept { return 0; }
Status Map::check() const { return error(Errc::unsupported, unavailable_reason()); }
Status Map::reopen() { return error(Errc::unsupported, unavailable_reason()); }
#endif

}  // namespace pmlab::pmdk
