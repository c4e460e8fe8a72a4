// A trace file, opened and checked whole before anything replays it: every record's size fits its kind,
// every region, stack and module a record names exists. A trace that fails is refused with the offset of
// the first bad record (Errc::corrupted), never half-replayed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/exec/trace_format.hpp"

namespace pmlab::crash::exec {

struct TraceRegion {
  uint32_t id = 0;
  std::string path;
  uint64_t address = 0, length = 0, file_offset = 0, file_size = 0, device = 0, inode = 0;
  uint64_t content_end = 0;  // past the furthest base page or line the trace records in it (or write, if written)
  bool written = false;      // the runtime's view of a file written with write(2) (trace::RegionHow::written)
  // The file had no name when the region was declared (O_TMPFILE), or none below the --pool files: `path` is
  // the first name a later link or rename gave it, "" where none did.
  bool nameless = false;
  std::string came_from;  // where that rename took it from (outside the --pool files)
};

struct TraceModule {
  std::string path;
  uint64_t bias = 0;
  std::vector<std::pair<uint64_t, uint64_t>> segments;  // absolute [begin, end)
};

// One record, its payload checked against its kind.
struct TraceRecord {
  trace::Kind kind;
  uint8_t flags;
  uint16_t thread;
  const std::byte* payload;
  size_t payload_bytes;
  size_t offset;  // in the file, for messages

  template <class T>
  T as() const noexcept {
    T value;
    std::memcpy(&value, payload, sizeof value);
    return value;
  }
  const std::byte* after(size_t fixed) const noexcept { return payload + fixed; }
};

// How far a record shows its region's file to reach: a mapped file by the pages and lines it holds, a
// written one by its writes' ends alone (a sync of the whole view reaches nothing; the file's size when
// first seen covers the rest). `end` is an offset in the region; region kNoRegion: the record shows none.
struct Reach {
  uint32_t region = trace::kNoRegion;
  uint64_t end = 0;
  bool by_write = false;  // counts for a written region (RegionHow::written) only, else for a mapped one only
};
Reach reach_of(trace::Kind kind, uint8_t flags, const std::byte* payload);

// `path` lies below the directory `dir` ("a/b" below "a"; not "a" itself, nor "ab").
bool path_below(const std::string& path, const std::string& dir);
// The directory `path` lies in.
std::string directory_of(const std::string& path);
// Where a move of the directory `from` to `to` takes `path`: rewritten, and true, where it is `from` or below it.
bool moved_along(std::string& path, const std::string& from, const std::string& to);

class TraceFile {
 public:
  static Result<TraceFile> open(const std::string& path);
  // Checks a trace held in memory (the fuzz target's entry).
  static Result<TraceFile> parse(std::string bytes);

  const trace::FileHeader& header() const noexcept;
  bool complete() const noexcept { return header().complete == 1; }
  trace::WriteTracking write_tracking() const noexcept {
    return static_cast<trace::WriteTracking>(header().write_tracking);
  }
  const std::map<uint32_t, TraceRegion>& regions() const noexcept { return regions_; }
  const std::vector<TraceModule>& modules() const noexcept { return modules_; }
  // Per file (device, inode) the trace resizes: the longest length a resize record gives it.
  const std::map<std::pair<uint64_t, uint64_t>, uint64_t>& longest_resize() const noexcept { return longest_resize_; }
  // Return addresses of stack `id`, innermost first (empty for kNoStack).
  const std::vector<uint64_t>& stack(uint32_t id) const;
  const std::vector<std::string>& notes() const noexcept { return notes_; }
  // What a crash image names the file at `path`: its path below the --pool directory it lies in, else its
  // file name.
  std::string image_name(const std::string& path) const;
  // Whether `path` lies below a --pool directory.
  bool below_a_pool_directory(const std::string& path) const;
  // Whether `name`, a name a call took from a file whose first name is `first`, is one no crash image holds: it
  // lies outside the --pool directories, and `first` below one (a file linked in keeps its name outside).
  bool outside_name(const std::string& name, const std::string& first) const;
  // The directories below the --pool directories the trace names (there when the run started, or made,
  // removed or moved by it), each with whether it was there at the start: one entry a directory, by the path
  // it was first named at (a directory made where another was removed or moved from is one of its own).
  const std::vector<std::pair<std::string, bool>>& directories() const noexcept { return directories_; }
  // The entry of directories() a directory record at `record_offset` names (SIZE_MAX: none, a root).
  size_t directory_entry(size_t record_offset) const;
  // The directories below --pool directories the run moved: (from, to), in order.
  const std::vector<std::pair<std::string, std::string>>& moves() const noexcept { return moves_; }
  // The path a directory record's payload names (trace::Kind::directory), or `to`, where a move took it.
  static std::string directory_path(const std::byte* payload, bool to = false);
  // The paths a gone record's payload names (trace::Kind::gone): the name the file has now (a rename's target,
  // a link's new name; "" for none), then the name the call took away ("" where the trace does not say).
  static std::pair<std::string, std::string> gone_paths(const std::byte* payload);
  uint64_t fences() const noexcept { return fences_; }
  // The fences by the call that made them ("fence" for a fence instruction, "msync", "fdatasync", ...), the
  // calls that made any.
  std::vector<std::pair<std::string, uint64_t>> fences_by_call() const;
  uint64_t records() const noexcept { return records_.size(); }
  uint64_t threads() const noexcept { return threads_; }
  // Write-backs, fences and operation marks made by another thread than the one before them: how much the
  // threads' persistence calls interleaved.
  uint64_t thread_switches() const noexcept { return thread_switches_; }
  // Threads that made a write-back, a fence or an operation mark.
  uint64_t persisting_threads() const noexcept { return persisting_threads_; }

  // Calls `f` on every record in order; stops early when it returns a failed Status.
  Status replay(const std::function<Status(const TraceRecord&)>& f) const;

 private:
  Status check();
  Status check_record(size_t at, const trace::RecordHeader& rh);
  Status read_region(size_t at, uint8_t how, const std::byte* p, size_t extra);
  Status read_resize(size_t at, const std::byte* p);
  Status read_gone(size_t at, uint8_t call, const std::byte* p, size_t extra);
  Status read_synced(size_t at, uint8_t scope, const std::byte* p, size_t extra);
  Status read_directory(size_t at, trace::DirectoryEvent event, const std::byte* p, size_t extra);
  Status read_stack(size_t at, const std::byte* p, size_t extra);
  Status read_module(size_t at, const std::byte* p, size_t extra);
  const std::byte* data() const noexcept { return reinterpret_cast<const std::byte*>(bytes_.data()); }
  struct Entry {
    trace::Kind kind;
    uint8_t flags;
    uint16_t thread;
    uint32_t bytes;
    size_t offset;
  };
  std::string bytes_;
  std::vector<Entry> records_;
  std::map<uint32_t, TraceRegion> regions_;
  std::vector<TraceModule> modules_;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> longest_resize_;
  // While checking: per file (device, inode), its regions without a name that no link or rename named yet.
  std::map<std::pair<uint64_t, uint64_t>, std::vector<uint32_t>> unnamed_;
  std::vector<std::vector<uint64_t>> stacks_;
  std::vector<std::string> notes_;
  std::vector<std::string> roots_;                         // trace::DirectoryEvent::root
  std::vector<std::pair<std::string, bool>> directories_;  // directories()
  std::vector<std::pair<std::string, std::string>> moves_;
  std::map<std::string, size_t> live_directories_;  // while checking: a path's entry of directories_ now
  std::map<size_t, size_t> entry_of_record_;        // directory_entry()
  uint64_t fences_ = 0;
  std::array<uint64_t, static_cast<size_t>(trace::kLastFenceCall) + 1> fences_by_call_{};
  uint64_t threads_ = 0;
  uint64_t thread_switches_ = 0;
  uint64_t persisting_threads_ = 0;
};

}  // namespace pmlab::crash::exec
