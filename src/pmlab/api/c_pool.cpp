// The C API's pools of one's own layout and page store (pmlab/pmlab.h) over pmlab::Pool and
// pmlab::PageStore: each call's C++ exception becomes its code at the edge.
#include <pmlab/page_store.hpp>
#include <pmlab/pmlab.h>
#include <pmlab/pool.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

#include "pmlab/api/errors.hpp"
#include "pmlab/persist/tracing_runtime.hpp"

struct pmlab_pool {
  pmlab::Pool pool;
};

struct pmlab_page_store {
  pmlab::PageStore store;
};

namespace {

pmlab::PoolOptions pool_options(const pmlab_pool_config* config) {
  pmlab::PoolOptions o;
  if (config == nullptr) return o;
  if (const int domain = pmlab::api::c_enum_value(config->domain); domain != 0)
    o.domain = static_cast<pmlab::Domain>(domain);
  if (const int flush = pmlab::api::c_enum_value(config->flush); flush != 0)
    o.flush = static_cast<pmlab::FlushInstruction>(flush);
  return o;
}

pmlab::PageFlush page_flush(const pmlab_page_flush& flush) {
  const int value = pmlab::api::c_enum_value(flush);
  return value == 0 ? pmlab::PageFlush::hybrid : static_cast<pmlab::PageFlush>(value);
}

constexpr const char* kNullPoolOrAddress = "null pool or address";

// PMLAB_OK when [addr, addr+len) lies in the pool's data area, else the code of a call that does nothing: an
// address elsewhere (DRAM, past the mapping's end) is the caller's bug, which a write-back past the end
// would turn into a fault and one into DRAM into a silent no-op.
int check_range(const pmlab_pool* pool, const void* addr, size_t len) {
  if (pool == nullptr || addr == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, kNullPoolOrAddress);
  const auto begin = reinterpret_cast<uintptr_t>(pool->pool.data());
  const uint64_t size = pool->pool.data_size();
  const auto at = reinterpret_cast<uintptr_t>(addr);
  if (at >= begin && at - begin <= size && len <= size - (at - begin)) return PMLAB_OK;
  const std::string area = "the pool's " + std::to_string(size) + "-byte data area";
  char address[32];
  std::snprintf(address, sizeof address, "%p", addr);
  const std::string what = "the " + std::to_string(len) + " bytes at ";
  return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT,
                          (at < begin ? what + address + " lie before " + area
                                      : what + "offset " + std::to_string(at - begin) + " are outside " + area)
                              .c_str());
}

}  // namespace

extern "C" {

int pmlab_pool_create(const char* path, uint64_t bytes, const char* layout, uint32_t layout_version,
                      const pmlab_pool_config* config, pmlab_pool** pool) {
  if (layout == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null layout");
  return pmlab::api::new_handle(
      path, pool, [&] { return pmlab::Pool::create(path, bytes, layout, layout_version, pool_options(config)); });
}

int pmlab_pool_open(const char* path, const char* layout, const pmlab_pool_config* config, pmlab_pool** pool) {
  if (layout == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null layout");
  return pmlab::api::new_handle(path, pool, [&] { return pmlab::Pool::open(path, layout, pool_options(config)); });
}

void pmlab_pool_close(pmlab_pool* pool) { delete pool; }
void* pmlab_pool_data(const pmlab_pool* pool) { return pool != nullptr ? pool->pool.data() : nullptr; }
uint64_t pmlab_pool_data_size(const pmlab_pool* pool) { return pool != nullptr ? pool->pool.data_size() : 0; }

int pmlab_pool_flush(const pmlab_pool* pool, const void* addr, size_t len) {
  if (const int rc = check_range(pool, addr, len); rc != PMLAB_OK) return rc;
  const pmlab::persist::EntryCallSite site(__builtin_return_address(0));  // the C caller, for crash exec
  pool->pool.persister().flush(addr, len);
  return PMLAB_OK;
}
int pmlab_pool_fence(const pmlab_pool* pool) {
  if (pool == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null pool");
  const pmlab::persist::EntryCallSite site(__builtin_return_address(0));
  pool->pool.persister().fence();
  return PMLAB_OK;
}
int pmlab_pool_persist(const pmlab_pool* pool, const void* addr, size_t len) {
  if (const int rc = check_range(pool, addr, len); rc != PMLAB_OK) return rc;
  const pmlab::persist::EntryCallSite site(__builtin_return_address(0));
  pool->pool.persister().persist(addr, len);
  return PMLAB_OK;
}
int pmlab_pool_store8(const pmlab_pool* pool, uint64_t* word, uint64_t value) {
  if (const int rc = check_range(pool, word, sizeof *word); rc != PMLAB_OK) return rc;
  // Only an aligned word is stored in one piece: a misaligned one may straddle two lines and tear.
  if (reinterpret_cast<uintptr_t>(word) % alignof(uint64_t) != 0)
    return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "store8 needs an 8-byte aligned word");
  pool->pool.persister().store8(word, value);
  return PMLAB_OK;
}

int pmlab_page_store_create(const char* path, const pmlab_page_store_config* config, pmlab_page_flush flush,
                            pmlab_page_store** store) {
  if (config == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null config: a store needs its pages");
  pmlab::PageStoreOptions o;
  if (config->page_size != 0) o.page_size = config->page_size;
  o.pages = config->pages;
  if (config->lanes != 0) o.lanes = config->lanes;
  return pmlab::api::new_handle(path, store, [&] { return pmlab::PageStore::create(path, o, page_flush(flush)); });
}

int pmlab_page_store_open(const char* path, pmlab_page_flush flush, pmlab_page_store** store) {
  return pmlab::api::new_handle(path, store, [&] { return pmlab::PageStore::open(path, page_flush(flush)); });
}

void pmlab_page_store_close(pmlab_page_store* store) { delete store; }

int pmlab_page_store_get_config(const pmlab_page_store* store, pmlab_page_store_config* config) {
  if (store == nullptr || config == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or config");
  *config = {store->store.page_size(), store->store.pages(), store->store.lanes()};
  return PMLAB_OK;
}

int pmlab_page_store_read(const pmlab_page_store* store, uint64_t page, void* out) {
  if (store == nullptr || out == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or buffer");
  return pmlab::api::guarded([&] { store->store.read(page, out); });
}

int pmlab_page_store_write(pmlab_page_store* store, unsigned lane, uint64_t page, const void* data) {
  if (store == nullptr || data == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or data");
  return pmlab::api::guarded([&] { store->store.write(lane, page, data); });
}

int pmlab_page_store_update(pmlab_page_store* store, unsigned lane, uint64_t page, size_t offset, const void* data,
                            size_t size) {
  if (store == nullptr || (data == nullptr && size != 0))
    return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or data");
  return pmlab::api::guarded([&] { store->store.update(lane, page, offset, data, size); });
}

}  // extern "C"
