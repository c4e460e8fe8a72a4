// Hybrid: per flush, the cheaper of copy-on-write and micro-log for this many dirty lines and this many
// concurrent flushers, as the store's calibrated cost model predicts ([PMemIO] §3.2.3), refined online by
// the lane's learner. Both protocols write the same store, so the choice can change from one flush of a
// page to the next.
#include "pmlab/platform/clock.hpp"
#include "pmlab/primitives/page/flusher.hpp"

namespace pmlab::primitives::page {

HybridFlusher::HybridFlusher(PageStore& store, FlushCostModel model, Refinement refinement)
    : PageFlusher(store), cow_(store), ulog_(store), model_(std::move(model)) {
  if (refinement == Refinement::online) learners_.assign(store.options().lanes, LaneLearner(model_));
}

// A flush ends with a fence that drains its non-temporal stores; the stores that follow it, the next
// flush's included, wait behind that drain in the store buffer, and once it is full the core waits too.
// So choosing must add as few stores as it can: on the common paths flush() calls nothing before the
// chosen flusher, so its frame is a plain forwarding call's (GCC keeps the call, not a jump, for the
// returned Status); the learner's sampling and exploring, which call out and read the clock, go through
// flush_learned(). Even a few more register saves show at 2 threads (docs/primitives.md, "The hybrid's
// dispatch").
Status HybridFlusher::flush(PageStore::Lane& lane, DramPage& page) {
  const uint32_t dirty = page.dirty().count();
  const uint32_t threads = store_.active_lanes();
  // A clean page is not written (either flusher returns at once); a bad lane is the flushers' to reject.
  if (learners_.empty() || dirty == 0 || lane.index() >= learners_.size())
    return flush_with(model_.choose(dirty, threads), lane, page);
  PolicyLearner& learner = learners_[lane.index()].learner;
  if (learner.continues_run(dirty, threads) && !learner.wants_stamp())
    return flush_with(learner.continue_run(), lane, page);
  return flush_learned(learner, dirty, threads, lane, page);
}

Status HybridFlusher::flush_learned(PolicyLearner& learner, uint32_t dirty, uint32_t threads, PageStore::Lane& lane,
                                    DramPage& page) {
  const Policy policy = learner.plan(dirty, threads);
  if (learner.wants_stamp()) learner.stamp(platform::Clock::get().to_ns(platform::Clock::now()));
  return flush_with(policy, lane, page);
}

}  // namespace pmlab::primitives::page
