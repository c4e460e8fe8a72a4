#include "pmlab/pmdk/obj_ptm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#ifdef PMLAB_HAVE_LIBPMEMOBJ
#include <libpmemobj.h>
#endif

namespace pmlab::pmdk {

#ifdef PMLAB_HAVE_LIBPMEMOBJ

namespace {
constexpr const char* kLayout = "pmlab-ptm";
PMEMobjpool* pool_of(void* p) { return static_cast<PMEMobjpool*>(p); }

// A failed PMDK call inside a transaction leaves nothing to roll back to from here: stop loudly.
[[noreturn]] void fatal(const std::string& what) {
  std::fprintf(stderr, "pmlab: pmdk: fatal: %s\n", what.c_str());
  std::abort();
}
}  // namespace

bool ObjPtm::available() noexcept { return true; }

Result<std::unique_ptr<ObjPtm>> ObjPtm::create(const std::string& path, uint64_t bytes) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  const uint64_t size = std::max<uint64_t>(bytes, PMEMOBJ_MIN_POOL);
  PMEMobjpool* pop = pmemobj_create(path.c_str(), kLayout, size, 0600);
  if (pop == nullptr) return error(Errc::io_error, "pmemobj_create " + path + ": " + pmemobj_errormsg());
  std::unique_ptr<ObjPtm> p(new ObjPtm());
  p->pop_ = pop;
  p->path_ = path;
  p->base_ = reinterpret_cast<std::byte*>(pop);
  PMEMoid root = pmemobj_root(pop, sizeof(uint64_t) * kRootWords);
  if (OID_IS_NULL(root)) return error(Errc::no_space, std::string("pmemobj_root: ") + pmemobj_errormsg());
  p->roots_ = static_cast<uint64_t*>(pmemobj_direct(root));
  p->uuid_lo_ = root.pool_uuid_lo;
  int enable = 1;
  pmemobj_ctl_set(pop, "stats.enabled", &enable);
  return p;
}

ObjPtm::~ObjPtm() {
  if (pop_ != nullptr) pmemobj_close(pool_of(pop_));
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove(path_, ec);
}

void ObjPtm::begin() {
  if (pmemobj_tx_begin(pool_of(pop_), nullptr, TX_PARAM_NONE) != 0)
    fatal(std::string("pmemobj_tx_begin: ") + pmemobj_errormsg());
}

void ObjPtm::commit() {
  pmemobj_tx_commit();
  if (pmemobj_tx_end() != 0) fatal(std::string("pmemobj transaction failed: ") + pmemobj_errormsg());
}

void ObjPtm::Tx::write(uint64_t* word, uint64_t value) {
  const uint64_t off = static_cast<uint64_t>(reinterpret_cast<std::byte*>(word) - ptm_.base_);
  const bool fresh =
      std::any_of(fresh_.begin(), fresh_.end(), [&](const auto& r) { return off >= r.first && off < r.second; });
  if (!fresh) {
    if (pmemobj_tx_add_range_direct(word, sizeof *word) != 0)
      fatal(std::string("pmemobj_tx_add_range_direct: ") + pmemobj_errormsg());
    ++ptm_.ranges_;
  }
  *word = value;
}

uint64_t ObjPtm::Tx::alloc(uint64_t bytes) {
  PMEMoid oid = pmemobj_tx_xalloc(bytes, 0, POBJ_XALLOC_NO_ABORT);
  if (OID_IS_NULL(oid)) return 0;
  fresh_.emplace_back(oid.off, oid.off + bytes);
  return oid.off;
}

void ObjPtm::Tx::free(uint64_t off) {
  if (pmemobj_tx_free(PMEMoid{ptm_.uuid_lo_, off}) != 0) fatal(std::string("pmemobj_tx_free: ") + pmemobj_errormsg());
}

int64_t ObjPtm::allocated_bytes() const {
  uint64_t v = 0;
  if (pmemobj_ctl_get(pool_of(pop_), "stats.heap.curr_allocated", &v) != 0) return -1;
  return static_cast<int64_t>(v);
}

#else

bool ObjPtm::available() noexcept { return false; }
Result<std::unique_ptr<ObjPtm>> ObjPtm::create(const std::string&, uint64_t) {
  return error(Errc::unsupported, "pmlab was built without libpmemobj (install libpmemobj-dev and rebuild)");
}
ObjPtm::~ObjPtm() = default;
void ObjPtm::begin() {}
void ObjPtm::commit() {}
void ObjPtm::Tx::write(uint64_t* word, uint64_t value) { *word = value; }
uint64_t ObjPtm::Tx::alloc(uint64_t) { return 0; }
void ObjPtm::Tx::free(uint64_t) {}
int64_t ObjPtm::allocated_bytes() const { return -1; }

#endif

}  // namespace pmlab::pmdk
