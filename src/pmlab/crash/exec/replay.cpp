#include "pmlab/crash/exec/replay.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>

namespace pmlab::crash::exec {
namespace {

constexpr size_t kPage = trace::kPageBytes;
size_t page_up(uint64_t n) { return static_cast<size_t>((n + kPage - 1) / kPage * kPage); }

}  // namespace

Replay::Replay(const TraceFile& trace, persist::Domain domain) : trace_(trace), domain_(domain) {
  // Files in the order the run first mapped them, each as large as it was when mapped or as far as the run
  // gave it content (a program may grow a file it mapped past its end). A mapping's extent past that is no
  // part of the file: PMDK maps a poolset's first part over the whole pool, then the other parts over its
  // tail. A device has no size: its mappings' extent is its image. A file written with write(2) is as long
  // as the writes made it.
  for (const auto& [id, r] : trace.regions()) {
    auto it = std::find_if(files_.begin(), files_.end(),
                           [&](const ImageFile& f) { return f.device == r.device && f.inode == r.inode; });
    if (it == files_.end()) {
      files_.push_back({r.path, r.device, r.inode, 0, 0});
      it = files_.end() - 1;
    }
    const uint64_t extent =
        r.file_size > 0 || r.written ? std::max(r.file_size, r.file_offset + r.content_end) : r.file_offset + r.length;
    it->size = std::max(it->size, page_up(extent));
    it->length = std::max<size_t>(it->length, static_cast<size_t>(extent));
  }
  for (ImageFile& f : files_) {
    f.base = image_bytes_;
    image_bytes_ += f.size;
  }
  for (const auto& [id, r] : trace.regions()) {
    const auto it = std::find_if(files_.begin(), files_.end(),
                                 [&](const ImageFile& f) { return f.device == r.device && f.inode == r.inode; });
    places_[id] = {static_cast<size_t>(it - files_.begin()), it->base + r.file_offset, r.length};
  }
}

size_t Replay::file_end(uint32_t region) const {
  const ImageFile& f = files_[places_.at(region).file];
  return f.base + f.size;
}

std::string Replay::where(size_t offset) const {
  for (const ImageFile& f : files_) {
    if (offset < f.base || offset >= f.base + f.size) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "+0x%zx", offset - f.base);
    return std::filesystem::path(f.path).filename().string() + buf;
  }
  return "?";
}

// A page's content at its first mapping is the run's starting point, durable from the first crash point on,
// also where the run maps or writes its file only later (nothing the trace misses changed it before); a
// later mapping of a page already seen brings the run's own stores, not a starting point.
struct Replay::FirstMappings {
  std::vector<bool> seen;                       // image page -> mapped before
  std::map<uint32_t, std::vector<bool>> fresh;  // region -> its pages that no earlier mapping covered
};

Status Replay::run(const std::function<Status(const CrashPointInfo&, const LineModel&)>& at_point) {
  LineModel model(domain_);
  PMLAB_TRY(model.resize(image_bytes_));
  findings_ = {};
  FirstMappings first{std::vector<bool>(image_bytes_ / kPage, false), {}};
  PMLAB_TRY(trace_.replay([&](const TraceRecord& rec) -> Status {
    if (rec.kind == trace::Kind::region) map_region(rec, first);
    else if (rec.kind == trace::Kind::base_page) set_base_page(rec, first, model);
    return {};
  }));
  uint64_t points = 0;
  trace::OperationCounts ops;
  Presence files = initial_presence();
  const Status replayed = trace_.replay([&](const TraceRecord& rec) -> Status {
    switch (rec.kind) {
      case trace::Kind::region: file_seen(rec.as<trace::RegionRecord>().id, files); break;
      case trace::Kind::gone: file_gone(rec, files); break;
      case trace::Kind::line: {
        const auto r = rec.as<trace::LineRecord>();
        const size_t at = places_.at(r.region).base + r.offset;
        if (at + kLineBytes > file_end(r.region)) break;  // past the end of the file: no byte of it persists
        LineBytes now;
        std::memcpy(now.data(), r.bytes, kLineBytes);
        model.store(at / kLineBytes, now, rec.flags == static_cast<uint8_t>(trace::LineHow::non_temporal), 0);
        break;
      }
      case trace::Kind::writeback: write_back(rec, model); break;
      case trace::Kind::fence: {
        const auto r = rec.as<trace::FenceRecord>();
        if (!model.fence_orders(rec.thread)) ++findings_.empty_fences[r.site];
        const CrashPointInfo point{++points, false,         rec.thread,
                                   r.site,   r.stack,       static_cast<trace::FenceCall>(rec.flags),
                                   ops,      files.present, files.names};
        if (Status s = at_point(point, model); !s) return s;
        model.fence(rec.thread, r.stack);
        break;
      }
      case trace::Kind::exit: {
        const CrashPointInfo point{++points, true,          rec.thread, 0, 0, trace::FenceCall::fence,
                                   ops,      files.present, files.names};
        if (domain_ == persist::Domain::adr)
          for (size_t line : model.never_written_back())
            findings_.unflushed_at_exit.emplace_back(line * kLineBytes, *model.origin(line));
        if (Status s = at_point(point, model); !s) return s;
        break;
      }
      case trace::Kind::operation:
        ++(rec.flags == static_cast<uint8_t>(trace::OperationMark::end) ? ops.ended : ops.begun);
        break;
      case trace::Kind::base_page:  // the starting point is in the model already (above)
      case trace::Kind::stack:
      case trace::Kind::module:
      case trace::Kind::unmap:
      case trace::Kind::note: break;
    }
    return {};
  });
  content_pages_ = model.content_pages();
  return replayed;
}

Replay::Presence Replay::initial_presence() const {
  Presence p{std::vector<bool>(files_.size(), false), std::vector<bool>(files_.size(), false), {}, {}};
  for (const ImageFile& f : files_) {
    p.paths.push_back(f.path);
    p.names.push_back(std::filesystem::path(f.path).filename().string());
  }
  // A file empty when the run first mapped or wrote it is taken as one the run made then.
  std::vector<bool> empty_at_first(files_.size(), false), seen(files_.size(), false);
  for (const auto& [id, r] : trace_.regions()) {
    const size_t f = places_.at(id).file;
    if (!seen[f]) empty_at_first[f] = r.file_size == 0;
    seen[f] = true;
  }
  for (size_t f = 0; f < files_.size(); ++f)
    p.present[f] = !empty_at_first[f] && std::none_of(files_.begin(), files_.begin() + static_cast<std::ptrdiff_t>(f),
                                                      [&](const ImageFile& e) { return e.path == files_[f].path; });
  return p;
}

// A file the run maps or writes for the first time replaced whatever was at its path before.
namespace {
// File `f` is now at its path in `files`: any other file there is not.
void takes_path(std::vector<bool>& present, const std::vector<std::string>& paths, size_t f) {
  for (size_t g = 0; g < paths.size(); ++g)
    if (g != f && paths[g] == paths[f]) present[g] = false;
  present[f] = true;
}
}  // namespace

void Replay::file_seen(uint32_t region, Presence& files) const {
  const size_t f = places_.at(region).file;
  if (!files.present[f] && !files.gone[f]) takes_path(files.present, files.paths, f);
}

void Replay::file_gone(const TraceRecord& rec, Presence& files) const {
  const auto r = rec.as<trace::GoneRecord>();
  const std::string moved_to(reinterpret_cast<const char*>(rec.after(sizeof r)), r.path_bytes);
  for (size_t f = 0; f < files_.size(); ++f) {
    if (files_[f].device != r.device || files_[f].inode != r.inode) continue;
    files.present[f] = false;
    files.gone[f] = moved_to.empty();
    if (moved_to.empty()) continue;
    files.paths[f] = moved_to;
    files.names[f] = std::filesystem::path(moved_to).filename().string();
    takes_path(files.present, files.paths, f);
  }
}

void Replay::map_region(const TraceRecord& rec, FirstMappings& first) const {
  const auto r = rec.as<trace::RegionRecord>();
  const RegionPlace& place = places_.at(r.id);
  std::vector<bool>& mine = first.fresh[r.id];
  // Up to the file's end: a mapping's extent past it is no page of this file.
  const size_t within = std::min(place.base + page_up(place.length), file_end(r.id));
  mine.assign(within > place.base ? (within - place.base) / kPage : 0, false);
  for (size_t p = 0; p < mine.size(); ++p) {
    const size_t page = place.base / kPage + p;
    if (page < first.seen.size() && !first.seen[page]) mine[p] = first.seen[page] = true;
  }
}

void Replay::set_base_page(const TraceRecord& rec, FirstMappings& first, LineModel& model) const {
  const auto r = rec.as<trace::BasePageRecord>();
  const RegionPlace& place = places_.at(r.region);
  const size_t page = r.offset / kPage;
  const auto& mine = first.fresh[r.region];
  if (page < mine.size() && mine[page]) {
    if (place.base + r.offset >= file_end(r.region)) return;
    const size_t n = std::min<size_t>(kPage, file_end(r.region) - (place.base + r.offset));
    std::byte content[kPage];
    trace::expand_base_page(r.lines, rec.after(sizeof(trace::BasePageRecord)), content);
    model.set_base(place.base + r.offset, content, n);
  }
}

void Replay::write_back(const TraceRecord& rec, LineModel& model) {
  const auto r = rec.as<trace::WritebackRecord>();
  if (r.region == trace::kNoRegion) {
    ++findings_.non_pm_writebacks[r.site];
    return;
  }
  const size_t from = places_.at(r.region).base + r.offset;
  const size_t to = std::min(file_end(r.region), from + r.length);
  if (from >= to) return;
  ++findings_.writebacks;
  const size_t lines = (to - from + kLineBytes - 1) / kLineBytes;
  const size_t redundant = model.writeback(from / kLineBytes, lines, rec.thread, r.site);
  // The kernel writes back only the dirty pages of what a program syncs: the rest cost it nothing. And its
  // copy of a write(2) writes back what the write stored, no flush of the program's to call redundant.
  if (rec.flags == static_cast<uint8_t>(trace::WritebackKind::synced) || trace_.regions().at(r.region).written) {
    findings_.lines_written_back += lines - redundant;
    return;
  }
  findings_.lines_written_back += lines;
  if (redundant && domain_ == persist::Domain::adr) findings_.redundant_writebacks[r.site] += redundant;
}

}  // namespace pmlab::crash::exec
