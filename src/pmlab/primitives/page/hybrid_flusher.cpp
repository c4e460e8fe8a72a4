// Hybrid: per flush, the cheaper of copy-on-write and micro-log for this many dirty lines and this many
// concurrent flushers, as the store's calibrated cost model predicts ([PMemIO] §3.2.3), refined online by
// the lane's learner. Both protocols write the same store, so the choice can change from one flush of a
// page to the next.
#include "pmlab/platform/clock.hpp"
#include "pmlab/primitives/page/flusher.hpp"

namespace pmlab::primitives::page {

HybridFlusher::HybridFlusher(PageStore& store, FlushCostModel model, Refinement refinement)
    : cow_(store), ulog_(store), store_(store), model_(std::move(model)) {
  if (refinement == Refinement::online) learners_.assign(store.options().lanes, LaneLearner(model_));
}

Status HybridFlusher::flush(PageStore::Lane& lane, DramPage& page) {
  const uint32_t dirty = static_cast<uint32_t>(page.dirty().count());
  const uint32_t threads = store_.active_lanes();
  // A clean page is not written (either flusher returns at once); a bad lane is the flushers' to reject.
  if (learners_.empty() || dirty == 0 || lane.index() >= learners_.size()) {
    return model_.choose(dirty, threads) == Policy::ulog ? ulog_.flush(lane, page) : cow_.flush(lane, page);
  }
  PolicyLearner& learner = learners_[lane.index()].learner;
  const Policy policy = learner.plan(dirty, threads);
  if (learner.wants_stamp()) learner.stamp(platform::Clock::get().to_ns(platform::Clock::now()));
  return policy == Policy::ulog ? ulog_.flush(lane, page) : cow_.flush(lane, page);
}

}  // namespace pmlab::primitives::page
