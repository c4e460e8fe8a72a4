#include "pmlab/primitives/page/page_store.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

#include "pmlab/common/hash.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/pool/structure_layout.hpp"
#include "pmlab/primitives/log/popcount.hpp"
#include "pmlab/primitives/page/on_media.hpp"

namespace pmlab::primitives::page {
namespace om = on_media;

namespace {

constexpr uint32_t kMaxLanes = 1024;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

PageStore::Lane::~Lane() {
  if (store_ == nullptr) return;
  store_->claimed_[index_].store(false, std::memory_order_release);
  store_->active_.fetch_sub(1, std::memory_order_relaxed);
}

PageStore::PageStore(std::span<std::byte> region, const persist::Persister& persister, const StoreOptions& options,
                     const Geometry& geometry)
    : region_(region),
      persister_(persister),
      options_(options),
      geometry_(geometry),
      slot_of_(options.pages, kNoSlot),
      pvn_(options.pages, 0),
      lane_state_(options.lanes),
      claimed_(std::make_unique<std::atomic<bool>[]>(options.lanes)) {}

PageStore::~PageStore() = default;

Result<PageStore::Geometry> PageStore::plan(const StoreOptions& o) {
  PMLAB_TRY(check_page_size(o.page_size));
  if (o.pages == 0 || o.pages > om::kMaxPages)
    return error(Errc::invalid_argument,
                 "a page store holds 1 to " + std::to_string(om::kMaxPages) + " pages, not " + std::to_string(o.pages));
  if (o.lanes == 0 || o.lanes > kMaxLanes)
    return error(Errc::invalid_argument,
                 "a page store has 1 to " + std::to_string(kMaxLanes) + " lanes, not " + std::to_string(o.lanes));
  Geometry g;
  g.slots = o.pages + o.lanes;
  g.ulogs_offset = align_up(om::kHeadersOffset + g.slots * om::kLine, 256);
  g.ulog_lane_bytes = om::UlogGeometry::for_page(o.page_size).lane_bytes;
  g.data_offset = align_up(g.ulogs_offset + o.lanes * g.ulog_lane_bytes, 4096);
  g.region_bytes = g.data_offset + g.slots * o.page_size;
  return g;
}

Result<uint64_t> PageStore::region_bytes(const StoreOptions& options) {
  auto g = plan(options);
  if (!g) return g.status();
  return g->region_bytes;
}

uint64_t PageStore::pages_that_fit(uint64_t region_size, uint32_t page_size, uint32_t lanes) {
  if (!check_page_size(page_size).ok() || lanes == 0) return 0;
  const uint64_t per_page = page_size + om::kLine;
  uint64_t pages = std::min<uint64_t>(region_size / per_page, om::kMaxPages);
  while (pages > 0) {
    auto bytes = region_bytes({page_size, pages, lanes});
    if (bytes && *bytes <= region_size) break;
    const uint64_t over = bytes ? *bytes - region_size : per_page;
    pages -= std::min(pages, std::max<uint64_t>(1, over / per_page));
  }
  return pages;
}

std::byte* PageStore::slot_data(uint64_t slot) const noexcept {
  return region_.data() + geometry_.data_offset + slot * options_.page_size;
}

uint64_t* PageStore::slot_header(uint64_t slot) const noexcept {
  return reinterpret_cast<uint64_t*>(region_.data() + om::kHeadersOffset + slot * om::kLine);
}

void PageStore::write_header(uint64_t slot, uint64_t word) const noexcept {
  persister_.store_word_line(slot_header(slot), word);
}

std::byte* PageStore::ulog_buffer(const Lane& lane, uint32_t b) const noexcept {
  return region_.data() + geometry_.ulogs_offset + lane.index() * geometry_.ulog_lane_bytes +
         b * om::UlogGeometry::for_page(options_.page_size).buffer_bytes;
}

void PageStore::moved(const Lane& lane, uint64_t pid, uint64_t pvn) noexcept {
  const uint64_t old = slot_of_[pid];
  slot_of_[pid] = lane_state_[lane.index()].spare;
  lane_state_[lane.index()].spare = old;
  pvn_[pid] = pvn;
}

std::span<const std::byte> PageStore::page_bytes(uint64_t pid) const noexcept {
  return {slot_data(slot_of_[pid]), options_.page_size};
}

Status PageStore::read(uint64_t pid, DramPage& into) const {
  if (pid >= options_.pages)
    return error(Errc::invalid_argument, "page " + std::to_string(pid) + " is not in the store (it has " +
                                             std::to_string(options_.pages) + " pages)");
  if (into.size() != options_.page_size)
    return error(Errc::invalid_argument, "a " + std::to_string(into.size()) + "-byte frame cannot hold a " +
                                             std::to_string(options_.page_size) + "-byte page");
  std::memcpy(into.data(), slot_data(slot_of_[pid]), options_.page_size);
  into.pid = pid;
  into.clear_dirty();
  return Status::success();
}

Result<uint64_t> PageStore::begin_flush(const Lane& lane, const DramPage& page) const {
  if (lane.store() != this) return error(Errc::invalid_argument, "the lane belongs to another page store");
  if (page.size() != options_.page_size)
    return error(Errc::invalid_argument, "a " + std::to_string(page.size()) +
                                             "-byte page cannot be flushed to a store of " +
                                             std::to_string(options_.page_size) + "-byte pages");
  if (page.pid >= options_.pages)
    return error(Errc::invalid_argument, "page " + std::to_string(page.pid) + " is not in the store (it has " +
                                             std::to_string(options_.pages) + " pages)");
  if (page.dirty().empty()) return uint64_t{0};
  const uint64_t pvn = version(page.pid) + 1;
  if (pvn > om::kMaxPvn)
    return error(Errc::failed, "page " + std::to_string(page.pid) + " has no version numbers left");
  return pvn;
}

Result<PageStore::Lane> PageStore::claim_lane() {
  for (uint32_t i = 0; i < options_.lanes; ++i) {
    bool expected = false;
    if (claimed_[i].compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      active_.fetch_add(1, std::memory_order_relaxed);
      return Lane(this, i);
    }
  }
  return error(Errc::busy, "all " + std::to_string(options_.lanes) + " lanes of the page store are claimed");
}

Result<std::unique_ptr<PageStore>> PageStore::format(std::span<std::byte> region, const persist::Persister& persister,
                                                     const StoreOptions& options) {
  PMLAB_TRY(pool::check_region_aligned(region, om::kLine, "page store"));
  auto planned = plan(options);
  if (!planned) return planned.status();
  const Geometry g = *planned;
  if (region.size() < g.region_bytes)
    return error(Errc::invalid_argument, "a region of " + format_size(region.size()) + " is too small for " +
                                             std::to_string(options.pages) + " pages of " +
                                             format_size(options.page_size) + " and " + std::to_string(options.lanes) +
                                             " lanes (needs " + format_size(g.region_bytes) + ")");
  auto store = std::unique_ptr<PageStore>(new PageStore(region, persister, options, g));
  const om::Superblock formatted{.magic = 0,
                                 .version = om::kVersion,
                                 .page_size = options.page_size,
                                 .lanes = options.lanes,
                                 .reserved = 0,
                                 .pages = options.pages,
                                 .slots = g.slots,
                                 .ulogs_offset = g.ulogs_offset,
                                 .data_offset = g.data_offset,
                                 .checksum = 0};  // the magic and the checksum are format_behind_magic's to set
  pool::format_behind_magic(reinterpret_cast<om::Superblock*>(region.data()), formatted, om::kMagic, persister, [&] {
    // Page p starts in slot p at version 1; the last `lanes` slots are the spares.
    bool wrote = false;
    for (uint64_t slot = 0; slot < g.slots; ++slot) {
      const uint64_t header[om::kLine / 8] = {slot < options.pages ? om::commit_word(slot, 1) : 0};
      wrote = persister.store_changed(store->slot_header(slot), header, sizeof header) > 0 || wrote;
    }
    const uint64_t headers_end = om::kHeadersOffset + g.slots * om::kLine;
    return persister.zero_changed(region.data() + headers_end, g.region_bytes - headers_end) > 0 || wrote;
  });
  PMLAB_TRY(store->recover(false));  // builds the DRAM map from what was just written
  return store;
}

Result<std::unique_ptr<PageStore>> PageStore::load(std::span<std::byte> region, const persist::Persister& persister) {
  auto read = pool::read_superblock<om::Superblock>(region, "page store", sizeof(om::Superblock), om::kLine, om::kMagic,
                                                    om::kVersion);
  if (!read) return read.status();
  const om::Superblock& sb = *read;
  const StoreOptions o{sb.page_size, sb.pages, sb.lanes};
  auto g = plan(o);
  if (!g) return error(Errc::corrupted, "page store superblock: " + g.status().message());
  if (g->slots != sb.slots || g->ulogs_offset != sb.ulogs_offset || g->data_offset != sb.data_offset)
    return error(Errc::corrupted, "page store superblock geometry is inconsistent");
  if (g->region_bytes > region.size())
    return error(Errc::corrupted, "the page store needs " + std::to_string(g->region_bytes) +
                                      " bytes but its region has " + std::to_string(region.size()) + " (truncated?)");
  return std::unique_ptr<PageStore>(new PageStore(region, persister, o, *g));
}

Result<std::unique_ptr<PageStore>> PageStore::open(std::span<std::byte> region, const persist::Persister& persister) {
  auto store = load(region, persister);
  if (!store) return store.status();
  PMLAB_TRY((*store)->recover(true));
  return store;
}

Status PageStore::check(std::span<const std::byte> region) {
  static const persist::Persister no_writes = persist::Persister::volatile_memory();
  auto store = load({const_cast<std::byte*>(region.data()), region.size()}, no_writes);
  if (!store) return store.status();
  return (*store)->recover(false);
}

Status PageStore::recover(bool repair) {
  recovery_ = {};
  if (Status s = find_current_slots(); !s) return s;
  std::vector<PendingUlog> replay;
  if (Status s = find_ulogs_to_replay(replay); !s) return s;
  recovery_.ulogs_replayed = replay.size();
  if (!repair) return Status::success();
  replay_ulogs(replay);
  zero_ulogs();
  return Status::success();
}

// Each page is its newest valid slot; copy-on-write leaves older versions behind, which are free, and
// exactly `lanes` slots are not current: each lane's spare.
Status PageStore::find_current_slots() {
  std::fill(slot_of_.begin(), slot_of_.end(), kNoSlot);
  std::fill(pvn_.begin(), pvn_.end(), 0);
  const uint64_t pages = options_.pages;
  for (uint64_t slot = 0; slot < geometry_.slots; ++slot) {
    const uint64_t w = persist::Persister::load8(slot_header(slot));
    if (!om::valid(w)) continue;
    const uint64_t pid = om::pid_of(w), pvn = om::pvn_of(w);
    if (pid >= pages || pvn == 0)
      return error(Errc::corrupted, "slot " + std::to_string(slot) + " names page " + std::to_string(pid) +
                                        " version " + std::to_string(pvn) + "; the store has " + std::to_string(pages) +
                                        " pages");
    if (slot_of_[pid] != kNoSlot && pvn == pvn_[pid])
      return error(Errc::corrupted,
                   "page " + std::to_string(pid) + " has two slots with version " + std::to_string(pvn));
    if (slot_of_[pid] == kNoSlot || pvn > pvn_[pid]) {
      if (slot_of_[pid] != kNoSlot) ++recovery_.stale_slots;
      slot_of_[pid] = slot;
      pvn_[pid] = pvn;
    } else {
      ++recovery_.stale_slots;
    }
  }
  std::vector<bool> current(geometry_.slots, false);
  for (uint64_t pid = 0; pid < pages; ++pid) {
    if (slot_of_[pid] == kNoSlot) return error(Errc::corrupted, "page " + std::to_string(pid) + " has no valid slot");
    current[slot_of_[pid]] = true;
  }
  uint32_t lane = 0;
  for (uint64_t slot = 0; slot < geometry_.slots; ++slot)
    if (!current[slot]) lane_state_[lane++].spare = slot;
  return Status::success();
}

// Micro-log records: a valid one whose version is not older than its page's may not have been applied in
// full; applying it again is idempotent. Ascending versions, so the newest lands last.
Status PageStore::find_ulogs_to_replay(std::vector<PendingUlog>& replay) {
  const auto ug = om::UlogGeometry::for_page(options_.page_size);
  const uint32_t lines = options_.page_size / om::kLine;
  for (uint32_t l = 0; l < options_.lanes; ++l) {
    const Lane view(nullptr, l);
    lane_state_[l].ulog_next = 0;
    for (uint32_t b = 0; b < 2; ++b) {
      const std::byte* buffer = ulog_buffer(view, b);
      om::UlogHeader h;
      std::memcpy(&h, buffer, sizeof h);
      if (!om::valid(h.commit)) continue;
      const std::string where = "micro-log " + std::to_string(l) + "/" + std::to_string(b) + ": ";
      // The count is stored whole into a zeroed word: it is the real count or zero, never more than a page.
      if (h.count > lines)
        return error(Errc::corrupted,
                     where + "holds " + std::to_string(h.count) + " lines; a page has " + std::to_string(lines));
      const uint64_t bits = static_cast<uint64_t>(std::popcount(h.commit) + std::popcount(h.count)) +
                            popcount_bytes(buffer + ug.kIndexOffset, h.count * sizeof(uint16_t)) +
                            popcount_bytes(buffer + ug.lines_offset, h.count * om::kLine);
      if (bits != h.check) {
        ++recovery_.ulogs_torn;
        continue;
      }
      const uint64_t pid = om::pid_of(h.commit), pvn = om::pvn_of(h.commit);
      if (pid >= options_.pages) return error(Errc::corrupted, where + "names page " + std::to_string(pid));
      for (uint64_t k = 0; k < h.count; ++k) {
        uint16_t index;
        std::memcpy(&index, buffer + ug.kIndexOffset + k * sizeof index, sizeof index);
        if (index >= lines) return error(Errc::corrupted, where + "names line " + std::to_string(index));
      }
      if (pvn >= pvn_[pid]) replay.push_back({pid, pvn, buffer});
    }
  }
  std::sort(replay.begin(), replay.end(),
            [](const PendingUlog& a, const PendingUlog& b) { return a.pid != b.pid ? a.pid < b.pid : a.pvn < b.pvn; });
  return Status::success();
}

void PageStore::replay_ulogs(const std::vector<PendingUlog>& replay) {
  const auto ug = om::UlogGeometry::for_page(options_.page_size);
  for (const PendingUlog& r : replay) {
    uint64_t count;
    std::memcpy(&count, r.buffer + offsetof(om::UlogHeader, count), sizeof count);
    std::byte* page = slot_data(slot_of_[r.pid]);
    for (uint64_t k = 0; k < count; ++k) {
      uint16_t index;
      std::memcpy(&index, r.buffer + ug.kIndexOffset + k * sizeof index, sizeof index);
      om::write_back(persister_, page + index * om::kLine, r.buffer + ug.lines_offset + k * om::kLine, om::kLine);
    }
    write_header(slot_of_[r.pid], om::commit_word(r.pid, r.pvn));
    pvn_[r.pid] = r.pvn;
  }
  if (!replay.empty()) persister_.fence();  // applied before any record is zeroed
}

// Every buffer zero again before a flush writes it: records applied or not, torn or half recycled.
void PageStore::zero_ulogs() {
  std::byte* ulogs = region_.data() + geometry_.ulogs_offset;
  bool zeroed = false;
  for (uint64_t line = 0; line < options_.lanes * geometry_.ulog_lane_bytes; line += om::kLine) {
    const std::byte* at = ulogs + line;
    if (std::all_of(at, at + om::kLine, [](std::byte b) { return b == std::byte{0}; })) continue;
    // Non-temporal, not Persister::zero_changed's plain stores under a line flush: a record's check word
    // zeroed byte by byte could tear into a count that its torn fields match, where the aligned words of
    // a non-temporal line change whole.
    persister_.zero_nt(ulogs + line, om::kLine);
    zeroed = true;
  }
  // A recovery that zeroed nothing has nothing to order (the replay, if any, was fenced before).
  if (zeroed) persister_.fence();
}

// --------------------------------------------------------------------------- the "pages" pool layout

Result<std::unique_ptr<pool::Pool>> create_pool(const std::string& path, uint64_t size, const StoreOptions& options) {
  return pool::create_structure_pool<PageStore>(path, size, kPoolLayout, options);
}

Result<std::unique_ptr<PageStore>> open_in_pool(pool::Pool& pool) {
  return pool::open_structure<PageStore>(pool, kPoolLayout);
}

namespace {
[[maybe_unused]] const bool pool_layout_registered = pool::register_structure_layout<PageStore>(
    kPoolLayout, "failure-atomic page store (copy-on-write slots and micro-logs; primitives/page)");
}  // namespace

}  // namespace pmlab::primitives::page
