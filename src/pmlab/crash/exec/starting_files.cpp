#include "pmlab/crash/exec/starting_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "pmlab/common/files.hpp"

namespace pmlab::crash::exec {
namespace {

constexpr size_t kPage = trace::kPageBytes;

struct Identity {
  bool exists = false;
  bool is_device = false;  // a character or block device: device DAX
  uint64_t device = 0, inode = 0;
  bool birth_known = false;
  int64_t birth_ns = 0;
};

Identity identify(const std::string& path) {
  Identity id;
  struct statx st {};
  if (statx(AT_FDCWD, path.c_str(), 0, STATX_TYPE | STATX_INO | STATX_BTIME, &st) != 0) return id;
  id.exists = true;
  id.is_device = S_ISCHR(st.stx_mode) || S_ISBLK(st.stx_mode);
  id.device = makedev(st.stx_dev_major, st.stx_dev_minor);
  id.inode = st.stx_ino;
  id.birth_known = (st.stx_mask & STATX_BTIME) != 0;
  id.birth_ns = static_cast<int64_t>(st.stx_btime.tv_sec) * 1'000'000'000 + st.stx_btime.tv_nsec;
  return id;
}

// Makes page `page` of `fd` hold `content` (n bytes), writing only when it differs.
Status put_page(int fd, size_t page, const std::byte* content, size_t n, const std::string& path, uint64_t& rewritten) {
  std::byte now[kPage];
  const off_t at = static_cast<off_t>(page * kPage);
  const ssize_t got = pread(fd, now, n, at);
  if (got == static_cast<ssize_t>(n) && std::memcmp(now, content, n) == 0) return {};
  if (pwrite(fd, content, n, at) != static_cast<ssize_t>(n)) return errno_status(errno, "cannot restore " + path);
  ++rewritten;
  return {};
}

}  // namespace

std::map<FileKey, std::vector<std::string>> names_at_end(const TraceFile& trace) {
  std::map<FileKey, std::vector<std::string>> names;
  auto renamed = [&](const TraceRecord& rec) {
    const auto r = rec.as<trace::GoneRecord>();
    const auto it = names.find({r.device, r.inode});
    if (it == names.end()) return;
    std::vector<std::string>& of = it->second;
    const auto [to, from] = TraceFile::gone_paths(rec.payload);
    if (rec.flags == static_cast<uint8_t>(trace::GoneCall::link)) {
      // A file without a name is first seen under its first link's (TraceRegion::nameless).
      if (std::find(of.begin(), of.end(), to) == of.end()) of.push_back(to);
      return;
    }
    auto name = std::find(of.begin(), of.end(), from);
    if (name == of.end() && !of.empty() && trace.outside_name(from, of.front())) {  // one it kept outside
      if (!to.empty() && std::find(of.begin(), of.end(), to) == of.end()) of.push_back(to);
      return;
    }
    if (name == of.end()) name = of.begin();  // a name the trace does not say: its first
    if (name == of.end()) return;
    if (to.empty()) of.erase(name);
    else *name = to;
  };
  (void)trace.replay([&](const TraceRecord& rec) -> Status {
    if (rec.kind == trace::Kind::region) {
      const TraceRegion& r = trace.regions().at(rec.as<trace::RegionRecord>().id);
      names.try_emplace({r.device, r.inode}, std::vector<std::string>{r.path});
    } else if (rec.kind == trace::Kind::gone) {
      renamed(rec);
    } else if (rec.kind == trace::Kind::directory && rec.flags == static_cast<uint8_t>(trace::DirectoryEvent::moved)) {
      const std::string from = TraceFile::directory_path(rec.payload),
                        to = TraceFile::directory_path(rec.payload, true);
      for (auto& [file, of] : names)
        for (std::string& path : of) moved_along(path, from, to);
    }
    return {};
  });
  return names;
}

int64_t StartingFiles::birth_cutoff() {
  auto ns = [](clockid_t clock) {
    timespec t{};
    clock_gettime(clock, &t);
    return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  };
  const int64_t cutoff = ns(CLOCK_REALTIME), give_up = ns(CLOCK_MONOTONIC) + 1'000'000'000;
  // A second bounds the wait should the wall clock be set back meanwhile.
  while (ns(CLOCK_REALTIME_COARSE) <= cutoff && ns(CLOCK_MONOTONIC) < give_up) {
    const timespec pause{0, 200'000};
    nanosleep(&pause, nullptr);
  }
  return cutoff;
}

StartingFiles StartingFiles::of(const TraceFile& trace, int64_t cutoff_ns) {
  StartingFiles s;
  const std::map<FileKey, std::vector<std::string>> at_end = names_at_end(trace);
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // (device, inode) of files_
  for (const auto& [id, r] : trace.regions()) {
    if (std::find(seen.begin(), seen.end(), std::pair{r.device, r.inode}) != seen.end()) continue;
    seen.emplace_back(r.device, r.inode);
    if (r.path.empty()) continue;  // no name, and no link gave it one: nothing of it is left to put back
    // A file renamed in from outside starts where it came from.
    const std::string& path = r.came_from.empty() ? r.path : r.came_from;
    // A file the run made at a path after removing the one there (a journal per transaction) is no
    // starting point: the path's first file is.
    if (std::any_of(s.files_.begin(), s.files_.end(), [&](const File& f) { return f.path == path; })) continue;
    File f{path, r.device, r.inode, r.file_size, Action::put_back, "", {}};
    std::optional<Identity> born;  // the file, found by a name it has at the end
    if (const auto names = at_end.find({r.device, r.inode}); names != at_end.end())
      for (const std::string& name : names->second)
        if (const Identity there = identify(name); there.exists && there.device == r.device && there.inode == r.inode) {
          f.names.push_back(name);
          born = there;
        }
    const Identity now = identify(path);
    if (born && !now.is_device && born->birth_known && born->birth_ns > cutoff_ns) {
      f.action = Action::remove;
    } else if (born && (!now.exists || now.device != r.device || now.inode != r.inode)) {
      f.action = Action::move_back;
    } else if (!now.exists || now.device != r.device || now.inode != r.inode) {
      f.action = Action::leave;
      f.why =
          now.exists ? "the first traced run replaced it with another file" : "the first traced run left no file there";
    } else if (now.is_device) {
      // A device has no size to give back, and device DAX takes neither write(2) nor ftruncate: its pages
      // could come back only through a mapping, which no device here could test.
      f.action = Action::leave;
      f.why = "it is a device (device DAX), which is not put back";
    }
    s.files_.push_back(std::move(f));
  }
  return s;
}

namespace {
// Below a --pool directory, a directory the run moved goes back, and one it removed comes back, empty, before
// the files put back in them.
Status bring_back_directories(const TraceFile& trace, std::vector<std::string>& notes) {
  for (auto m = trace.moves().rbegin(); m != trace.moves().rend(); ++m) {
    std::error_code ec;
    if (!std::filesystem::is_directory(m->second, ec) || std::filesystem::exists(m->first, ec)) continue;
    std::filesystem::rename(m->second, m->first, ec);
    if (ec) return error(Errc::io_error, "cannot move " + m->second + " back: " + ec.message());
    notes.push_back("moved " + m->second + "/ back to " + m->first + ", as the first traced run found it");
  }
  for (const auto& [path, there] : trace.directories()) {
    std::error_code ec;
    if (!there || std::filesystem::is_directory(path, ec)) continue;
    std::filesystem::create_directories(path, ec);
    if (ec) return error(Errc::io_error, "cannot make " + path + ": " + ec.message());
    notes.push_back("made " + path + "/ again, which the first traced run removed");
  }
  return {};
}

Status remove_made_files(const std::vector<StartingFiles::File>& files, std::vector<std::string>& notes) {
  for (const StartingFiles::File& f : files) {
    if (f.action != StartingFiles::Action::remove) continue;
    std::string removed;
    for (const std::string& name : f.names) {
      if (::unlink(name.c_str()) != 0 && errno != ENOENT) return errno_status(errno, "cannot remove " + name);
      removed += (removed.empty() ? "" : " and ") + name;
    }
    notes.push_back("removed " + removed + ", which the first traced run created");
  }
  return {};
}

// A file that existed before the run goes back to its path where the run renamed it, and the other names the
// run gave it go: whether it is at its path (where another file holds the path, or no name leads to it, it is
// left where it is).
Result<bool> back_to_its_path(const StartingFiles::File& f, std::vector<std::string>& notes) {
  auto leads_to_it = [&](const std::string& name) {
    const Identity id = identify(name);
    return id.exists && id.device == f.device && id.inode == f.inode;
  };
  if (!leads_to_it(f.path)) {
    const auto from = std::find_if(f.names.begin(), f.names.end(), leads_to_it);
    if (identify(f.path).exists || from == f.names.end()) {
      notes.push_back("left " + f.path + " as it is: the first traced run renamed it, and " +
                      (from == f.names.end() ? "no name leads to it now" : "another file holds its path now") +
                      " (--setup can recreate it)");
      return false;
    }
    if (::rename(from->c_str(), f.path.c_str()) != 0)
      return errno_status(errno, "cannot move " + *from + " back to " + f.path);
    notes.push_back("moved " + *from + " back to " + f.path + ", as the first traced run found it");
  }
  for (const std::string& name : f.names) {
    if (name == f.path || !leads_to_it(name)) continue;
    if (::unlink(name.c_str()) != 0) return errno_status(errno, "cannot remove " + name);
    notes.push_back("removed " + name + ", a name the first traced run gave " + f.path);
  }
  return true;
}

// And a directory the run made goes, with all in it (the run made that too).
Status remove_made_directories(const TraceFile& trace, std::vector<std::string>& notes) {
  for (auto d = trace.directories().rbegin(); d != trace.directories().rend(); ++d) {
    std::error_code ec;
    if (d->second || !std::filesystem::is_directory(d->first, ec)) continue;
    std::filesystem::remove_all(d->first, ec);
    if (ec) return error(Errc::io_error, "cannot remove " + d->first + ": " + ec.message());
    notes.push_back("removed " + d->first + "/, which the first traced run made");
  }
  return {};
}
}  // namespace

Result<std::vector<std::string>> StartingFiles::restore(const TraceFile& trace) const {
  std::vector<std::string> notes;
  // The files the run made go first, by the names they have at its end, before any directory moves back.
  PMLAB_TRY(remove_made_files(files_, notes));
  PMLAB_TRY(bring_back_directories(trace, notes));
  std::vector<bool> in_place(files_.size(), true);  // false: a file the run renamed that could not go back
  for (size_t i = 0; i < files_.size(); ++i) {
    if (files_[i].action != Action::move_back && files_[i].action != Action::put_back) continue;
    auto moved = back_to_its_path(files_[i], notes);
    if (!moved) return moved.status();
    in_place[i] = *moved;
  }
  std::vector<FileDescriptor> fds(files_.size());
  // Per file page: covered by a mapping already; first mapped with no base content (zero) so far.
  std::vector<std::vector<bool>> seen(files_.size()), pending_zero(files_.size());
  std::vector<uint64_t> rewritten(files_.size(), 0);
  std::map<std::pair<uint64_t, uint64_t>, size_t> index;  // (device, inode) -> files_
  for (size_t i = 0; i < files_.size(); ++i) index.try_emplace({files_[i].device, files_[i].inode}, i);
  for (size_t i = 0; i < files_.size(); ++i) {
    const File& f = files_[i];
    if (f.action == Action::leave) {
      notes.push_back("left " + f.path + " as it is: " + f.why + " (--setup can recreate it)");
      continue;
    }
    if (f.action == Action::remove || !in_place[i]) continue;
    const int fd = ::open(f.path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, "cannot restore " + f.path);
    fds[i] = FileDescriptor(fd);
    if (ftruncate(fd, static_cast<off_t>(f.size)) != 0) return errno_status(errno, "cannot restore " + f.path);
    const size_t pages = (f.size + kPage - 1) / kPage;
    pending_zero[i].assign(pages, false);
    seen[i].assign(pages, false);
  }
  std::map<uint32_t, std::pair<size_t, uint64_t>> places;  // region -> (file, file offset), of files_ only
  for (const auto& [id, r] : trace.regions())
    if (const auto it = index.find({r.device, r.inode}); it != index.end()) places[id] = {it->second, r.file_offset};
  Status replayed = trace.replay([&](const TraceRecord& rec) -> Status {
    if (rec.kind == trace::Kind::region) {
      const auto r = rec.as<trace::RegionRecord>();
      if (!places.count(r.id)) return {};
      const auto [file, offset] = places.at(r.id);
      if (fds[file].get() < 0) return {};
      // Pages no earlier mapping covered start here: zero unless a base page follows.
      for (size_t p = offset / kPage; p < seen[file].size() && p * kPage < offset + r.length; ++p)
        if (!seen[file][p]) seen[file][p] = pending_zero[file][p] = true;
    } else if (rec.kind == trace::Kind::base_page) {
      const auto b = rec.as<trace::BasePageRecord>();
      if (!places.count(b.region)) return {};
      const auto [file, offset] = places.at(b.region);
      const size_t page = (offset + b.offset) / kPage;
      if (fds[file].get() < 0 || page >= pending_zero[file].size() || !pending_zero[file][page]) return {};
      pending_zero[file][page] = false;
      const size_t n = std::min<uint64_t>(kPage, files_[file].size - page * kPage);
      std::byte content[kPage];
      trace::expand_base_page(b.lines, rec.after(sizeof(trace::BasePageRecord)), content);
      return put_page(fds[file].get(), page, content, n, files_[file].path, rewritten[file]);
    }
    return {};
  });
  if (!replayed) return replayed;
  PMLAB_TRY(remove_made_directories(trace, notes));
  static const std::byte zeros[kPage] = {};
  for (size_t i = 0; i < files_.size(); ++i) {
    if (fds[i].get() < 0) continue;
    for (size_t p = 0; p < pending_zero[i].size(); ++p)
      if (pending_zero[i][p]) {
        const size_t n = std::min<uint64_t>(kPage, files_[i].size - p * kPage);
        if (Status s = put_page(fds[i].get(), p, zeros, n, files_[i].path, rewritten[i]); !s) return s;
      }
    notes.push_back("put " + files_[i].path + " back as the first traced run found it (" +
                    std::to_string(rewritten[i]) + " page(s) rewritten)");
  }
  return notes;
}

}  // namespace pmlab::crash::exec
