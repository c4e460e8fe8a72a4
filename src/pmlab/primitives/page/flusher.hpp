// Page flushers: make a DRAM page's changes durable in a PageStore, failure-atomically.
//
//   cow     copy-on-write ([PMemIO] §3.2.1): the whole page to the lane's spare slot, barrier, then the
//           slot header (page id and page version number in one word), barrier. 2 barriers, writes the
//           whole page whatever is dirty.
//   ulog    micro-log ([PMemIO] §3.2.2): a record of the dirty lines to the lane's micro-log, barrier,
//           then the lines in place, barrier. 2 barriers (the paper's protocol has 4: the record validates
//           itself by its bit count over a zeroed buffer, as zero logging does), writes each dirty line
//           twice and zeroes the record again afterwards.
//   hybrid  picks cow or ulog per flush from a cost model of dirty lines and concurrent flushers,
//           calibrated on the store at start (cost_model.hpp) and refined by timing a few of its own
//           flushes and now and then trying the other policy (policy_learner.hpp).
//
// Whole lines of page data and micro-log records are written with non-temporal stores, whatever the
// persister's flush instruction (on_media.hpp: no read-for-ownership of lines about to be overwritten);
// slot headers go through the cache and the flush instruction.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "pmlab/primitives/page/cost_model.hpp"
#include "pmlab/primitives/page/page_store.hpp"
#include "pmlab/primitives/page/policy.hpp"
#include "pmlab/primitives/page/policy_learner.hpp"

namespace pmlab::primitives::page {

// A flusher writes into one store, which outlives it.
class PageFlusher {
 public:
  explicit PageFlusher(PageStore& store) noexcept : store_(store) {}
  virtual ~PageFlusher() = default;
  // Makes the page's dirty lines durable as the page's next version, then clears them. Returns once the
  // flush survives a crash; a crash before leaves the page wholly at its previous version or wholly at
  // the new one. A clean page is not written. Bad lane, page id or page size: invalid_argument.
  virtual Status flush(PageStore::Lane& lane, DramPage& page) = 0;
  virtual Policy policy() const noexcept = 0;

 protected:
  PageStore& store_;
};

class CowFlusher final : public PageFlusher {
 public:
  using PageFlusher::PageFlusher;
  Status flush(PageStore::Lane& lane, DramPage& page) override;
  Policy policy() const noexcept override { return Policy::cow; }
};

class MicroLogFlusher final : public PageFlusher {
 public:
  using PageFlusher::PageFlusher;
  Status flush(PageStore::Lane& lane, DramPage& page) override;
  Policy policy() const noexcept override { return Policy::ulog; }
};

// How the hybrid chooses: `model` alone, or the model refined online by timing the lane's own flushes
// (policy_learner.hpp). `model` alone makes the choice a function of dirty lines and flushers only, which
// crash tests need: their crash states must not depend on timing.
enum class Refinement : uint8_t { model, online };

class HybridFlusher final : public PageFlusher {
 public:
  HybridFlusher(PageStore& store, FlushCostModel model, Refinement refinement = Refinement::online);
  Status flush(PageStore::Lane& lane, DramPage& page) override;
  Policy policy() const noexcept override { return Policy::hybrid; }
  const FlushCostModel& model() const noexcept { return model_; }
  // The learner of a lane (nullptr with Refinement::model or a bad index). Read it while no thread
  // flushes through that lane.
  const PolicyLearner* learner(uint32_t lane) const noexcept {
    return lane < learners_.size() ? &learners_[lane].learner : nullptr;
  }

 private:
  struct alignas(64) LaneLearner {  // one per lane, on lines of its own: lanes flush concurrently
    explicit LaneLearner(const FlushCostModel& model) : learner(model) {}
    PolicyLearner learner;
  };
  Status flush_with(Policy policy, PageStore::Lane& lane, DramPage& page) {
    return policy == Policy::ulog ? ulog_.flush(lane, page) : cow_.flush(lane, page);
  }
  // A flush whose policy needs the learner's sampling or exploring: what flush() keeps out of line.
  [[gnu::noinline]] Status flush_learned(PolicyLearner& learner, uint32_t dirty, uint32_t threads,
                                         PageStore::Lane& lane, DramPage& page);

  CowFlusher cow_;
  MicroLogFlusher ulog_;
  FlushCostModel model_;
  std::vector<LaneLearner> learners_;  // empty with Refinement::model
};

// cow and ulog as they are; hybrid calibrates its cost model on the store first (cost_model.hpp), which
// needs `max_threads` unclaimed lanes.
Result<std::unique_ptr<PageFlusher>> make_flusher(Policy policy, PageStore& store, uint32_t max_threads = 1);

}  // namespace pmlab::primitives::page
