#include "pmlab/ptm/store/ptm_store.hpp"

#include <cstring>
#include <string>

#include "pmlab/common/hash.hpp"
#include "pmlab/pool/structure_layout.hpp"

namespace pmlab::ptm {

const char* to_string(StoreKind k) noexcept { return k == StoreKind::undo ? "undo" : "redo"; }

Result<StoreKind> parse_store_kind(std::string_view text) {
  if (text == "redo") return StoreKind::redo;
  if (text == "undo") return StoreKind::undo;
  return error(Errc::invalid_argument, "unknown PTM '" + std::string(text) + "' (one of: redo, undo)");
}

namespace {

constexpr uint64_t kLine = 64;

uint64_t superblock_checksum(const StoreSuperblock& sb) noexcept {
  return fnv1a64(&sb, offsetof(StoreSuperblock, checksum));
}

Status check_options(const StoreOptions& o) {
  if (o.kind != StoreKind::redo && o.kind != StoreKind::undo)
    return error(Errc::invalid_argument, "unknown PTM kind " + std::to_string(static_cast<int>(o.kind)));
  if (o.slots < 1 || o.slots > kMaxStoreSlots)
    return error(Errc::invalid_argument,
                 "PTM threads must be 1.." + std::to_string(kMaxStoreSlots) + ", not " + std::to_string(o.slots));
  if (o.slot_bytes < kMinSlotBytes || o.slot_bytes % kLine != 0 || o.slot_bytes > (uint64_t{1} << 30))
    return error(Errc::invalid_argument, "PTM log bytes per thread must be a multiple of 64 from " +
                                             std::to_string(kMinSlotBytes) + " to 1 GiB, not " +
                                             std::to_string(o.slot_bytes));
  return Status::success();
}

Regions regions_of(std::span<std::byte> region, const persist::Persister& p, const StoreSuperblock& sb) {
  Regions r;
  r.log = region.data() + sb.log_offset;
  r.log_bytes = sb.slots * sb.slot_bytes;
  r.heap = region.data() + sb.heap_offset;
  r.heap_bytes = sb.heap_bytes;
  r.log_persister = &p;
  r.data_persister = &p;
  return r;
}

}  // namespace

uint64_t PtmStore::region_bytes(const StoreOptions& options, uint64_t heap_bytes) noexcept {
  return sizeof(StoreSuperblock) + static_cast<uint64_t>(options.slots) * options.slot_bytes + heap_bytes;
}

PtmStore::PtmStore(std::span<std::byte> region, const persist::Persister& persister, const StoreSuperblock& sb)
    : kind_(static_cast<StoreKind>(sb.kind)) {
  options_.kind = kind_;
  options_.slots = static_cast<int>(sb.slots);
  options_.slot_bytes = sb.slot_bytes;
  Options o;
  o.slots = options_.slots;
  o.slot_bytes = options_.slot_bytes;
  const Regions r = regions_of(region, persister, sb);
  if (kind_ == StoreKind::redo) redo_ = std::make_unique<RedoPtm>(r, o);
  else undo_ = std::make_unique<UndoPtm>(r, o);
}

Result<std::unique_ptr<PtmStore>> PtmStore::format(std::span<std::byte> region, const persist::Persister& persister,
                                                   const StoreOptions& options) {
  PMLAB_TRY(check_options(options));
  if (reinterpret_cast<uintptr_t>(region.data()) % kLine != 0)
    return error(Errc::invalid_argument, "a PTM region must start on a cache line");
  StoreSuperblock sb{};
  sb.magic = kStoreMagic;
  sb.kind = static_cast<uint64_t>(options.kind);
  sb.slots = static_cast<uint64_t>(options.slots);
  sb.slot_bytes = options.slot_bytes;
  sb.log_offset = sizeof(StoreSuperblock);
  sb.heap_offset = sb.log_offset + sb.slots * sb.slot_bytes;
  // The heap keeps a whole number of lines; its header and a few blocks at least.
  const uint64_t min_heap = 4096;
  if (region.size() < sb.heap_offset + min_heap)
    return error(Errc::no_space, "a PTM with " + std::to_string(options.slots) + " threads of " +
                                     std::to_string(options.slot_bytes) + "-byte logs needs more than " +
                                     std::to_string(sb.heap_offset + min_heap) + " bytes; the pool holds " +
                                     std::to_string(region.size()));
  sb.heap_bytes = (region.size() - sb.heap_offset) & ~(kLine - 1);
  sb.checksum = superblock_checksum(sb);
  // The superblock first: a store whose log and heap are formatted always has a valid superblock, and
  // formatting again after a crash starts over from it.
  auto* at = reinterpret_cast<StoreSuperblock*>(region.data());
  std::memcpy(at, &sb, sizeof sb);
  persister.persist(at, sizeof sb);
  std::unique_ptr<PtmStore> store(new PtmStore(region, persister, sb));
  PMLAB_TRY(store->redo_ ? store->redo_->format() : store->undo_->format());
  return store;
}

Result<StoreSuperblock> PtmStore::read_superblock(std::span<const std::byte> region) {
  if (region.size() < sizeof(StoreSuperblock)) return error(Errc::corrupted, "region too small for a PTM superblock");
  StoreSuperblock sb;
  std::memcpy(&sb, region.data(), sizeof sb);
  if (sb.magic != kStoreMagic) return error(Errc::corrupted, "no PTM superblock (bad magic)");
  if (sb.checksum != superblock_checksum(sb)) return error(Errc::corrupted, "PTM superblock checksum mismatch");
  const StoreOptions o{static_cast<StoreKind>(sb.kind), static_cast<int>(sb.slots), sb.slot_bytes};
  if (sb.slots > kMaxStoreSlots || !check_options(o) || sb.log_offset != sizeof sb ||
      sb.heap_offset != sb.log_offset + sb.slots * sb.slot_bytes || sb.heap_offset + sb.heap_bytes > region.size())
    return error(Errc::corrupted, "PTM superblock describes a region it does not fit");
  return sb;
}

Result<std::unique_ptr<PtmStore>> PtmStore::open(std::span<std::byte> region, const persist::Persister& persister) {
  auto sb = read_superblock(region);
  if (!sb) return sb.status();
  std::unique_ptr<PtmStore> store(new PtmStore(region, persister, *sb));
  if (store->redo_) {
    PMLAB_TRY(store->redo_->recover());
    store->recovered_ = store->redo_->replayed();
  } else {
    PMLAB_TRY(store->undo_->recover());
    store->recovered_ = store->undo_->rolled_back();
  }
  return store;
}

Status PtmStore::check(std::span<const std::byte> region) {
  auto sb = read_superblock(region);
  if (!sb) return sb.status();
  // The walk only reads; Heap takes a mutable base for the PTMs that write through it.
  const Heap heap(const_cast<std::byte*>(region.data()) + sb->heap_offset, sb->heap_bytes);
  auto stats = heap.stats();
  return stats ? Status::success() : stats.status();
}

Result<std::unique_ptr<pool::Pool>> create_store_pool(const std::string& path, uint64_t size,
                                                      const StoreOptions& options) {
  PMLAB_TRY(check_options(options));
  return pool::create_structure_pool<PtmStore>(path, size, kStorePoolLayout, options);
}

Result<std::unique_ptr<PtmStore>> open_store(pool::Pool& pool) {
  return pool::open_structure<PtmStore>(pool, kStorePoolLayout);
}

namespace {
[[maybe_unused]] const bool pool_layout_registered = pool::register_structure_layout<PtmStore>(
    kStorePoolLayout, "transactional heap under the redo or undo PTM (ptm/store; the library's pmlab::Ptm)");
}  // namespace

}  // namespace pmlab::ptm
