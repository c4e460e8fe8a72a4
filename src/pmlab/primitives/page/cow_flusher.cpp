// Copy-on-write ([PMemIO] §3.2.1, Listing 1 left): the page goes whole to the lane's spare slot; once it
// is durable, one atomic store of (page id, version) makes that slot the page. The old slot still holds
// the previous version with a smaller version number, so no invalidation is needed first ([PMemIO]: two
// barriers instead of three), and recovery takes the newest valid slot of each page.
#include "pmlab/primitives/page/flusher.hpp"
#include "pmlab/primitives/page/on_media.hpp"

namespace pmlab::primitives::page {
namespace om = on_media;

Status CowFlusher::flush(PageStore::Lane& lane, DramPage& page) {
  const auto pvn = store_.begin_flush(lane, page);
  if (!pvn) return pvn.status();
  if (*pvn == 0) return Status::success();
  const persist::Persister& p = store_.persister();
  const uint64_t spare = store_.spare_of(lane);
  om::write_back(p, store_.slot_data(spare), page.data(), page.size());
  p.fence();
  store_.write_header(spare, om::commit_word(page.pid, *pvn));
  p.fence();
  store_.moved(lane, page.pid, *pvn);
  page.clear_dirty();
  return Status::success();
}

}  // namespace pmlab::primitives::page
