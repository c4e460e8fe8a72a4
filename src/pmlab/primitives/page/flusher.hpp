// Page flushers: make a DRAM page's changes durable in a PageStore, failure-atomically.
//
//   cow     copy-on-write (seed 002 §3.2.1): the whole page to the lane's spare slot, barrier, then the
//           slot header (page id and page version number in one word), barrier. 2 barriers, writes the
//           whole page whatever is dirty.
//   ulog    micro-log (seed 002 §3.2.2): a record of the dirty lines to the lane's micro-log, barrier,
//           then the lines in place, barrier. 2 barriers (the paper's protocol has 4: the record validates
//           itself by its bit count over a zeroed buffer, as zero logging does), writes each dirty line
//           twice and zeroes the record again afterwards.
//   hybrid  picks cow or ulog per flush from a cost model of dirty lines and concurrent flushers,
//           calibrated on the store at start (cost_model.hpp).
//
// Whole lines of page data and micro-log records are written with non-temporal stores, whatever the
// persister's flush instruction (on_media.hpp: no read-for-ownership of lines about to be overwritten);
// slot headers go through the cache and the flush instruction.
#pragma once

#include <memory>
#include <string_view>

#include "pmlab/primitives/page/cost_model.hpp"
#include "pmlab/primitives/page/page_store.hpp"
#include "pmlab/primitives/page/policy.hpp"

namespace pmlab::primitives::page {

class PageFlusher {
 public:
  virtual ~PageFlusher() = default;
  // Makes the page's dirty lines durable as the page's next version, then clears them. Returns once the
  // flush survives a crash; a crash before leaves the page wholly at its previous version or wholly at
  // the new one. A clean page is not written. Bad lane, page id or page size: invalid_argument.
  virtual Status flush(PageStore::Lane& lane, DramPage& page) = 0;
  virtual Policy policy() const noexcept = 0;
};

class CowFlusher final : public PageFlusher {
 public:
  explicit CowFlusher(PageStore& store) : store_(store) {}
  Status flush(PageStore::Lane& lane, DramPage& page) override;
  Policy policy() const noexcept override { return Policy::cow; }

 private:
  PageStore& store_;
};

class MicroLogFlusher final : public PageFlusher {
 public:
  explicit MicroLogFlusher(PageStore& store) : store_(store) {}
  Status flush(PageStore::Lane& lane, DramPage& page) override;
  Policy policy() const noexcept override { return Policy::ulog; }

 private:
  PageStore& store_;
};

class HybridFlusher final : public PageFlusher {
 public:
  HybridFlusher(PageStore& store, FlushCostModel model) : cow_(store), ulog_(store), store_(store), model_(std::move(model)) {}
  Status flush(PageStore::Lane& lane, DramPage& page) override;
  Policy policy() const noexcept override { return Policy::hybrid; }
  const FlushCostModel& model() const noexcept { return model_; }

 private:
  CowFlusher cow_;
  MicroLogFlusher ulog_;
  PageStore& store_;
  FlushCostModel model_;
};

// cow and ulog as they are; hybrid calibrates its cost model on the store first (cost_model.hpp), which
// needs `max_threads` unclaimed lanes.
Result<std::unique_ptr<PageFlusher>> make_flusher(Policy policy, PageStore& store, uint32_t max_threads = 1);

}  // namespace pmlab::primitives::page
