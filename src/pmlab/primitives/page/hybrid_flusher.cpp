// Hybrid: per flush, the cheaper of copy-on-write and micro-log for this many dirty lines and this many
// concurrent flushers, as the store's calibrated cost model predicts (seed 002 §3.2.3). Both protocols
// write the same store, so the choice can change from one flush of a page to the next.
#include "pmlab/primitives/page/flusher.hpp"

namespace pmlab::primitives::page {

Status HybridFlusher::flush(PageStore::Lane& lane, DramPage& page) {
  const Policy choice = model_.choose(page.dirty().count(), store_.active_lanes());
  return choice == Policy::ulog ? ulog_.flush(lane, page) : cow_.flush(lane, page);
}

}  // namespace pmlab::primitives::page
