// pmlab/page_store.hpp: failure-atomic page writes in a pool file, for a buffer pool of one's own, in C++.
//
//   auto store = pmlab::PageStore::create("/mnt/pmem/pages", {.page_size = 16384, .pages = 1024});
//   store.write(0, 42, page);                    // page 42 is wholly the new version once this returns
//   store.update(0, 42, 128, record, 64);        // or just the bytes that changed: fewer lines persisted
//   store.read(42, buffer);
//
// After a crash every page is wholly the version its last returned write left, or, for a write in flight,
// wholly the new one ([PMemIO] §3.2). How a write persists is the store's flush (PageFlush): copy-on-write
// of the whole page to a spare slot, then its header; a micro-log of the changed cache lines, then the
// lines in place; or, by default, whichever a cost model calibrated on this store at open predicts cheaper
// for the number of lines a write changes (`pmlab run primitives` measures the two on a machine).
//
// Threads: a lane is one writer's (lanes are 0 .. lanes()-1, set at create); writes through different
// lanes run in parallel on different pages. A page is written by one lane at a time, and read while
// nobody writes it.
#ifndef PMLAB_PAGE_STORE_HPP
#define PMLAB_PAGE_STORE_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <pmlab/error.hpp>

namespace pmlab {
inline namespace v0 {

// How writes persist (see above).
enum class PageFlush { cow = 1, ulog = 2, hybrid = 3 };

// Options of PageStore::create.
struct PageStoreOptions {
  uint32_t page_size = 16384;  // 4 KiB to 64 KiB, a power of two
  uint64_t pages = 0;          // pages 0 .. pages-1, each zero-filled at create; 0 is refused
  unsigned lanes = 1;          // concurrent writers, each with a spare slot and a micro-log of its own
};

// Counts of what opening the store repaired.
struct PageStoreRecovery {
  uint64_t stale_slots = 0;     // older page versions copy-on-write left behind, reclaimed
  uint64_t ulogs_replayed = 0;  // micro-log records applied again (their write may not have reached the page)
  uint64_t ulogs_torn = 0;      // records a crash cut, which never took effect
};

// An open page store: its pool mapped and locked until it is destroyed. Movable, not copyable.
class PageStore {
 public:
  // Creates `path` (never overwriting it) sized for `options`, every page zero-filled at version 1.
  static PageStore create(const std::string& path, const PageStoreOptions& options,
                          PageFlush flush = PageFlush::hybrid);
  // Opens `path` and recovers it: every page is then one whole version.
  static PageStore open(const std::string& path, PageFlush flush = PageFlush::hybrid);
  PageStore(PageStore&&) noexcept;
  PageStore& operator=(PageStore&&) noexcept;
  ~PageStore();

  // What the store was made with, and the flush this open chose.
  uint32_t page_size() const;
  uint64_t pages() const;
  unsigned lanes() const;
  PageFlush flush() const;
  // What open() repaired (all zero after create).
  PageStoreRecovery recovery() const;

  // Copies page `page`'s durable content (page_size() bytes) into `out`.
  void read(uint64_t page, void* out) const;
  // The number of writes that changed page `page` since create, plus 1.
  uint64_t version(uint64_t page) const;
  // Makes `data` (page_size() bytes) page `page`'s content, failure-atomically and durably once it
  // returns. Only the cache lines that differ from the page's content are written (none: nothing is).
  void write(unsigned lane, uint64_t page, const void* data);
  // As write(), for `size` bytes at `offset` in the page, the rest of the page as it was.
  void update(unsigned lane, uint64_t page, size_t offset, const void* data, size_t size);

  struct Impl;

 private:
  explicit PageStore(std::unique_ptr<Impl> impl) noexcept;
  Impl& self() const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace v0
}  // namespace pmlab

#endif  // PMLAB_PAGE_STORE_HPP
