#include "pmlab/crash/durability_tracker.hpp"

#include <algorithm>
#include <cstring>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/crash/call_sites.hpp"

namespace pmlab::crash {

namespace {
constexpr auto kGranularities = enum_names<Granularity>(
    "granularity", {{Granularity::line, "line"}, {Granularity::word, "word"}, {Granularity::byte, "byte"}});
}  // namespace

const char* to_string(Granularity g) noexcept { return kGranularities.name(g); }
Result<Granularity> parse_granularity(std::string_view text) { return kGranularities.parse(text); }

DurabilityTracker::DurabilityTracker(Image working, persist::Domain domain,
                                     std::function<void(const std::source_location&)> on_crash_point)
    : working_(working),
      domain_(domain),
      on_crash_point_(std::move(on_crash_point)),
      durable_(working.size),
      shadow_(working.size),
      lines_((working.size + kLineBytes - 1) / kLineBytes) {
  adopt_working_as_durable();
}

void DurabilityTracker::adopt_working_as_durable() {
  std::memcpy(durable_.data(), working_.base, working_.size);
  std::memcpy(shadow_.data(), working_.base, working_.size);
  for (LineState& l : lines_) reset(l);
}

void DurabilityTracker::reset(LineState& line) {
  line.history.clear();
  line.written_back.fill(-1);
  line.order = 0;
  line.plain_bytes = 0;
  line.active = false;
}

void DurabilityTracker::settle_dropped_effective() noexcept {
  if (sites_ != nullptr && (dropped_fence_ || !dropped_lines_.empty())) sites_->note_effective();
  dropped_fence_ = false;
  dropped_lines_.clear();
}

void DurabilityTracker::settle_dropped_inert(Inert reason) noexcept {
  if (sites_ != nullptr) sites_->note_inert(reason);
  dropped_fence_ = false;
  dropped_lines_.clear();
}

void DurabilityTracker::capture(const Attribution* a) noexcept {
  ++events_;
  const std::byte* now = working_.base;
  std::byte* seen = shadow_.data();
  for (size_t index = 0; index < lines_.size(); ++index) {
    const size_t off = index * kLineBytes;
    const size_t n = std::min(kLineBytes, working_.size - off);
    if (std::memcmp(now + off, seen + off, n) == 0) continue;
    uint64_t changed = 0;
    for (size_t i = 0; i < n; ++i)
      if (now[off + i] != seen[off + i]) changed |= uint64_t{1} << i;
    // The bytes the vocabulary's own store explains; every other change was a plain store.
    uint64_t explained = 0;
    if (a != nullptr) {
      const uintptr_t line_begin = reinterpret_cast<uintptr_t>(now + off);
      uintptr_t from = std::max(a->begin, line_begin), to = std::min(a->end, line_begin + n);
      // Non-temporal stores hold per aligned word only on whole lines; copy_nt's partial edge lines go
      // through the cache as plain stores.
      if (a->non_temporal && !(a->begin <= line_begin && a->end >= line_begin + n)) from = to;
      for (uintptr_t p = from; p < to; ++p) explained |= uint64_t{1} << (p - line_begin);
    }
    LineState& line = lines_[index];
    if (dropped_fence_ || std::find(dropped_lines_.begin(), dropped_lines_.end(), index) != dropped_lines_.end())
      settle_dropped_effective();
    if (!line.active) {
      line.active = true;
      line.order = events_;
    }
    line.plain_bytes |= changed & ~explained;
    LineBytes value{};
    std::memcpy(value.data(), now + off, n);
    line.history.push_back(value);
    // A line rewritten at every call between two fences would grow without bound: keep the newest values
    // and the written-back one.
    if (line.history.size() > 4 * kMaxLineValues) {
      // The oldest value no thread wrote back (values written back are what a fence will make durable).
      size_t drop = 0;
      while (std::find(line.written_back.begin(), line.written_back.end(), static_cast<int>(drop)) !=
             line.written_back.end())
        ++drop;
      line.history.erase(line.history.begin() + static_cast<std::ptrdiff_t>(drop));
      for (int& wb : line.written_back)
        if (wb > static_cast<int>(drop)) --wb;
      ++dropped_values_;
    }
    std::memcpy(seen + off, now + off, n);
  }
}

void DurabilityTracker::on_writeback(const void* addr, size_t len, persist::Writeback kind,
                                     const std::source_location&) noexcept {
  handover();
  const auto begin = reinterpret_cast<uintptr_t>(addr);
  const auto base = reinterpret_cast<uintptr_t>(working_.base);
  if (kind == persist::Writeback::nt_store) {
    const Attribution a{begin, begin + len, true};
    capture(&a);
  } else {
    capture(nullptr);
  }
  if (begin + len <= base || begin >= base + working_.size) return;  // outside the region under test
  const size_t from = begin > base ? begin - base : 0;
  const size_t to = std::min(working_.size, begin + len - base);
  if (dropped_fence_) settle_dropped_effective();
  for (size_t off = from & ~(kLineBytes - 1); off < to; off += kLineBytes) {
    LineState& line = lines_[off / kLineBytes];
    if (line.active) line.written_back[Interleaving::current()] = static_cast<int>(line.history.size()) - 1;
    // Written back unchanged: the dropped flush is made up for (once every line it covered is).
    if (std::erase(dropped_lines_, off / kLineBytes) > 0 && dropped_lines_.empty())
      settle_dropped_inert(Inert::written_back_again);
  }
}

void DurabilityTracker::before_store(const void*, size_t, const std::source_location&) noexcept {
  handover();
  capture(nullptr);
}

void DurabilityTracker::after_atomic_store(const void* addr, size_t size, const std::source_location&) noexcept {
  const auto begin = reinterpret_cast<uintptr_t>(addr);
  const Attribution a{begin, begin + size, false};
  capture(&a);
}

void DurabilityTracker::on_volatile(const void* addr, size_t len) noexcept {
  const auto begin = reinterpret_cast<uintptr_t>(addr), base = reinterpret_cast<uintptr_t>(working_.base);
  if (begin + len <= base || begin >= base + working_.size) return;
  const size_t from = begin > base ? begin - base : 0, to = std::min(working_.size, begin + len - base);
  for (size_t b = from; b < to; ++b) lines_[b / kLineBytes].volatile_bytes |= uint64_t{1} << (b % kLineBytes);
}

persist::Mutation DurabilityTracker::mutation(persist::Call call, const void* addr, size_t len,
                                              const std::source_location& where) noexcept {
  if (sites_ == nullptr) return persist::Mutation::none;
  const persist::Mutation m = sites_->on_call(call, where);
  if (m != persist::Mutation::none && interleaving_ != nullptr) interleaving_->hot_call();
  if (m != persist::Mutation::drop) return m;
  // Did dropping it change what a crash can leave? Settled at once where that is known, else later.
  capture(nullptr);
  if (call == persist::Call::nt_store) {
    sites_->note_effective();
  } else if (call == persist::Call::fence) {
    bool pending = false;
    const unsigned me = Interleaving::current();
    for (const LineState& l : lines_)
      pending = pending || (domain_ == persist::Domain::eadr ? l.active : l.written_back[me] >= 0);
    if (!pending) sites_->note_inert(Inert::nothing_to_order);
    else dropped_fence_ = true;
  } else if (call == persist::Call::flush) {
    const auto begin = reinterpret_cast<uintptr_t>(addr), base = reinterpret_cast<uintptr_t>(working_.base);
    bool any = false;
    if (begin + len > base && begin < base + working_.size) {
      const size_t from = begin > base ? begin - base : 0, to = std::min(working_.size, begin + len - base);
      for (size_t off = from & ~(kLineBytes - 1); off < to; off += kLineBytes)
        if (lines_[off / kLineBytes].active) {
          dropped_lines_.push_back(off / kLineBytes);
          any = true;
        }
    }
    if (!any) sites_->note_inert(Inert::nothing_to_write_back);
  }
  return m;
}

void DurabilityTracker::after_split_store(const void* addr, uint64_t before, uint64_t after,
                                          const std::source_location&) noexcept {
  if (sites_ == nullptr) return;
  // Bytes declared volatile are never explored: how they were written makes no difference.
  uint64_t changed = before ^ after;
  const auto at = reinterpret_cast<uintptr_t>(addr), base = reinterpret_cast<uintptr_t>(working_.base);
  if (at >= base && at + 8 <= base + working_.size) {
    const size_t off = at - base;
    const uint64_t volatile_bytes = (lines_[off / kLineBytes].volatile_bytes >> (off % kLineBytes)) & 0xff;
    if (volatile_bytes == 0xff) {  // rewriting a value it held is no less a store to a volatile word
      sites_->note_inert(Inert::volatile_word);
      return;
    }
    for (unsigned b = 0; b < 8; ++b)
      if ((volatile_bytes >> b) & 1) changed &= ~(uint64_t{0xff} << (8 * b));
  }
  // Both halves changed: the word between the two stores is a state the whole store never makes, at any
  // granularity. In byte granularity the halves are plain stores whose bytes tear, so two changed bytes
  // in one half are enough.
  const bool torn_halves = (changed & 0xffffffffu) != 0 && (changed >> 32) != 0;
  const bool torn_bytes = granularity_ == Granularity::byte && changed_bytes(changed) > 1;
  if (torn_halves || torn_bytes) sites_->note_effective();
  else if (changed == 0 && before != after) sites_->note_inert(Inert::volatile_word);
  else sites_->note_inert(split_store_inert(before, after));
}

void DurabilityTracker::on_fence(const std::source_location& where) noexcept {
  handover();
  durability_point(where);
}

void DurabilityTracker::after_locked_rmw(const std::source_location& where) noexcept {
  if (domain_ == persist::Domain::eadr) durability_point(where);  // under ADR only a fence makes write-backs durable
}

void DurabilityTracker::durability_point(const std::source_location& where) noexcept {
  capture(nullptr);
  // A dropped fence with nothing stored since changed nothing; a dropped flush whose lines were not
  // written back since leaves them undurable.
  if (dropped_fence_) settle_dropped_inert(Inert::nothing_to_order);
  else if (!dropped_lines_.empty()) settle_dropped_effective();
  ++fences_;
  if (on_crash_point_) on_crash_point_(where);
  commit(Interleaving::current());
}

void DurabilityTracker::commit(unsigned thread) {
  for (size_t index = 0; index < lines_.size(); ++index) {
    LineState& line = lines_[index];
    if (!line.active) continue;
    const size_t off = index * kLineBytes;
    const size_t n = std::min(kLineBytes, working_.size - off);
    if (domain_ == persist::Domain::eadr) {
      // The caches are durable: the fence makes every earlier store durable.
      std::memcpy(durable_.data() + off, shadow_.data() + off, n);
      reset(line);
    } else if (line.written_back[thread] >= 0) {
      const int wb = line.written_back[thread];
      std::memcpy(durable_.data() + off, line.history[static_cast<size_t>(wb)].data(), n);
      line.history.erase(line.history.begin(), line.history.begin() + wb + 1);
      // Another thread's write-back of an older content is overtaken by this one.
      for (int& other : line.written_back) other = other > wb ? other - (wb + 1) : -1;
      if (line.history.empty()) reset(line);
    }
  }
}

PendingLine pending_line(size_t offset, size_t size, uint64_t order, uint64_t plain_bytes, const LineBytes& durable,
                         const LineBytes& now, const std::vector<LineBytes>& history, int written_back) {
  auto same = [size](const LineBytes& a, const LineBytes& b) { return std::memcmp(a.data(), b.data(), size) == 0; };
  const LineBytes written = written_back >= 0 ? history[static_cast<size_t>(written_back)] : durable;
  // Each value once, newest first; the written-back value is kept even when older values are cut.
  std::vector<LineBytes> values;
  for (size_t h = history.size(); h-- > 0;) {
    const LineBytes& v = history[h];
    if (same(v, durable) || std::any_of(values.begin(), values.end(), [&](const LineBytes& w) { return same(v, w); }))
      continue;
    values.push_back(v);
  }
  if (values.size() > kMaxLineValues) {
    const auto wb = std::find_if(values.begin(), values.end(), [&](const LineBytes& v) { return same(v, written); });
    if (wb != values.end() && wb - values.begin() >= static_cast<std::ptrdiff_t>(kMaxLineValues))
      values[kMaxLineValues - 1] = *wb;
    values.resize(kMaxLineValues);
  }
  std::reverse(values.begin(), values.end());
  PendingLine p;
  p.offset = offset;
  p.size = size;
  p.order = order;
  p.plain_bytes = plain_bytes;
  p.values = std::move(values);
  for (size_t i = 0; i < p.values.size(); ++i) {
    if (same(p.values[i], now)) p.latest = static_cast<int>(i);
    if (written_back >= 0 && same(p.values[i], written)) p.written_back = static_cast<int>(i);
  }
  return p;
}

std::vector<PendingLine> DurabilityTracker::pending() const {
  std::vector<PendingLine> out;
  for (size_t index = 0; index < lines_.size(); ++index) {
    const LineState& line = lines_[index];
    if (!line.active) continue;
    const size_t off = index * kLineBytes;
    const size_t n = std::min(kLineBytes, working_.size - off);
    const std::byte* durable = durable_.data() + off;
    // Bytes declared volatile keep their durable content in every crash state: only the rest is explored.
    auto masked = [&](const std::byte* v) {
      LineBytes m{};
      for (size_t i = 0; i < n; ++i) m[i] = (line.volatile_bytes >> i) & 1 ? durable[i] : v[i];
      return m;
    };
    std::vector<LineBytes> history;
    history.reserve(line.history.size());
    for (const LineBytes& v : line.history) history.push_back(line.volatile_bytes ? masked(v.data()) : v);
    // The newest content any thread wrote back: the one a prefix of fences would make durable last.
    const int newest = *std::max_element(line.written_back.begin(), line.written_back.end());
    PendingLine p = pending_line(off, n, line.order, line.plain_bytes & ~line.volatile_bytes, masked(durable),
                                 masked(shadow_.data() + off), history, newest);
    if (!p.values.empty()) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace pmlab::crash
