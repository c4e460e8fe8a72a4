// The C API of the lock-free set and ring (pmlab/pmlab.h): handles around pmlab::Set and pmlab::Ring, every
// exception turned into its code and message at this edge.
#include <pmlab/lockfree.hpp>
#include <pmlab/pmlab.h>

#include <cstring>
#include <vector>

#include "pmlab/api/errors.hpp"

struct pmlab_set {
  pmlab::Set set;
};

struct pmlab_ring {
  pmlab::Ring ring;
};

namespace {

constexpr const char* kNullHandle = "null handle";

// A call that answers yes or no: 1 or 0, or the code of what it threw.
template <class F>
int yes_or_no(F&& f) noexcept {
  int answer = 0;
  const int rc = pmlab::api::guarded([&] { answer = f() ? 1 : 0; });
  return rc == PMLAB_OK ? answer : rc;
}

}  // namespace

extern "C" {

int pmlab_set_create(const char* path, const pmlab_set_config* config, pmlab_set** set) {
  pmlab::SetOptions o;
  if (config != nullptr) {
    if (const int design = pmlab::api::c_enum_value(config->design); design != 0)
      o.design = static_cast<pmlab::SetDesign>(design);
    if (config->threads != 0) o.threads = config->threads;
    if (config->capacity != 0) o.capacity = config->capacity;
  }
  return pmlab::api::new_handle(path, set, [&] { return pmlab::Set::create(path, o); });
}

int pmlab_set_open(const char* path, pmlab_set** set) {
  return pmlab::api::new_handle(path, set, [&] { return pmlab::Set::open(path); });
}

void pmlab_set_close(pmlab_set* set) { delete set; }

int pmlab_set_insert(pmlab_set* set, unsigned thread, uint64_t key) {
  if (set == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, kNullHandle);
  return yes_or_no([&] { return set->set.insert(thread, key); });
}

int pmlab_set_remove(pmlab_set* set, unsigned thread, uint64_t key) {
  if (set == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, kNullHandle);
  return yes_or_no([&] { return set->set.remove(thread, key); });
}

int pmlab_set_contains(pmlab_set* set, unsigned thread, uint64_t key) {
  if (set == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, kNullHandle);
  return yes_or_no([&] { return set->set.contains(thread, key); });
}

int pmlab_set_keys(const pmlab_set* set, uint64_t* keys, size_t capacity, size_t* count) {
  if (set == nullptr || count == nullptr || (keys == nullptr && capacity != 0))
    return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle, keys or count");
  std::vector<uint64_t> all;
  if (const int rc = pmlab::api::guarded([&] { all = set->set.keys(); }); rc != PMLAB_OK) return rc;
  *count = all.size();
  if (all.size() > capacity)
    return pmlab::api::fail(PMLAB_E_NO_SPACE, ("the set holds " + std::to_string(all.size()) +
                                               " keys; the array has room for " + std::to_string(capacity))
                                                  .c_str());
  std::copy(all.begin(), all.end(), keys);
  return PMLAB_OK;
}

int pmlab_set_check(const pmlab_set* set) {
  if (set == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, kNullHandle);
  return pmlab::api::guarded([&] { set->set.check(); });
}

int pmlab_set_get_config(const pmlab_set* set, pmlab_set_config* config) {
  if (set == nullptr || config == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or config");
  *config = {static_cast<pmlab_set_design>(set->set.design()), set->set.threads(), set->set.capacity()};
  return PMLAB_OK;
}

int pmlab_ring_create(const char* path, const pmlab_ring_config* config, pmlab_ring** ring) {
  pmlab::RingOptions o;
  if (config != nullptr) {
    if (const int design = pmlab::api::c_enum_value(config->design); design != 0)
      o.design = static_cast<pmlab::RingDesign>(design);
    if (config->threads != 0) o.threads = config->threads;
    if (config->capacity != 0) o.capacity = config->capacity;
    if (config->record_bytes != 0) o.record_bytes = config->record_bytes;
  }
  return pmlab::api::new_handle(path, ring, [&] { return pmlab::Ring::create(path, o); });
}

int pmlab_ring_open(const char* path, pmlab_ring** ring) {
  return pmlab::api::new_handle(path, ring, [&] { return pmlab::Ring::open(path); });
}

void pmlab_ring_close(pmlab_ring* ring) { delete ring; }

int pmlab_ring_push(pmlab_ring* ring, unsigned thread, const void* record) {
  if (ring == nullptr || record == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or record");
  return pmlab::api::guarded([&] { ring->ring.push(thread, record); });
}

int pmlab_ring_pop(pmlab_ring* ring, unsigned thread, void* out) {
  if (ring == nullptr || out == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or out");
  return pmlab::api::guarded([&] { ring->ring.pop(thread, out); });
}

int pmlab_ring_size(const pmlab_ring* ring, uint64_t* size) {
  if (ring == nullptr || size == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or size");
  return pmlab::api::guarded([&] { *size = ring->ring.size(); });
}

int pmlab_ring_get_config(const pmlab_ring* ring, pmlab_ring_config* config) {
  if (ring == nullptr || config == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or config");
  *config = {static_cast<pmlab_ring_design>(ring->ring.design()), ring->ring.threads(), ring->ring.capacity(),
             ring->ring.record_bytes()};
  return PMLAB_OK;
}

}  // extern "C"
