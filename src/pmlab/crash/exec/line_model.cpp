#include "pmlab/crash/exec/line_model.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "pmlab/crash/enumerator.hpp"
#include "pmlab/crash/exec/trace_format.hpp"

namespace pmlab::crash::exec {
namespace {

constexpr size_t kPageBytes = trace::kPageBytes;

uint64_t word_at(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

Status LineModel::resize(size_t bytes) {
  if (bytes <= size_) return Status::success();
  auto grown = std::make_unique<media::AnonymousMapping>();
  PMLAB_TRY(grown->map(bytes, media::Pages::base, "for the durable image of the program's persistent files"));
  for (size_t page : content_pages_)  // every other page is zero, as a new mapping's are
    std::memcpy(grown->base() + page * kPageBytes, durable_->base() + page * kPageBytes,
                std::min<size_t>(kPageBytes, size_ - page * kPageBytes));
  durable_ = std::move(grown);
  size_ = bytes;
  has_content_.resize((bytes + kPageBytes - 1) / kPageBytes, false);
  return Status::success();
}

void LineModel::note_content(size_t offset, size_t n) {
  for (size_t page = offset / kPageBytes; page * kPageBytes < offset + n; ++page)
    if (!has_content_[page]) {
      has_content_[page] = true;
      content_pages_.push_back(page);
    }
}

void LineModel::set_base(size_t offset, const std::byte* bytes, size_t n) {
  std::byte* d = durable_->base();
  for (size_t b = 0; b + 8 <= n; b += 8) {
    const size_t w = (offset + b) / 8;
    durable_hash_ += word_hash_term(w, word_at(bytes + b)) - word_hash_term(w, word_at(d + offset + b));
  }
  std::memcpy(d + offset, bytes, n);
  note_content(offset, n);
}

void LineModel::discard(size_t offset, size_t n) {
  n = std::min(n, size_ - std::min(offset, size_));
  if (n == 0) return;
  const size_t end = offset + n;
  std::byte* d = durable_->base();
  auto zero_durable = [&](size_t page) {
    const size_t from = std::max(offset, page * kPageBytes), to = std::min(end, (page + 1) * kPageBytes);
    for (size_t w = from / 8; w * 8 < to; ++w) {
      const uint64_t old = word_at(d + w * 8);
      std::memset(d + std::max(from, w * 8), 0, std::min(to, w * 8 + 8) - std::max(from, w * 8));
      durable_hash_ += word_hash_term(w, word_at(d + w * 8)) - word_hash_term(w, old);
    }
  };
  const size_t first_page = offset / kPageBytes, pages = (end - 1) / kPageBytes - first_page + 1;
  if (pages > content_pages_.size()) {
    for (size_t page : content_pages_)
      if (page >= first_page && page - first_page < pages) zero_durable(page);
  } else {
    for (size_t page = first_page; page < first_page + pages; ++page)
      if (has_content_[page]) zero_durable(page);
  }
  // A line the range covers whole is durable zero; a line it covers in part keeps its other bytes pending.
  auto cut = [&](std::unordered_map<size_t, Line>::iterator it) {
    const size_t at = it->first * kLineBytes;
    if (offset <= at && at + kLineBytes <= end) return lines_.erase(it);
    const size_t from = std::max(offset, at) - at, to = std::min(end, at + kLineBytes) - at;
    for (LineBytes& value : it->second.history) std::fill(value.begin() + from, value.begin() + to, std::byte{0});
    return std::next(it);
  };
  const size_t first_line = offset / kLineBytes, lines = (end - 1) / kLineBytes - first_line + 1;
  if (lines > lines_.size()) {
    for (auto it = lines_.begin(); it != lines_.end();)
      it = it->first >= first_line && it->first - first_line < lines ? cut(it) : std::next(it);
  } else {
    for (size_t line = first_line; line < first_line + lines; ++line)
      if (auto it = lines_.find(line); it != lines_.end()) cut(it);
  }
}

void LineModel::make_durable(size_t line, const std::byte* content) {
  std::byte* d = durable_->base() + line * kLineBytes;
  for (size_t b = 0; b < kLineBytes; b += 8) {
    const size_t w = (line * kLineBytes + b) / 8;
    durable_hash_ += word_hash_term(w, word_at(content + b)) - word_hash_term(w, word_at(d + b));
  }
  std::memcpy(d, content, kLineBytes);
}

int LineModel::written_back_by(const Line& l, unsigned thread) const {
  for (const auto& [t, index] : l.written_back)
    if (t == thread) return index;
  return -1;
}

void LineModel::store(size_t line, const LineBytes& now, bool non_temporal, uint64_t site) {
  auto it = lines_.find(line);
  const std::byte* current = it == lines_.end() || it->second.history.empty() ? durable_->base() + line * kLineBytes
                                                                              : it->second.history.back().data();
  uint64_t changed = 0;
  for (size_t i = 0; i < kLineBytes; ++i)
    if (now[i] != current[i]) changed |= uint64_t{1} << i;
  if (changed == 0) return;
  note_content(line * kLineBytes, kLineBytes);
  ++events_;
  if (it == lines_.end()) {
    it = lines_.emplace(line, Line{}).first;
    it->second.order = events_;
  }
  Line& l = it->second;
  if (!non_temporal) l.plain_bytes |= changed;
  l.history.push_back(now);
  // A line rewritten at every event between two fences would grow without bound: keep the newest values
  // and the written-back ones (what a fence will make durable).
  if (l.history.size() > 4 * kMaxLineValues) {
    size_t drop = 0;
    auto written = [&](size_t i) {
      return std::any_of(l.written_back.begin(), l.written_back.end(),
                         [&](const auto& wb) { return wb.second == static_cast<int>(i); });
    };
    while (written(drop)) ++drop;
    l.history.erase(l.history.begin() + static_cast<std::ptrdiff_t>(drop));
    for (auto& wb : l.written_back)
      if (wb.second > static_cast<int>(drop)) --wb.second;
    ++dropped_values_;
  }
  l.origin.stored_before_fence = 0;
  l.origin.stored_stack = 0;
  l.origin.stored_site = site;
  stored_since_fence_.push_back(line);
}

size_t LineModel::writeback(size_t first, size_t count, unsigned thread, uint64_t site) {
  // Whether line `l` (pending) had nothing new to write back for `thread`.
  auto write_back = [&](Line& l) {
    l.origin.written_back_site = site;
    l.origin.written_back_after_fence = fences_;
    const int latest = static_cast<int>(l.history.size()) - 1;
    auto mine =
        std::find_if(l.written_back.begin(), l.written_back.end(), [&](const auto& wb) { return wb.first == thread; });
    if (mine == l.written_back.end()) {
      l.written_back.emplace_back(thread, latest);
      return false;
    }
    const bool redundant = mine->second == latest;
    mine->second = latest;
    return redundant;
  };
  // A line that is not pending is durable as it is. A range wider than the pending lines (a file synced
  // whole) is walked through those lines, so it costs what is pending, not the file's size.
  size_t with_news = 0;
  if (count > lines_.size()) {
    for (auto& [line, l] : lines_)
      if (line >= first && line - first < count && !l.history.empty()) with_news += write_back(l) ? 0 : 1;
  } else {
    for (size_t line = first; line < first + count; ++line) {
      auto it = lines_.find(line);
      if (it != lines_.end() && !it->second.history.empty()) with_news += write_back(it->second) ? 0 : 1;
    }
  }
  return count - with_news;
}

bool LineModel::fence_orders(unsigned thread) const {
  if (domain_ == persist::Domain::eadr) return !lines_.empty();
  return std::any_of(lines_.begin(), lines_.end(),
                     [&](const auto& entry) { return written_back_by(entry.second, thread) >= 0; });
}

void LineModel::fence(unsigned thread, uint32_t stack) {
  ++fences_;
  for (size_t line : stored_since_fence_) {
    auto it = lines_.find(line);
    if (it != lines_.end() && it->second.origin.stored_before_fence == 0) {
      it->second.origin.stored_before_fence = fences_;
      it->second.origin.stored_stack = stack;
    }
  }
  stored_since_fence_.clear();
  for (auto it = lines_.begin(); it != lines_.end();) {
    Line& l = it->second;
    if (domain_ == persist::Domain::eadr) {
      // The caches are durable: every store before the fence is.
      make_durable(it->first, l.history.back().data());
      it = lines_.erase(it);
      continue;
    }
    const int wb = written_back_by(l, thread);
    if (wb < 0) {
      ++it;
      continue;
    }
    make_durable(it->first, l.history[static_cast<size_t>(wb)].data());
    l.history.erase(l.history.begin(), l.history.begin() + wb + 1);
    // Another thread's write-back of an older content is overtaken by this one.
    std::vector<std::pair<unsigned, int>> kept;
    for (const auto& [t, index] : l.written_back)
      if (t != thread && index > wb) kept.emplace_back(t, index - (wb + 1));
    l.written_back = std::move(kept);
    if (l.history.empty()) it = lines_.erase(it);
    else ++it;
  }
}

std::vector<PendingLine> LineModel::pending() const {
  std::vector<size_t> order;
  order.reserve(lines_.size());
  for (const auto& entry : lines_) order.push_back(entry.first);
  std::sort(order.begin(), order.end());
  std::vector<PendingLine> out;
  for (size_t index : order) {
    const Line& line = lines_.at(index);
    LineBytes base{};
    std::memcpy(base.data(), durable_->base() + index * kLineBytes, kLineBytes);
    int newest = -1;
    for (const auto& wb : line.written_back) newest = std::max(newest, wb.second);
    PendingLine p = pending_line(index * kLineBytes, kLineBytes, line.order, line.plain_bytes, base,
                                 line.history.back(), line.history, newest);
    if (!p.values.empty()) out.push_back(std::move(p));
  }
  return out;
}

const LineOrigin* LineModel::origin(size_t line) const {
  auto it = lines_.find(line);
  return it == lines_.end() ? nullptr : &it->second.origin;
}

std::vector<size_t> LineModel::never_written_back() const {
  std::vector<size_t> out;
  for (const auto& [index, line] : lines_) {
    const int latest = static_cast<int>(line.history.size()) - 1;
    if (std::none_of(line.written_back.begin(), line.written_back.end(),
                     [&](const auto& wb) { return wb.second == latest; }))
      out.push_back(index);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace pmlab::crash::exec
