// pmlab::PageStore: the engine's page store (primitives/page) in a pool of layout "pages", with one claimed
// lane and one DRAM frame per writer, through which a write reaches the store's flusher.
#include <pmlab/page_store.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "pmlab/api/errors.hpp"
#include "pmlab/pool/header.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/primitives/page/flusher.hpp"
#include "pmlab/primitives/page/page_store.hpp"

namespace pmlab {
inline namespace v0 {

namespace page = primitives::page;
using api::raise;

struct PageStore::Impl {
  std::unique_ptr<pool::Pool> pool;
  std::unique_ptr<page::PageStore> store;
  std::unique_ptr<page::PageFlusher> flusher;
  PageFlush flush = PageFlush::hybrid;
  std::vector<page::PageStore::Lane> lanes;  // every lane, claimed for the store's life
  std::vector<page::DramPage> frames;        // a lane's frame: the page it writes, as read then changed

  // A frame holding page `pid` as it is durable now, nothing dirty, after checking the lane and the page.
  page::DramPage& frame(unsigned lane, uint64_t pid) {
    if (lane >= lanes.size())
      raise(PMLAB_E_INVALID_ARGUMENT,
            "lane " + std::to_string(lane) + " of a store with " + std::to_string(lanes.size()) + " lanes");
    check_page(pid);
    page::DramPage& f = frames[lane];
    if (Status st = store->read(pid, f); !st) raise(st);
    f.clear_dirty();
    return f;
  }
  void check_page(uint64_t pid) const {
    if (pid >= store->options().pages)
      raise(PMLAB_E_INVALID_ARGUMENT,
            "page " + std::to_string(pid) + " of a store with " + std::to_string(store->options().pages) + " pages");
  }
  void flush_frame(unsigned lane, page::DramPage& f) {
    if (f.dirty().empty()) return;
    if (Status st = flusher->flush(this->lanes[lane], f); !st) raise(st);
  }
};

namespace {

page::Policy policy_of(PageFlush flush) {
  switch (flush) {
    case PageFlush::cow: return page::Policy::cow;
    case PageFlush::ulog: return page::Policy::ulog;
    case PageFlush::hybrid: return page::Policy::hybrid;
  }
  raise(PMLAB_E_INVALID_ARGUMENT, "unknown page flush " + std::to_string(static_cast<int>(flush)));
}

// The store in an open pool of layout "pages", recovered, with its flusher and every lane claimed. The
// hybrid flusher calibrates on unclaimed lanes, so it is made first.
std::unique_ptr<PageStore::Impl> over(std::unique_ptr<pool::Pool> p, PageFlush flush) {
  auto impl = std::make_unique<PageStore::Impl>();
  impl->pool = std::move(p);
  auto store = page::open_in_pool(*impl->pool);
  if (!store) raise(store.status());
  impl->store = std::move(*store);
  const uint32_t lanes = impl->store->options().lanes;
  auto flusher = page::make_flusher(policy_of(flush), *impl->store, lanes);
  if (!flusher) raise(flusher.status());
  impl->flusher = std::move(*flusher);
  impl->flush = flush;
  for (uint32_t i = 0; i < lanes; ++i) {
    auto lane = impl->store->claim_lane();
    if (!lane) raise(lane.status());
    impl->lanes.push_back(std::move(*lane));
    impl->frames.emplace_back(impl->store->options().page_size);
  }
  return impl;
}

}  // namespace

PageStore PageStore::create(const std::string& path, const PageStoreOptions& options, PageFlush flush) {
  (void)policy_of(flush);
  if (options.lanes == 0) raise(PMLAB_E_INVALID_ARGUMENT, "a page store needs one lane at least");
  const page::StoreOptions o{options.page_size, options.pages, options.lanes};
  auto region = page::PageStore::region_bytes(o);
  if (!region) raise(region.status());
  // A pool is 1 MiB at least; a larger store gets the header's page and its region, in whole pages.
  const uint64_t bytes = std::max<uint64_t>(uint64_t{1} << 20, (pool::kHeaderSize + *region + 4095) / 4096 * 4096);
  auto made = page::create_pool(path, bytes, o);
  if (!made) raise(made.status());
  return PageStore(over(std::move(*made), flush));
}

PageStore PageStore::open(const std::string& path, PageFlush flush) {
  (void)policy_of(flush);
  pool::OpenOptions o;
  o.layout = page::kPoolLayout;
  auto opened = pool::Pool::open(path, o);
  if (!opened) raise(opened.status());
  return PageStore(over(std::move(*opened), flush));
}

PageStore::PageStore(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
PageStore::PageStore(PageStore&&) noexcept = default;
PageStore& PageStore::operator=(PageStore&&) noexcept = default;
PageStore::~PageStore() = default;

PageStore::Impl& PageStore::self() const { return api::impl_of(impl_, "pmlab::PageStore"); }

uint32_t PageStore::page_size() const { return self().store->options().page_size; }
uint64_t PageStore::pages() const { return self().store->options().pages; }
unsigned PageStore::lanes() const { return self().store->options().lanes; }
PageFlush PageStore::flush() const { return self().flush; }

PageStoreRecovery PageStore::recovery() const {
  const page::StoreRecovery& r = self().store->recovery();
  return {r.stale_slots, r.ulogs_replayed, r.ulogs_torn};
}

void PageStore::read(uint64_t pid, void* out) const {
  Impl& m = self();
  m.check_page(pid);
  const auto bytes = m.store->page_bytes(pid);
  std::memcpy(out, bytes.data(), bytes.size());
}

uint64_t PageStore::version(uint64_t pid) const {
  Impl& m = self();
  m.check_page(pid);
  return m.store->version(pid);
}

void PageStore::write(unsigned lane, uint64_t pid, const void* data) {
  Impl& m = self();
  page::DramPage& f = m.frame(lane, pid);
  const auto* in = static_cast<const std::byte*>(data);
  for (uint32_t line = 0; line < f.lines(); ++line) {
    const size_t at = size_t{line} * page::kLineBytes;
    if (std::memcmp(f.data() + at, in + at, page::kLineBytes) == 0) continue;
    std::memcpy(f.data() + at, in + at, page::kLineBytes);
    f.mark_dirty(line);
  }
  m.flush_frame(lane, f);
}

void PageStore::update(unsigned lane, uint64_t pid, size_t offset, const void* data, size_t size) {
  Impl& m = self();
  page::DramPage& f = m.frame(lane, pid);
  if (Status st = f.write(offset, data, size); !st) raise(st);
  m.flush_frame(lane, f);
}

}  // namespace v0
}  // namespace pmlab
