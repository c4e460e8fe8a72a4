#include "pmlab/pmdk/obj_pool.hpp"

#include <cstdlib>
#include <filesystem>

#include "pmlab/pmdk/environment.hpp"

#ifdef PMLAB_HAVE_LIBPMEMOBJ
#include <libpmemobj.h>
#endif

namespace pmlab::pmdk {

uint64_t ObjArenaPool::pool_bytes_for(uint64_t arena_bytes) noexcept {
  // PMDK: ~4 MiB of lanes, heap metadata (a few %), the root object's header; undo logs grow in the heap.
  return arena_bytes + arena_bytes / 16 + (24ull << 20);
}

#ifdef PMLAB_HAVE_LIBPMEMOBJ
namespace {

constexpr uint64_t kRootMagic = 0x706d6c61622d7478ULL;  // "pmlab-tx"
constexpr uint64_t kHeaderBytes = 64;

struct RootHeader {
  uint64_t magic;
  uint64_t arena_bytes;
  uint64_t arena_offset;  // from the root object's start, making the arena 64-byte aligned
};

}  // namespace

bool ObjArenaPool::available() noexcept { return true; }

Result<std::unique_ptr<ObjArenaPool>> ObjArenaPool::create(const std::string& path, uint64_t arena_bytes) {
  force_pmem_is_pmem();
  arena_bytes &= ~uint64_t{63};
  PMEMobjpool* pop =
      pmemobj_create(path.c_str(), kLayout, std::max<uint64_t>(pool_bytes_for(arena_bytes), PMEMOBJ_MIN_POOL), 0600);
  if (pop == nullptr) return error(Errc::io_error, "pmemobj_create " + path + ": " + pmemobj_errormsg());
  const uint64_t root_bytes = kHeaderBytes + 64 + arena_bytes;
  PMEMoid root = pmemobj_root(pop, root_bytes);
  if (OID_IS_NULL(root)) {
    std::string why = pmemobj_errormsg();
    pmemobj_close(pop);
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return error(Errc::no_space, "pmemobj_root of " + std::to_string(root_bytes) + " bytes in " + path + ": " + why);
  }
  auto* base = static_cast<std::byte*>(pmemobj_direct(root));
  const auto addr = reinterpret_cast<uintptr_t>(base) + kHeaderBytes;
  const uint64_t offset = ((addr + 63) & ~uintptr_t{63}) - reinterpret_cast<uintptr_t>(base);
  auto* h = reinterpret_cast<RootHeader*>(base);
  h->arena_bytes = arena_bytes;
  h->arena_offset = offset;
  pmemobj_persist(pop, h, sizeof *h);
  h->magic = kRootMagic;  // last: a header with the magic is complete
  pmemobj_persist(pop, &h->magic, 8);
  return std::unique_ptr<ObjArenaPool>(new ObjArenaPool(pop, path, base + offset, arena_bytes));
}

Result<std::unique_ptr<ObjArenaPool>> ObjArenaPool::open(const std::string& path) {
  force_pmem_is_pmem();
  PMEMobjpool* pop = pmemobj_open(path.c_str(), kLayout);
  if (pop == nullptr) return error(Errc::io_error, "pmemobj_open " + path + ": " + pmemobj_errormsg());
  const size_t size = pmemobj_root_size(pop);
  PMEMoid root = size >= kHeaderBytes ? pmemobj_root(pop, size) : OID_NULL;
  if (OID_IS_NULL(root)) {
    pmemobj_close(pop);
    return error(Errc::corrupted, path + " has no arena root object");
  }
  auto* base = static_cast<std::byte*>(pmemobj_direct(root));
  const auto* h = reinterpret_cast<const RootHeader*>(base);
  if (h->magic != kRootMagic || h->arena_offset < kHeaderBytes || h->arena_offset + h->arena_bytes > size) {
    pmemobj_close(pop);
    return error(Errc::corrupted, path + ": the arena header of the root object is damaged");
  }
  return std::unique_ptr<ObjArenaPool>(new ObjArenaPool(pop, path, base + h->arena_offset, h->arena_bytes));
}

ObjArenaPool::~ObjArenaPool() {
  pmemobj_close(static_cast<PMEMobjpool*>(pool_));
  if (remove_) {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
}
#else
bool ObjArenaPool::available() noexcept { return false; }
Result<std::unique_ptr<ObjArenaPool>> ObjArenaPool::create(const std::string&, uint64_t) {
  return error(Errc::unsupported, "pmlab was built without libpmemobj (install libpmemobj-dev and rebuild)");
}
Result<std::unique_ptr<ObjArenaPool>> ObjArenaPool::open(const std::string&) {
  return error(Errc::unsupported, "pmlab was built without libpmemobj (install libpmemobj-dev and rebuild)");
}
ObjArenaPool::~ObjArenaPool() = default;
#endif

}  // namespace pmlab::pmdk
