// Replay: the names a crash leaves the run's files under, as the program's calls change them (unlink,
// rename, link, a directory moved), and what a crash that lost some of those changes says it lost.
#include <algorithm>
#include <string>
#include <vector>

#include "pmlab/crash/exec/replay.hpp"

namespace pmlab::crash::exec {

std::string_view changes_lost(MetadataDurability metadata) {
  return metadata == MetadataDurability::at_own_sync ? "not yet synced" : "since the last sync";
}

std::string describe_lost(const std::vector<FileAtCrash>& left, const std::vector<FileAtCrash>& every, size_t changes,
                          const std::vector<const CutContent*>& cuts, std::string_view which) {
  std::string out = std::to_string(changes) + (changes == 1 ? " change " : " changes ");
  out.append(which).append(" lost");
  const char* sep = ": ";
  // A name two of the run's files had (a journal deleted and made again) says which: its number in the
  // results' trace.files, as --replay's images are numbered.
  auto named = [&](size_t f, const std::string& name) {
    for (size_t g = 0; g < every.size(); ++g)
      if (g != f && (every[g].name == name || (g < left.size() && left[g].name == name)))
        return name + " (file " + std::to_string(f) + ")";
    return name;
  };
  for (size_t f = 0; f < left.size() && f < every.size(); ++f) {
    const FileAtCrash &was = left[f], &is = every[f];
    std::string what;
    if (in_image(was) != in_image(is))
      what = in_image(was) ? named(f, was.name) + " still there" : named(f, is.name) + " not there";
    else if (in_image(was) && was.name != is.name) what = named(f, is.name) + " still named " + was.name;
    else if (in_image(was) && was.length != is.length)
      what = named(f, was.name) + " " + std::to_string(was.length) + " bytes long, not " + std::to_string(is.length);
    // The shortest lost cut of the file says from where its old content is back.
    const CutContent* cut = nullptr;
    for (const CutContent* c : cuts)
      if (c->file == f && (cut == nullptr || c->length < cut->length)) cut = c;
    if (cut != nullptr && in_image(was))
      what += (what.empty() ? named(f, was.name) + "'s" : ", its") + " cut to " + std::to_string(cut->length) +
              " bytes undone (what it cut is back)";
    // A link the crash lost is not there; one whose removal it lost still is.
    auto links_only = [&](const FileAtCrash& a, const FileAtCrash& b, const char* said) {
      for (const std::string& l : a.links)
        if (!l.empty() && std::find(b.links.begin(), b.links.end(), l) == b.links.end())
          what += (what.empty() ? "" : ", ") + l + said;
    };
    links_only(is, was, " not there");
    links_only(was, is, " still there");
    if (what.empty()) continue;
    out += sep + what;
    sep = ", ";
  }
  return out;
}

namespace {
// Which of file `f`'s links is named `path` (not its first name): links' size where none is.
size_t link_named(const std::vector<std::string>& links, const std::string& first, const std::string& path) {
  if (path.empty() || path == first) return links.size();
  return static_cast<size_t>(std::find(links.begin(), links.end(), path) - links.begin());
}
}  // namespace

void Replay::takes_path(Presence& files, size_t f, const std::string& path) const {
  for (size_t g = 0; g < files.paths.size(); ++g) {
    if (g == f) continue;
    const bool first = files.paths[g] == path && files.files[g].present;
    if (first || link_named(files.link_paths[g], files.paths[g], path) < files.link_paths[g].size())
      name_removed(g, path, false, files);
  }
  files.files[f].present = true;
}

void Replay::file_gone(const TraceRecord& rec, Presence& files) const {
  const auto r = rec.as<trace::GoneRecord>();
  const auto [to, from] = TraceFile::gone_paths(rec.payload);
  for (size_t f = 0; f < files_.size(); ++f) {
    if (files_[f].directory || files_[f].device != r.device || files_[f].inode != r.inode) continue;
    // A name it kept outside (it was linked in from there) is in no crash image: taking it away changes
    // nothing there, and a rename from it names the file once more.
    const std::vector<std::string>& links = files.link_paths[f];
    const bool from_outside = from != files.paths[f] && std::find(links.begin(), links.end(), from) == links.end() &&
                              trace_.outside_name(from, files.paths[f]);
    if (from_outside && to.empty()) continue;
    if (rec.flags == static_cast<uint8_t>(trace::GoneCall::link) || from_outside) name_added(f, to, files);
    else if (to.empty()) name_removed(f, from, true, files);
    // The other file of an exchange is still at `to` until the rename's record that follows moves it.
    else name_moved(f, from, to, files, rec.flags != static_cast<uint8_t>(trace::GoneCall::exchange));
  }
}

// A name that is not one of its links is taken as its first (where the runtime could not tell the path, or a
// name the file had before the run); its oldest link then takes the first name's place.
void Replay::name_removed(size_t f, const std::string& from, bool gone, Presence& files) const {
  FileAtCrash& file = files.files[f];
  std::vector<std::string>& links = files.link_paths[f];
  files.changed = true;
  if (const size_t k = link_named(links, files.paths[f], from); k < links.size()) {
    links.erase(links.begin() + static_cast<std::ptrdiff_t>(k));
    file.links.erase(file.links.begin() + static_cast<std::ptrdiff_t>(k));
  } else if (!links.empty()) {  // its oldest link
    files.paths[f] = links.front();
    file.name = file.links.front();
    links.erase(links.begin());
    file.links.erase(file.links.begin());
  } else {
    file.present = false;
    if (gone) files.gone[f] = true;
  }
}

void Replay::name_moved(size_t f, const std::string& from, const std::string& to, Presence& files,
                        bool replaces) const {
  std::vector<std::string>& links = files.link_paths[f];
  if (const size_t k = link_named(links, files.paths[f], from); k < links.size()) {
    links[k] = to;
    files.files[f].links[k] = name_at(f, to);
  } else {
    files.paths[f] = to;
    files.files[f].name = name_at(f, to);
    files.gone[f] = false;
  }
  if (replaces) takes_path(files, f, to);
  else files.files[f].present = true;
  files.changed = true;
}

void Replay::name_added(size_t f, const std::string& to, Presence& files) const {
  FileAtCrash& file = files.files[f];
  if (file.present) {
    files.link_paths[f].push_back(to);
    file.links.push_back(name_at(f, to));
  } else {
    files.paths[f] = to;
    file.name = name_at(f, to);
    files.gone[f] = false;
  }
  takes_path(files, f, to);
  files.changed = true;
}

// A file first seen below a --pool directory and moved out of every one is in no crash image (until it is
// moved back): the crash image of a directory holds what is below it.
std::string Replay::name_at(size_t file, const std::string& path) const {
  const bool left_the_tree = trace_.below_a_pool_directory(files_[file].path) && !trace_.below_a_pool_directory(path);
  return left_the_tree ? std::string() : trace_.image_name(path);
}

void Replay::directory_changed(const TraceRecord& rec, Presence& files) const {
  const auto event = static_cast<trace::DirectoryEvent>(rec.flags);
  const size_t entry = trace_.directory_entry(rec.offset);
  const size_t first = files_.size() - trace_.directories().size();
  if (entry == SIZE_MAX || first + entry >= files_.size()) return;
  if (event == trace::DirectoryEvent::made || event == trace::DirectoryEvent::removed) {
    const bool there = event == trace::DirectoryEvent::made;
    FileAtCrash& dir = files.files[first + entry];
    files.changed = files.changed || dir.present != there;
    dir.present = there;
    return;
  }
  if (event != trace::DirectoryEvent::moved) return;
  // Everything below it moves with it: a change of where files are in the directories it left and entered.
  const std::string from = TraceFile::directory_path(rec.payload), to = TraceFile::directory_path(rec.payload, true);
  auto move = [&](size_t f, std::string& path, std::string& name) {
    if (!moved_along(path, from, to)) return;
    name = name_at(f, path);
    files.changed = true;
  };
  const std::string name_before = files.files[first + entry].name;
  for (size_t f = 0; f < files_.size(); ++f) {
    move(f, files.paths[f], files.files[f].name);
    for (size_t k = 0; k < files.link_paths[f].size(); ++k) move(f, files.link_paths[f][k], files.files[f].links[k]);
  }
  files.moved = {directory_of(from), directory_of(to), name_before, files.files[first + entry].name};
}

}  // namespace pmlab::crash::exec
