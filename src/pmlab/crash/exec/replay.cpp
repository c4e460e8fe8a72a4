#include "pmlab/crash/exec/replay.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>

#include "pmlab/common/random.hpp"

namespace pmlab::crash::exec {
namespace {

constexpr size_t kPage = trace::kPageBytes;
size_t page_up(uint64_t n) { return static_cast<size_t>((n + kPage - 1) / kPage * kPage); }

// How long a region's record shows its file to be: its size then, or a device's mapped extent (a device has
// no size).
uint64_t declared_extent(const TraceRegion& r) {
  return r.file_size > 0 || r.written ? r.file_size : r.file_offset + r.length;
}

}  // namespace

Replay::Replay(const TraceFile& trace, persist::Domain domain, MetadataDurability metadata)
    : trace_(trace), domain_(domain), metadata_(metadata) {
  // Files in the order the run first mapped them, each as large as it was when mapped, as far as the run
  // gave it content (a program may grow a file it mapped past its end) or as long as it was resized to. A
  // mapping's extent past that is no part of the file: PMDK maps a poolset's first part over the whole
  // pool, then the other parts over its tail. A device has no size: its mappings' extent is its image. A
  // file written with write(2) is as long as the writes made it.
  for (const auto& [id, r] : trace.regions()) {
    auto it = std::find_if(files_.begin(), files_.end(),
                           [&](const ImageFile& f) { return f.device == r.device && f.inode == r.inode; });
    if (it == files_.end()) {
      files_.push_back({r.path, r.device, r.inode, 0, 0});
      it = files_.end() - 1;
    }
    it->size = std::max(it->size, page_up(std::max(declared_extent(r), r.file_offset + r.content_end)));
  }
  for (ImageFile& f : files_) {
    if (auto resized = trace.longest_resize().find({f.device, f.inode}); resized != trace.longest_resize().end())
      f.size = std::max(f.size, page_up(resized->second));
    f.base = image_bytes_;
    image_bytes_ += f.size;
  }
  for (const auto& [path, there] : trace.directories()) files_.push_back({path, 0, 0, image_bytes_, 0, true});
  for (const auto& [id, r] : trace.regions()) {
    const auto it = std::find_if(files_.begin(), files_.end(),
                                 [&](const ImageFile& f) { return f.device == r.device && f.inode == r.inode; });
    places_[id] = {static_cast<size_t>(it - files_.begin()), it->base + r.file_offset, r.length, r.file_offset,
                   r.written};
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
    return (f.path.empty() ? std::string("(a file with no name)") : std::filesystem::path(f.path).filename().string()) +
           buf;
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

Status Replay::run(const AtPoint& at_point, const std::function<bool(uint64_t)>& wants_files) {
  LineModel model(domain_);
  PMLAB_TRY(model.resize(image_bytes_));
  findings_ = {};
  FirstMappings first{std::vector<bool>(image_bytes_ / kPage, false), {}};
  PMLAB_TRY(trace_.replay([&](const TraceRecord& rec) -> Status {
    if (rec.kind == trace::Kind::region) map_region(rec, first);
    else if (rec.kind == trace::Kind::base_page) set_base_page(rec, first, model);
    return {};
  }));
  Walk walk{0, {}, initial_presence()};
  Presence& files = walk.files;
  files.latest = files.files;
  files.durable = files.files;
  files.latest_paths = files.paths;
  files.latest_link_paths = files.link_paths;
  const Status replayed = trace_.replay([&](const TraceRecord& rec) -> Status {
    switch (rec.kind) {
      case trace::Kind::region: file_seen(rec.as<trace::RegionRecord>().id, files); break;
      case trace::Kind::gone:
        file_gone(rec, files);
        // A file a rename replaced, or swapped with: one change with the rename's own record, which follows.
        if ((rec.flags == static_cast<uint8_t>(trace::GoneCall::rename) &&
             rec.as<trace::GoneRecord>().path_bytes == 0) ||
            rec.flags == static_cast<uint8_t>(trace::GoneCall::exchange))
          return {};
        break;
      case trace::Kind::resize: file_resized(rec, files, model); break;
      case trace::Kind::synced: {
        const auto r = rec.as<trace::SyncedRecord>();
        files.sync_target = {static_cast<trace::SyncScope>(rec.flags), r.device, r.inode,
                             std::string(reinterpret_cast<const char*>(rec.after(sizeof r)), r.path_bytes)};
        break;
      }
      case trace::Kind::line: {
        const auto r = rec.as<trace::LineRecord>();
        const RegionPlace& place = places_.at(r.region);
        const size_t at = place.base + r.offset;
        const ImageFile& file = files_[place.file];
        if (at + kLineBytes > file.base + file.size) break;  // past the end of the file: no byte of it persists
        file_reached(place, reach_of(rec.kind, rec.flags, rec.payload), files);
        LineBytes now;
        std::memcpy(now.data(), r.bytes, kLineBytes);
        model.store(at / kLineBytes, now, rec.flags == static_cast<uint8_t>(trace::LineHow::non_temporal), 0);
        break;
      }
      case trace::Kind::writeback:
        file_reached(rec, files);
        write_back(rec, model);
        break;
      case trace::Kind::base_page: file_reached(rec, files); break;  // its content is in the model already
      case trace::Kind::fence:
      case trace::Kind::exit: count_change(files); return crash_point(rec, walk, model, at_point, wants_files);
      case trace::Kind::operation:
        ++(rec.flags == static_cast<uint8_t>(trace::OperationMark::end) ? walk.ops.ended : walk.ops.begun);
        break;
      case trace::Kind::directory: directory_changed(rec, files); break;
      case trace::Kind::stack:
      case trace::Kind::module:
      case trace::Kind::unmap:
      case trace::Kind::note: break;
    }
    count_change(files);
    return {};
  });
  content_pages_ = model.content_pages();
  findings_.changes_taken_as_durable = walk.files.taken_as_durable;
  return replayed;
}

void Replay::count_change(Presence& files) const {
  if (!files.changed) return;
  files.changed = false;
  ++files.changes_since_sync;
  if (metadata_ == MetadataDurability::at_own_sync) add_not_durable(files);
  if (metadata_ != MetadataDurability::at_sync) return;
  files.unsynced.push_back({files.changes_since_sync - 1, std::move(files.latest)});
  files.latest = files.files;
  // A program that changes its files thousands of times between syncs (appends without syncing) would
  // hold as many copies of them: the last sync's and the latest are kept.
  if (files.unsynced.size() > kMaxUnsynced) files.unsynced.erase(files.unsynced.begin() + 1);
}

Status Replay::crash_point(const TraceRecord& rec, Walk& walk, LineModel& model, const AtPoint& at_point,
                           const std::function<bool(uint64_t)>& wants_files) {
  Presence& files = walk.files;
  const bool at_exit = rec.kind == trace::Kind::exit;
  const auto r = at_exit ? trace::FenceRecord{} : rec.as<trace::FenceRecord>();
  const auto call = at_exit ? trace::FenceCall::fence : static_cast<trace::FenceCall>(rec.flags);
  const bool sync = call != trace::FenceCall::fence,
             data = call != trace::FenceCall::directory_sync && call != trace::FenceCall::other_file_sync;
  // A sync after a change of the files orders it, even where the model takes it as durable at once (a real
  // file system needs that sync), so that sync is no empty fence. Where changes are durable at their calls,
  // a directory's sync, or another file's, makes nothing more durable: no crash point.
  if (!data && metadata_ == MetadataDurability::at_call) {
    files.changes_since_sync = 0;
    return {};
  }
  const uint64_t index = ++walk.points;
  if (metadata_ == MetadataDurability::at_own_sync) list_not_durable(files, !wants_files || wants_files(index));
  if (!at_exit && data && !model.fence_orders(rec.thread) && !(sync && files.changes_since_sync > 0))
    ++findings_.empty_fences[r.site];
  if (at_exit && domain_ == persist::Domain::adr)
    for (size_t line : model.never_written_back())
      findings_.unflushed_at_exit.emplace_back(line * kLineBytes, *model.origin(line));
  // The point holds the files while `at_point` sees them, not a copy: thousands of files at thousands of
  // points would be copied millions of times.
  CrashPointInfo point{index,
                       at_exit,
                       rec.thread,
                       r.site,
                       r.stack,
                       call,
                       walk.ops,
                       std::move(files.files),
                       std::move(files.unsynced),
                       files.changes_since_sync,
                       std::move(files.cuts)};
  const Status seen = at_point(point, model);
  files.files = std::move(point.files);
  files.unsynced = std::move(point.unsynced);
  files.cuts = std::move(point.cuts);
  PMLAB_TRY(seen);
  if (sync && metadata_ == MetadataDurability::at_own_sync) {
    make_durable(files, files.sync_target);
  } else if (sync) {
    files.changes_since_sync = 0;
    files.unsynced.clear();
    files.cuts.clear();
  }
  files.sync_target = {};
  if (!at_exit && data) model.fence(rec.thread, r.stack);
  return {};
}

Replay::Presence Replay::initial_presence() const {
  Presence p;
  p.files.resize(files_.size());
  p.gone.assign(files_.size(), false);
  for (size_t f = 0; f < files_.size(); ++f) {
    p.paths.push_back(files_[f].path);
    p.files[f].name = trace_.image_name(files_[f].path);
  }
  p.link_paths.assign(files_.size(), {});
  for (size_t d = 0; d < trace_.directories().size(); ++d)
    p.files[files_.size() - trace_.directories().size() + d].present = trace_.directories()[d].second;
  // A file empty when the run first mapped or wrote it is taken as one the run made then; one that was not
  // is as long as it was then.
  std::vector<bool> seen(files_.size(), false);
  for (const auto& [id, r] : trace_.regions()) {
    const size_t f = places_.at(id).file;
    if (seen[f]) continue;
    seen[f] = true;
    // One without a name is in no crash image until a link names it.
    p.gone[f] = r.nameless;
    p.files[f].present = !r.nameless && r.file_size != 0 &&
                         std::none_of(files_.begin(), files_.begin() + static_cast<std::ptrdiff_t>(f),
                                      [&](const ImageFile& e) { return e.path == files_[f].path; });
    // So is one without a name yet that was not empty (renamed in from outside), once it is named.
    if (r.file_size != 0 && (p.files[f].present || r.nameless))
      p.files[f].length = std::min<size_t>(declared_extent(r), files_[f].size);
  }
  return p;
}

// A file the run maps or writes for the first time replaced whatever was at its path before.
void Replay::file_seen(uint32_t region, Presence& files) const {
  const size_t f = places_.at(region).file;
  if (!files.files[f].present && !files.gone[f]) {
    takes_path(files, f, files.paths[f]);
    files.changed = true;
  }
  file_reaches(f, declared_extent(trace_.regions().at(region)), files);
}

void Replay::file_reached(const TraceRecord& rec, Presence& files) const {
  if (const Reach reach = reach_of(rec.kind, rec.flags, rec.payload); reach.region != trace::kNoRegion)
    file_reached(places_.at(reach.region), reach, files);
}

void Replay::file_reached(const RegionPlace& place, const Reach& reach, Presence& files) const {
  if (place.written == reach.by_write) file_reaches(place.file, place.file_offset + reach.end, files);
}

void Replay::file_reaches(size_t file, uint64_t end, Presence& files) const {
  size_t& length = files.files[file].length;
  const size_t reached = static_cast<size_t>(std::min<uint64_t>(end, files_[file].size));
  if (reached <= length) return;
  length = reached;
  files.changed = files.changed || length_matters(files, file);
}

// Where a change waits for a sync of the file, so does the length of one in no image yet (O_TMPFILE's before
// its link), or taken away by an unlink that may not be durable.
bool Replay::length_matters(const Presence& files, size_t file) const {
  return files.files[file].present || metadata_ == MetadataDurability::at_own_sync;
}

void Replay::NotDurable::make(std::vector<FileAtCrash>& now) const {
  for (const auto& [f, after] : files) {
    if (entry) {
      now[f].present = after.present;
      now[f].name = after.name;
      now[f].links = after.links;
      now[f].named_by = seq;
    } else {
      now[f].length = after.length;
    }
  }
  if (moved_from.empty()) return;
  auto rebase = [&](std::string& name) {
    if (name != moved_from && !path_below(name, moved_from)) return;
    name = moved_to.empty() ? std::string() : moved_to + name.substr(moved_from.size());
  };
  for (size_t g = 0; g < now.size(); ++g) {
    if (now[g].named_by >= seq ||
        std::any_of(files.begin(), files.end(), [&](const auto& moved) { return moved.first == g; }))
      continue;
    rebase(now[g].name);
    for (std::string& link : now[g].links) rebase(link);
  }
}

// Where files are, changed by one call (a rename over a file: the one gone, the other in its place), is one
// change, durable once each directory it changed is synced; a file's length is a change of its own.
void Replay::add_not_durable(Presence& files) const {
  NotDurable moved{true, {}, {}, nullptr};
  auto in = [&](const std::string& d) {
    if (std::find(moved.directories.begin(), moved.directories.end(), d) == moved.directories.end())
      moved.directories.push_back(d);
  };
  // Every path that leads to file `f`, before the change (`latest`) or after it.
  auto paths_of = [&](size_t f, bool latest) {
    std::set<std::string> paths;
    const FileAtCrash& file = latest ? files.latest[f] : files.files[f];
    if (!file.present) return paths;
    paths.insert(latest ? files.latest_paths[f] : files.paths[f]);
    for (const std::string& p : latest ? files.latest_link_paths[f] : files.link_paths[f]) paths.insert(p);
    return paths;
  };
  for (size_t f = 0; f < files.files.size(); ++f) {
    const FileAtCrash &was = files.latest[f], &is = files.files[f];
    if (was.present == is.present && was.name == is.name && was.links == is.links) continue;
    moved.files.emplace_back(f, is);
    if (files.moved) continue;  // a directory's move: durable in its parents, below
    const std::set<std::string> before = paths_of(f, true), after = paths_of(f, false);
    for (const std::string& p : before)
      if (!after.count(p)) in(directory_of(p));
    for (const std::string& p : after)
      if (!before.count(p)) in(directory_of(p));
  }
  moved.seq = ++files.changes_made;
  if (files.moved) {
    in(files.moved->left);
    in(files.moved->entered);
    moved.moved_from = std::move(files.moved->name_before);
    moved.moved_to = std::move(files.moved->name_after);
    files.moved.reset();
  }
  if (moved.directories.empty()) moved.make(files.durable);  // nowhere before or after: nothing to lose
  else if (!moved.files.empty()) files.not_durable.push_back(std::move(moved));
  for (size_t f = 0; f < files.files.size(); ++f) {
    if (files.latest[f].length == files.files[f].length) continue;
    files.not_durable.push_back({false, {{f, files.files[f]}}, {}, nullptr});
    if (files.new_cut && files.new_cut->file == f) files.not_durable.back().cut = std::move(files.new_cut);
  }
  files.new_cut = nullptr;
  files.latest = files.files;
  files.latest_paths = files.paths;
  files.latest_link_paths = files.link_paths;
  files.not_durable_changed = true;
  if (files.not_durable.size() <= kMaxNotDurable) return;
  ++files.taken_as_durable;
  files.not_durable.front().make(files.durable);
  files.not_durable.erase(files.not_durable.begin());
}

void Replay::make_durable(Presence& files, const SyncTarget& target) const {
  using Scope = trace::SyncScope;
  auto synced = [&](NotDurable& c) {
    switch (target.scope) {
      case Scope::all: return true;
      case Scope::file_system:
        return std::any_of(c.files.begin(), c.files.end(), [&](const auto& f) {
          return files_[f.first].directory || files_[f.first].device == target.device;
        });
      case Scope::file: {
        const ImageFile& file = files_[c.files.front().first];
        return !c.entry && file.device == target.device && file.inode == target.inode;
      }
      case Scope::directory: std::erase(c.directories, target.directory); return c.entry && c.directories.empty();
    }
    return false;
  };
  // A change durable makes those before it of the same files and kind durable: a file's place or length
  // never goes back to an older one.
  std::vector<bool> durable(files.not_durable.size(), false);
  std::set<std::pair<size_t, bool>> forced;
  for (size_t i = files.not_durable.size(); i-- > 0;) {
    NotDurable& c = files.not_durable[i];
    const bool made = synced(c) || std::any_of(c.files.begin(), c.files.end(), [&](const auto& f) {
                        return forced.count({f.first, c.entry}) != 0;
                      });
    if (!made) continue;
    durable[i] = true;
    for (const auto& f : c.files) forced.insert({f.first, c.entry});
  }
  if (forced.empty()) return;
  std::vector<NotDurable> left;
  for (size_t i = 0; i < files.not_durable.size(); ++i) {
    if (durable[i]) files.not_durable[i].make(files.durable);
    else left.push_back(std::move(files.not_durable[i]));
  }
  files.not_durable = std::move(left);
  files.not_durable_changed = true;
}

void Replay::list_not_durable(Presence& files, bool with_files) const {
  files.changes_since_sync = files.not_durable.size();
  if (!files.not_durable_changed && (files.unsynced_has_files || !with_files)) return;
  files.not_durable_changed = false;
  files.unsynced_has_files = with_files;
  files.unsynced.clear();
  files.cuts.clear();
  const size_t n = files.not_durable.size();
  std::vector<FileAtCrash> state = with_files ? files.durable : std::vector<FileAtCrash>{};
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || i + kMaxUnsynced > n) files.unsynced.push_back({i, with_files ? state : std::vector<FileAtCrash>{}});
    const NotDurable& c = files.not_durable[i];
    if (with_files) c.make(state);
    if (c.cut) {
      c.cut->change = i;
      files.cuts.push_back(c.cut);
    }
  }
}

void CutContent::restore(std::byte* image) const {
  for (const auto& [offset, bytes] : pieces) std::memcpy(image + offset, bytes.data(), bytes.size());
}

// What lay past a file's new end is gone: it reads zero where the file grows again. Where the cut may be
// lost (at_sync, at_own_sync), what it took is kept for the crashes that lose it.
void Replay::file_resized(const TraceRecord& rec, Presence& files, LineModel& model) const {
  const auto r = rec.as<trace::ResizeRecord>();
  for (size_t f = 0; f < files_.size(); ++f) {
    if (files_[f].directory || files_[f].device != r.device || files_[f].inode != r.inode) continue;
    const size_t length = static_cast<size_t>(std::min<uint64_t>(r.length, files_[f].size));
    if (metadata_ != MetadataDurability::at_call && length_matters(files, f) && files.files[f].length > length) {
      files.new_cut = cut_content(f, length, files.files[f].length, files.changes_since_sync, model);
      if (metadata_ == MetadataDurability::at_sync) files.cuts.push_back(std::move(files.new_cut));
    }
    model.discard(files_[f].base + length, files_[f].size - length);
    files.files[f].length = length;
    files.changed = files.changed || length_matters(files, f);
  }
}

std::shared_ptr<CutContent> Replay::cut_content(size_t file, size_t length, size_t was, uint64_t change,
                                                const LineModel& model) const {
  auto cut = std::make_shared<CutContent>();
  cut->change = change;
  cut->file = file;
  cut->length = length;
  cut->hash = mix64(change + 1);
  const std::span<const std::byte> durable = model.durable();
  const size_t offset = files_[file].base + length, end = files_[file].base + was;
  for (size_t page = offset / kPage; page * kPage < end; ++page) {
    if (!model.has_content()[page]) continue;
    const size_t from = std::max(offset, page * kPage), to = std::min(end, (page + 1) * kPage);
    cut->pieces.emplace_back(from, std::vector<std::byte>(durable.begin() + from, durable.begin() + to));
    cut->hash = mix64(cut->hash ^ from ^
                      std::hash<std::string_view>{}(
                          std::string_view(reinterpret_cast<const char*>(durable.data() + from), to - from)));
  }
  return cut;
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
