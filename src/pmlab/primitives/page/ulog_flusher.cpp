// Micro-log ([PMemIO] §3.2.2, Listing 1 right): the dirty lines go to the lane's micro-log, then in place
// together with the slot header's new version. Recovery applies a valid record again when its version is
// not older than its page's, so a crash during the in-place writes leaves the page wholly new, and a
// crash before the record is whole leaves it wholly old.
//
// The paper's protocol takes four barriers: invalidate the log, write it, validate it, write in place.
// Here a record validates itself the way a zero-log entry does (on_media.hpp: the bit count of a record
// written into a zeroed buffer), so writing it is one barrier, writing in place the second. Each lane
// has two buffers used alternately; after a flush its buffer is zeroed again with no barrier of its own:
// the lane's next flush's barriers make the zeros durable before the buffer is written again (two flushes
// later). Every line of a record is written whole with non-temporal stores: a record needs no atomic
// store, since a torn one cannot validate. A half-zeroed record has lost bits and no longer validates; it was
// applied already.
#include <bit>
#include <cstring>

#include "pmlab/primitives/log/popcount.hpp"
#include "pmlab/primitives/page/flusher.hpp"
#include "pmlab/primitives/page/on_media.hpp"

namespace pmlab::primitives::page {
namespace om = on_media;

namespace {

// Calls write(first_line, lines) for each run of adjacent dirty lines.
template <class Write>
void for_each_run(const DirtyLines& dirty, Write&& write) {
  uint32_t start = 0, length = 0;
  dirty.for_each([&](uint32_t line) {
    if (length > 0 && line == start + length) {
      ++length;
      return;
    }
    if (length > 0) write(start, length);
    start = line;
    length = 1;
  });
  if (length > 0) write(start, length);
}

}  // namespace

Status MicroLogFlusher::flush(PageStore::Lane& lane, DramPage& page) {
  const auto pvn = store_.begin_flush(lane, page);
  if (!pvn) return pvn.status();
  if (*pvn == 0) return Status::success();
  const persist::Persister& p = store_.persister();
  const auto g = om::UlogGeometry::for_page(page.size());

  // 1. The record, into a zeroed buffer: the lines, then the header and indices, staged here so that
  // every line of the record goes out whole and non-temporally (no line of it is read or flushed first).
  const uint32_t b = store_.ulog_next(lane);
  std::byte* buffer = store_.ulog_buffer(lane, b);
  const uint64_t count = page.dirty().count();
  const uint64_t metadata = om::UlogGeometry::metadata_bytes(count);
  alignas(64) std::byte staged[om::kMaxUlogMetadata];
  std::memset(staged, 0, metadata);
  auto* index = reinterpret_cast<uint16_t*>(staged + om::UlogGeometry::kIndexOffset);
  std::byte* lines = buffer + g.lines_offset;
  uint64_t k = 0, line_bits = 0;
  page.dirty().for_each([&](uint32_t line) {
    const std::byte* source = page.data() + line * om::kLine;
    index[k] = static_cast<uint16_t>(line);
    om::write_back(p, lines + k * om::kLine, source, om::kLine);
    line_bits += popcount_bytes(source, om::kLine);
    ++k;
  });
  om::UlogHeader header;
  header.commit = om::commit_word(page.pid, *pvn);
  header.count = count;
  header.check = static_cast<uint64_t>(std::popcount(header.commit) + std::popcount(header.count)) +
                 popcount_bytes(index, count * sizeof *index) + line_bits;
  std::memcpy(staged, &header, sizeof header);
  p.copy_nt(buffer, staged, metadata);
  p.fence();

  // 2. In place, with the slot header's version: a later record of this page outranks this one.
  const uint64_t slot = store_.slot_of(page.pid);
  std::byte* data = store_.slot_data(slot);
  for_each_run(page.dirty(), [&](uint32_t first, uint32_t n) {
    om::write_back(p, data + first * om::kLine, page.data() + first * om::kLine, n * om::kLine);
  });
  store_.write_header(slot, om::commit_word(page.pid, *pvn));
  p.fence();

  // 3. Recycle the buffer: zeros, durable by the lane's next barrier, needed two flushes from now. With
  // micro-logging alone a stale header is harmless (its version is outranked by the one written in place);
  // a page that copy-on-write has since moved (the hybrid policy) is not protected that way, and the
  // crash test of page.hybrid fails without the header's zeros.
  p.zero_nt(buffer, metadata);
  p.zero_nt(lines, count * om::kLine);

  store_.updated_in_place(page.pid, *pvn);
  store_.ulog_used(lane, b);
  page.clear_dirty();
  return Status::success();
}

}  // namespace pmlab::primitives::page
