#include "pmlab/crash/durability_tracker.hpp"

#include <algorithm>
#include <cstring>

namespace pmlab::crash {

namespace {
constexpr size_t kLine = 64;
constexpr size_t kWord = 8;
}  // namespace

const char* to_string(Granularity g) noexcept { return g == Granularity::line ? "line" : "word"; }

DurabilityTracker::DurabilityTracker(Image working, persist::Domain domain,
                                     std::function<void(const std::source_location&)> on_crash_point)
    : working_(working), domain_(domain), on_crash_point_(std::move(on_crash_point)), durable_(working.size) {
  adopt_working_as_durable();
}

void DurabilityTracker::adopt_working_as_durable() {
  std::memcpy(durable_.data(), working_.base, working_.size);
  written_back_.clear();
}

void DurabilityTracker::on_writeback(const void* addr, size_t len, persist::Writeback) noexcept {
  const auto begin = reinterpret_cast<uintptr_t>(addr);
  const auto base = reinterpret_cast<uintptr_t>(working_.base);
  if (begin + len <= base || begin >= base + working_.size) return;  // outside the region under test
  size_t from = begin > base ? begin - base : 0;
  size_t to = std::min(working_.size, begin + len - base);
  for (size_t line = from & ~(kLine - 1); line < to; line += kLine) {
    const size_t n = std::min(kLine, working_.size - line);
    auto& snap = written_back_[line];
    snap.assign(working_.base + line, working_.base + line + n);
  }
}

void DurabilityTracker::on_fence() noexcept { on_fence_at(std::source_location::current()); }

void DurabilityTracker::on_fence_at(const std::source_location& where) noexcept {
  ++fences_;
  if (on_crash_point_) on_crash_point_(where);
  commit();
}

void DurabilityTracker::commit() {
  if (domain_ == persist::Domain::eadr) {
    // The caches are durable: the fence makes every earlier store durable.
    std::memcpy(durable_.data(), working_.base, working_.size);
  } else if (domain_ == persist::Domain::adr) {
    for (const auto& [line, snap] : written_back_) std::memcpy(durable_.data() + line, snap.data(), snap.size());
  }
  written_back_.clear();
}

std::vector<PendingUnit> DurabilityTracker::pending(Granularity g) const {
  std::vector<PendingUnit> out;
  const size_t unit = g == Granularity::line ? kLine : kWord;
  for (size_t line = 0; line < working_.size; line += kLine) {
    const size_t line_len = std::min(kLine, working_.size - line);
    auto wb = written_back_.find(line);
    const std::byte* latest = working_.base + line;
    const std::byte* durable = durable_.data() + line;
    const bool changed = std::memcmp(latest, durable, line_len) != 0;
    if (!changed && wb == written_back_.end()) continue;
    for (size_t off = line; off < line + line_len; off += unit) {
      const size_t n = std::min(unit, line + line_len - off);
      PendingUnit u;
      u.offset = off;
      u.size = n;
      u.written_back = wb != written_back_.end();
      const std::byte* d = durable_.data() + off;
      if (u.written_back) {
        const std::byte* s = wb->second.data() + (off - line);
        if (std::memcmp(s, d, n) != 0) u.candidates.emplace_back(s, s + n);
      }
      const std::byte* w = working_.base + off;
      if (std::memcmp(w, d, n) != 0 &&
          (u.candidates.empty() || std::memcmp(u.candidates.back().data(), w, n) != 0))
        u.candidates.emplace_back(w, w + n);
      if (!u.candidates.empty()) out.push_back(std::move(u));
    }
  }
  return out;
}

}  // namespace pmlab::crash
