// The persistent files a traced run started from, so that every domain's run starts from the same ones.
//
// Without --setup nothing recreates a program's files between its traced runs: the eADR run would start
// from what the ADR run left (a log twice as long, a pool already holding the keys), and its verdicts would
// depend on which domain ran first. The first run's trace holds what is needed to undo that: each file's
// size and the content of every page as it was first mapped. A file born after the run began (its birth
// time, where the file system keeps one) is one the run created, and is removed instead, under every name it
// has when the run ends (the trace's renames, links and directory moves say which).
//
// Only what the run changed through its persistent mappings or its writes to a --pool file comes back; a
// page it changed before mapping or writing it does not: --setup recreates those.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/exec/trace_file.hpp"

namespace pmlab::crash::exec {

using FileKey = std::pair<uint64_t, uint64_t>;  // (device, inode)

// Every name each file has when the run ends: the path it was first seen at, then as the trace's unlinks,
// renames and links, and the moves of directories below a --pool directory, changed its names.
std::map<FileKey, std::vector<std::string>> names_at_end(const TraceFile& trace);

class StartingFiles {
 public:
  // A time (CLOCK_REALTIME, ns) no file that exists now was born after, and every file created once this
  // returns is born after. File systems stamp births with a clock that ticks every few milliseconds, so
  // this waits for that clock's next tick (one tick at most).
  static int64_t birth_cutoff();

  // The files `trace` mapped, from a run started after birth_cutoff() returned `cutoff_ns`.
  static StartingFiles of(const TraceFile& trace, int64_t cutoff_ns);

  // Puts every file back as the run found it. Reads `trace` again for the pages' first content; rewrites
  // only the pages that differ from it, so a sparse pool stays sparse. What it did, for the run's notes.
  Result<std::vector<std::string>> restore(const TraceFile& trace) const;

  // What restore() does with a file.
  enum class Action {
    put_back,   // it existed before the run: its size and first-mapped pages come back (links the run made go)
    remove,     // the run created it (born after the run began)
    move_back,  // it existed before the run, which renamed it: back to its path first, then as put_back
    leave,      // gone, replaced by another file at its path (the trace cannot tell what to bring back), or a device
  };
  struct File {
    std::string path;
    uint64_t device = 0, inode = 0;
    uint64_t size = 0;  // when first mapped
    Action action = Action::put_back;
    std::string why;                 // for leave
    std::vector<std::string> names;  // for remove and move_back: every name that leads to it when the run ends
  };
  const std::vector<File>& files() const noexcept { return files_; }

 private:
  std::vector<File> files_;
};

}  // namespace pmlab::crash::exec
