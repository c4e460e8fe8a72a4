// A trace replayed through the durability model: the program's persistent files laid out as one image, the
// crash points (every fence, and the exit) with the model as it stands at each, and what the run did that
// costs without making anything more durable (the performance findings).
//
// A replay is a pure function of the trace and the domain, so the campaign replays a trace twice (once to
// size each crash point's state space, once to check) and shards replay it alike.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/exec/line_model.hpp"
#include "pmlab/crash/exec/trace_file.hpp"

namespace pmlab::crash::exec {

// A persistent file of the run, at [base, base + size) of the image; or a directory below a --pool directory
// (TraceFile::directories), which a crash image holds where a crash leaves it, and which holds no bytes.
struct ImageFile {
  std::string path;
  uint64_t device = 0, inode = 0;
  size_t base = 0, size = 0;  // its place in the image: the file at its longest, rounded up to a page
  bool directory = false;
};

// What a crash leaves of one of the run's files where every change of the file system made before it is
// durable (but see MetadataDurability). A path's first file is left from the start (from when the run first
// mapped or wrote it, where it was empty then: the run made it), a later one from when the run first mapped
// or wrote it (it replaced the one before), until the run unlinked it or renamed another over it; a renamed
// file under its new name. Its length: as long as it was when first seen, then as far as its mappings' stores
// and its writes reached, or as long as ftruncate last made it.
struct FileAtCrash {
  bool present = false;
  // Its name in a crash image (TraceFile::image_name); empty while a file that lay below a --pool directory
  // is moved out of every one, where no crash image holds it.
  std::string name;
  size_t length = 0;
  // Its other names in a crash image, as `name` is: hard links the run made (link, linkat).
  std::vector<std::string> links = {};
  // at_own_sync: the change that last gave it its names (Replay's NotDurable::seq; 0: none).
  uint64_t named_by = 0;
};

// Whether a crash image holds the file.
inline bool in_image(const FileAtCrash& f) noexcept { return f.present && !f.name.empty(); }

// When a change of the file system (a file made, removed, renamed, cut or extended; a directory below a --pool
// directory made, removed or moved) is durable.
enum class MetadataDurability {
  at_call,  // when its call returns, as where the file system commits such changes synchronously
  // At the next sync of any file or directory, in the order the changes were made: a crash keeps the
  // changes since the last sync up to one of them (ext4's and XFS's journals, committed whole at a sync).
  at_sync,
  // At a sync of what it changed: a file made, removed or renamed at an fsync of its directory (of both, for a
  // rename between two), a file's length at its own fsync, fdatasync, msync or O_DSYNC write; syncfs every
  // change on its file system (directories' entries included), sync every change. A crash keeps the durable changes and
  // the others up to one of them, in order. This is what POSIX promises (fsync(2): a file's fsync need not make its
  // directory entry durable).
  at_own_sync,
};

// The files as a crash that keeps only the first `kept` changes of the file system since the last sync
// leaves them.
struct UnsyncedFiles {
  uint64_t kept = 0;
  std::vector<FileAtCrash> files;
};

// MetadataDurability::at_sync and at_own_sync: what a cut took from a file, durable then, which a crash that
// loses the cut shows again (the file system had not freed those blocks), whatever the file held there after
// it.
struct CutContent {
  uint64_t change = 0;  // the cut's number among the changes not yet durable, from 0
  size_t file = 0;      // per Replay::files
  size_t length = 0;    // what the cut made the file's length
  // The image's pages the run gave content in what the cut took: (image offset, bytes).
  std::vector<std::pair<size_t, std::vector<std::byte>>> pieces;
  uint64_t hash = 0;  // of the pieces
  // Writes the pieces into `image`.
  void restore(std::byte* image) const;
};

struct CrashPointInfo {
  // Crash points counted from 1: the fences in trace order (a directory's sync only where metadata waits for syncs),
  // then the exit.
  uint64_t index = 0;
  bool at_exit = false;
  unsigned thread = 0;
  uint64_t site = 0;  // the fence's call
  uint32_t stack = 0;
  trace::FenceCall call = trace::FenceCall::fence;
  // Operations the program marked (pmlab_op_begin / pmlab_op_end) before the crash point.
  trace::OperationCounts ops;
  std::vector<FileAtCrash> files;  // per file (Replay::files), every change of the file system made
  // MetadataDurability::at_sync and at_own_sync: what a crash may leave of the files instead, where it loses
  // the changes not yet durable from one of them on: the files with none of them, then after each of them
  // but the last (after the latest kMaxUnsynced - 1 of them, where there are more).
  std::vector<UnsyncedFiles> unsynced;
  uint64_t changes_since_sync = 0;                      // at_own_sync: the changes not yet durable
  std::vector<std::shared_ptr<const CutContent>> cuts;  // the cuts among those changes, in order
};
inline constexpr size_t kMaxUnsynced = 32;
// at_own_sync: the most changes not yet durable a replay keeps; where a program makes more without syncing
// what they changed, the earliest are taken as durable.
inline constexpr size_t kMaxNotDurable = 1024;

// What a crash that left `left` lost of the changes of the file system not yet durable (the `changes` last of
// them), against `every`, the files with all of them made, and whose lost `cuts` show their content again:
// "2 changes since the last sync lost: kv.db-journal still there" (`which` names those changes).
std::string describe_lost(const std::vector<FileAtCrash>& left, const std::vector<FileAtCrash>& every, size_t changes,
                          const std::vector<const CutContent*>& cuts = {},
                          std::string_view which = "since the last sync");
// describe_lost's `which` under `metadata`.
std::string_view changes_lost(MetadataDurability metadata);

// Per call site (a return address), how often the run did something that made nothing more durable.
struct Findings {
  std::map<uint64_t, uint64_t> redundant_writebacks;  // ADR: lines written back with nothing new to write back
  std::map<uint64_t, uint64_t> empty_fences;          // fences with nothing of their thread to order
  std::map<uint64_t, uint64_t> non_pm_writebacks;     // write-backs of memory outside every persistent mapping
  // ADR: lines (image offsets) whose content at exit was never written back, and where it was stored.
  std::vector<std::pair<size_t, LineOrigin>> unflushed_at_exit;
  uint64_t writebacks = 0;  // write-back calls into persistent mappings
  // at_own_sync: changes taken as durable because more than kMaxNotDurable were not.
  uint64_t changes_taken_as_durable = 0;
  uint64_t lines_written_back = 0;
};

class Replay {
 public:
  Replay(const TraceFile& trace, persist::Domain domain, MetadataDurability metadata = MetadataDurability::at_call);

  using AtPoint = std::function<Status(const CrashPointInfo&, const LineModel&)>;
  // Walks the trace; `at_point` sees every crash point before its fence takes effect. Under at_own_sync, a
  // point `wants_files` declines (given its index) need not have the files of CrashPointInfo::unsynced's ways,
  // only their `kept`: a run with thousands of files not yet durable copies them only where a crash image is
  // built. An empty `wants_files` wants every point's.
  Status run(const AtPoint& at_point, const std::function<bool(uint64_t)>& wants_files = {});

  const std::vector<ImageFile>& files() const noexcept { return files_; }
  size_t image_bytes() const noexcept { return image_bytes_; }
  const Findings& findings() const noexcept { return findings_; }
  // After run(): the image's pages the run gave content (LineModel::content_pages).
  const std::vector<size_t>& content_pages() const noexcept { return content_pages_; }
  // "pool.obj+0x1c40": where an offset of the image lies.
  std::string where(size_t offset) const;

 private:
  struct RegionPlace {
    size_t file = 0;
    size_t base = 0;  // the region's first byte in the image
    uint64_t length = 0;
    uint64_t file_offset = 0;
    bool written = false;  // trace::RegionHow::written
  };
  struct FirstMappings;
  // at_own_sync: a change of the files not yet durable.
  struct NotDurable {
    bool entry = false;  // it changed where files are (made, removed, renamed); else how long one is
    std::vector<std::pair<size_t, FileAtCrash>> files;  // each file it changed (per Replay::files), as it left it
    std::vector<std::string> directories;               // entry: those it changed that no sync has made it durable in
    std::shared_ptr<CutContent> cut;                    // a cut's content
    uint64_t seq = 0;                                   // its place among the run's changes, from 1
    // A directory's move: its name in a crash image before and after it ("" after: out of every --pool
    // directory). A file named below it by an earlier change is moved too where the move is made: it had
    // left the directory since, by a change not made in that state.
    std::string moved_from = {}, moved_to = {};
    // The change made in `now`.
    void make(std::vector<FileAtCrash>& now) const;
  };
  // What the sync whose fence follows synced (trace::Kind::synced); all: no record said.
  struct SyncTarget {
    trace::SyncScope scope = trace::SyncScope::all;
    uint64_t device = 0, inode = 0;
    std::string directory;
  };
  // What a crash leaves of each file as the trace goes (CrashPointInfo::files).
  struct Presence {
    std::vector<FileAtCrash> files;
    std::vector<bool> gone;
    std::vector<std::string> paths;                    // where each file is now
    std::vector<std::vector<std::string>> link_paths;  // and where its links are (FileAtCrash::links)
    bool changed = false;                              // set by a change of `files`
    uint64_t changes_since_sync = 0;
    // at_sync: CrashPointInfo::unsynced, and the files after the last change or sync.
    std::vector<UnsyncedFiles> unsynced;
    std::vector<FileAtCrash> latest;
    std::vector<std::shared_ptr<const CutContent>> cuts;
    // at_own_sync: the files with every durable change made, the changes not yet durable, where each file was
    // before the latest change, a cut the record being replayed made, and what the next sync syncs.
    std::vector<FileAtCrash> durable;
    std::vector<NotDurable> not_durable;
    bool not_durable_changed = false;
    bool unsynced_has_files = false;  // `unsynced` was listed with each way's files
    std::vector<std::string> latest_paths;
    std::vector<std::vector<std::string>> latest_link_paths;
    std::shared_ptr<CutContent> new_cut;
    SyncTarget sync_target;
    uint64_t taken_as_durable = 0;  // Findings::changes_taken_as_durable
    // The move of a directory the record being replayed made: the directories it left and entered, and its
    // names in a crash image before and after it.
    struct MovedDirectory {
      std::string left, entered, name_before, name_after;
    };
    std::optional<MovedDirectory> moved;
    uint64_t changes_made = 0;  // NotDurable::seq
  };
  // Where the walk through the trace stands (run()).
  struct Walk {
    uint64_t points = 0;
    trace::OperationCounts ops;
    Presence files;
  };
  // A fence's or the exit's crash point; then the fence takes effect.
  Status crash_point(const TraceRecord& rec, Walk& walk, LineModel& model, const AtPoint& at_point,
                     const std::function<bool(uint64_t)>& wants_files);
  // After a record: a change of the files it made is one more since the last sync.
  void count_change(Presence& files) const;
  // at_own_sync: the change a record made, as changes of one file each, not yet durable.
  void add_not_durable(Presence& files) const;
  // at_own_sync: the changes a sync of `target` makes durable, and those before them of the same file and kind.
  void make_durable(Presence& files, const SyncTarget& target) const;
  // at_own_sync: CrashPointInfo::unsynced and cuts, from the changes not yet durable; `with_files`: each
  // way's files too.
  void list_not_durable(Presence& files, bool with_files) const;
  Presence initial_presence() const;
  void file_seen(uint32_t region, Presence& files) const;
  // A name of a file taken away, moved or added (trace::Kind::gone).
  void file_gone(const TraceRecord& rec, Presence& files) const;
  // Taken away: `from` (empty: the trace does not say); `gone`: the file does not come back by a mapping.
  void name_removed(size_t file, const std::string& from, bool gone, Presence& files) const;
  // `replaces`: a file named `to` is not (a rename); else it is about to be moved away (an exchange).
  void name_moved(size_t file, const std::string& from, const std::string& to, Presence& files,
                  bool replaces = true) const;
  void name_added(size_t file, const std::string& to, Presence& files) const;
  // File `file` is now named `path`: any other file named so is not.
  void takes_path(Presence& files, size_t file, const std::string& path) const;
  std::string name_at(size_t file, const std::string& path) const;
  // A directory below a --pool directory made or removed (trace::Kind::directory).
  void directory_changed(const TraceRecord& rec, Presence& files) const;
  // The file a record's region shows reaches as far as the record says (reach_of).
  void file_reached(const TraceRecord& rec, Presence& files) const;
  void file_reached(const RegionPlace& place, const Reach& reach, Presence& files) const;
  // File `file` now reaches `end` (a file offset): it is at least that long.
  void file_reaches(size_t file, uint64_t end, Presence& files) const;
  // Whether a change of file `file`'s length is one a crash may lose (it changes what a crash may leave).
  bool length_matters(const Presence& files, size_t file) const;
  void file_resized(const TraceRecord& rec, Presence& files, LineModel& model) const;
  // What the `change`th change since the last sync, a cut of `file` from `was` bytes to `length`, takes: as
  // the model holds it durable.
  std::shared_ptr<CutContent> cut_content(size_t file, size_t length, size_t was, uint64_t change,
                                          const LineModel& model) const;
  void map_region(const TraceRecord& rec, FirstMappings& first) const;
  void set_base_page(const TraceRecord& rec, FirstMappings& first, LineModel& model) const;
  void write_back(const TraceRecord& rec, LineModel& model);
  // Where the file a region maps ends in the image: nothing past it persists.
  size_t file_end(uint32_t region) const;

  const TraceFile& trace_;
  persist::Domain domain_;
  MetadataDurability metadata_;
  std::vector<ImageFile> files_;
  size_t image_bytes_ = 0;
  std::map<uint32_t, RegionPlace> places_;
  Findings findings_;
  std::vector<size_t> content_pages_;
};

}  // namespace pmlab::crash::exec
