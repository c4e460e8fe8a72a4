// Failure-atomic page storage ([PMemIO] §3.2): buffer-pool pages in DRAM are flushed to slots in a
// region; after a crash every page is wholly the version its last returned flush wrote, or (for the flush
// in flight) wholly the new one.
//
// The store is the persistent half: slots with headers (page id, page version number), a spare slot per
// lane for copy-on-write, a micro-log per lane, format / open (recovery) / check, and the DRAM map from
// page to slot. How a page gets there is a PageFlusher's business (flusher.hpp): `cow`, `ulog` and
// `hybrid` all write to the same store, so a store can be flushed by any mix of them.
//
// Concurrency: a lane is one flushing thread's; a page is flushed by one thread at a time (the buffer
// manager's page latch); different pages flush concurrently through different lanes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/persister.hpp"
#include "pmlab/primitives/page/dram_page.hpp"

namespace pmlab::pool {
class Pool;
}

namespace pmlab::primitives::page {

struct StoreOptions {
  uint32_t page_size = 16384;  // 4 KiB to 64 KiB, a power of two
  uint64_t pages = 0;          // logical pages, numbered 0 … pages-1
  uint32_t lanes = 1;          // concurrent flushers
};

struct StoreRecovery {
  uint64_t stale_slots = 0;     // older versions of pages left by copy-on-write (now spare)
  uint64_t ulogs_replayed = 0;  // micro-log records whose flush may not have reached the page, applied again
  uint64_t ulogs_torn = 0;      // records that did not validate (cut by the crash, or being recycled)
};

class PageStore {
 public:
  // One flushing thread's claim on the store: its spare slot and its micro-log. Released on destruction.
  class Lane {
   public:
    Lane(Lane&& o) noexcept : store_(o.store_), index_(o.index_) { o.store_ = nullptr; }
    Lane& operator=(Lane&&) = delete;
    ~Lane();
    uint32_t index() const noexcept { return index_; }
    const PageStore* store() const noexcept { return store_; }

   private:
    friend class PageStore;
    Lane(PageStore* store, uint32_t index) : store_(store), index_(index) {}
    PageStore* store_;
    uint32_t index_;
  };

  ~PageStore();
  PageStore(const PageStore&) = delete;
  PageStore& operator=(const PageStore&) = delete;

  // Lays out `options.pages` zeroed pages (version 1) and returns the store open.
  static Result<std::unique_ptr<PageStore>> format(std::span<std::byte> region, const persist::Persister& persister,
                                                   const StoreOptions& options);
  // Opens and recovers: the newest valid slot of each page is its page, micro-log records whose flush may
  // not have finished are applied again, and every micro-log buffer is zero again.
  static Result<std::unique_ptr<PageStore>> open(std::span<std::byte> region, const persist::Persister& persister);
  // Verifies the region read-only: superblock, one valid slot per page, valid micro-log records in range.
  static Status check(std::span<const std::byte> region);
  static Result<uint64_t> region_bytes(const StoreOptions& options);
  // The most pages `region_size` holds at this page size and lane count.
  static uint64_t pages_that_fit(uint64_t region_size, uint32_t page_size, uint32_t lanes);

  // Fails with `busy` when every lane is claimed.
  Result<Lane> claim_lane();
  // Lanes claimed now (the hybrid flusher's measure of concurrent flushers).
  uint32_t active_lanes() const noexcept { return active_.load(std::memory_order_relaxed); }

  // The page's durable content and version.
  Status read(uint64_t pid, DramPage& into) const;
  std::span<const std::byte> page_bytes(uint64_t pid) const noexcept;
  uint64_t version(uint64_t pid) const noexcept { return pvn_[pid]; }

  const StoreOptions& options() const noexcept { return options_; }
  const persist::Persister& persister() const noexcept { return persister_; }
  const StoreRecovery& recovery() const noexcept { return recovery_; }

  // ---- for the flushers (flusher.hpp): the store's parts, and the DRAM map they keep up to date.
  // The version a flush of `page` through `lane` writes (the page's next), or 0 for a clean page, which is
  // not written. Fails with invalid_argument for a page or lane this store does not have or a page of
  // another size, and with failed when the page has no version numbers left.
  Result<uint64_t> begin_flush(const Lane& lane, const DramPage& page) const;
  std::byte* slot_data(uint64_t slot) const noexcept;
  uint64_t* slot_header(uint64_t slot) const noexcept;
  // Stores a slot's header line — the commit word, then zeros, as the layout has it — whole and
  // non-temporally (Persister::store_word_line; a cached store + flush would wait to read the line for
  // ownership first). Not fenced.
  void write_header(uint64_t slot, uint64_t word) const noexcept;
  uint64_t slot_of(uint64_t pid) const noexcept { return slot_of_[pid]; }
  uint64_t spare_of(const Lane& lane) const noexcept { return lane_state_[lane.index()].spare; }
  // After a copy-on-write commit: the page lives in the lane's spare, its old slot is the lane's spare.
  void moved(const Lane& lane, uint64_t pid, uint64_t pvn) noexcept;
  void updated_in_place(uint64_t pid, uint64_t pvn) noexcept { pvn_[pid] = pvn; }
  // The lane's micro-log buffer b (0 or 1), and the one its next flush writes (they alternate).
  std::byte* ulog_buffer(const Lane& lane, uint32_t b) const noexcept;
  uint32_t ulog_next(const Lane& lane) const noexcept { return lane_state_[lane.index()].ulog_next; }
  void ulog_used(const Lane& lane, uint32_t b) noexcept { lane_state_[lane.index()].ulog_next = 1 - b; }

 private:
  static constexpr uint64_t kNoSlot = UINT64_MAX;  // a page not found yet, a lane without a spare
  struct Geometry {
    uint64_t slots = 0;
    uint64_t ulogs_offset = 0;
    uint64_t ulog_lane_bytes = 0;
    uint64_t data_offset = 0;
    uint64_t region_bytes = 0;
  };
  PageStore(std::span<std::byte> region, const persist::Persister& persister, const StoreOptions& options,
            const Geometry& geometry);
  static Result<Geometry> plan(const StoreOptions& options);
  static Result<std::unique_ptr<PageStore>> load(std::span<std::byte> region, const persist::Persister& persister);
  Status recover(bool repair);
  // recover's steps.
  struct PendingUlog {  // a micro-log record to apply again
    uint64_t pid, pvn;
    const std::byte* buffer;
  };
  Status find_current_slots();
  Status find_ulogs_to_replay(std::vector<PendingUlog>& replay);
  void replay_ulogs(const std::vector<PendingUlog>& replay);
  void zero_ulogs();

  std::span<std::byte> region_;
  const persist::Persister& persister_;
  StoreOptions options_;
  Geometry geometry_;
  std::vector<uint64_t> slot_of_;  // page -> slot holding its newest version
  std::vector<uint64_t> pvn_;      // page -> its newest durable version number
  // What each flush of a lane reads and writes, a line per lane: lanes flush concurrently, and two lanes'
  // words on one line would move it between their cores on every flush.
  struct alignas(64) LaneState {
    uint64_t spare = kNoSlot;  // the lane's free slot
    uint32_t ulog_next = 0;    // the micro-log buffer its next flush writes
  };
  std::vector<LaneState> lane_state_;
  std::unique_ptr<std::atomic<bool>[]> claimed_;
  std::atomic<uint32_t> active_{0};
  StoreRecovery recovery_;
};

// A pool file holding one page store in its data area: layout "pages".
inline constexpr const char* kPoolLayout = "pages";
Result<std::unique_ptr<pool::Pool>> create_pool(const std::string& path, uint64_t size, const StoreOptions& options);
Result<std::unique_ptr<PageStore>> open_in_pool(pool::Pool& pool);

}  // namespace pmlab::primitives::page
