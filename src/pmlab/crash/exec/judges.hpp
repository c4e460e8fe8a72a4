// The user's checker, judging crash images in parallel: a fixed set of slots, each a directory holding one
// image of every persistent file; the campaign builds an image into a free slot and hands it over, a
// worker thread runs the checker on it and reports the verdict. A checker that writes to its image (PMDK's
// recovery does) changes only its slot's copy, which the next image overwrites.
//
// A slot's files stay mapped, side by side as in the image, and an image is built in place: the pages the
// run gave content are compared with the durable image and copied where they differ, and every other page
// is a hole of the file, punched again where a checker wrote. A pool of gigabytes of which a run touched a
// few megabytes costs those megabytes a slot, and a state the pages that hold content.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/crash/exec/replay.hpp"

namespace pmlab::crash::exec {

struct Verdict {
  bool consistent = false;
  std::string outcome;  // the checker's exit, or why it could not run
  std::string output;   // its last lines
  // The checker did not start, or a shell found no command to run (exit 126, 127): a verdict on nothing.
  bool not_run = false;
};

struct JudgeOptions {
  // Shell command; `{}` is replaced by the path (quoted) of `image_name` in the crash directory, or where that
  // is empty of files[image_file]'s image.
  std::string check;
  // Where not empty, instead of `check`: a server's argv, one per checker, started at its first image, sent
  // each image as one line on its stdin (a JSON object of what a check command's environment would hold:
  // PMLAB_CRASH_IMAGE, PMLAB_CRASH_DIR, PMLAB_CRASH_POINT, ...), answering one line on its stdout: "ok", or
  // what is wrong. One that exits, or gives no answer within timeout_s, fails that image and is started again.
  std::vector<std::string> server;
  double timeout_s = 10;
  bool recheck = false;  // judge the image the first check left, again
  unsigned jobs = 1;
  std::string work_dir;
  std::vector<ImageFile> files;
  // What a crash image names each file (TraceFile::image_name; empty: its file name).
  std::vector<std::string> names;
  size_t image_file = 0;
  std::string image_name;
  // What a crash image names each file when the run ends ("": it has no name then), as the image of random
  // bytes lays the files out; empty: as `names`.
  std::vector<std::string> names_at_end;
  // The first --pool is a directory: `{}` is the crash directory, and --replay's image a directory too.
  bool image_is_directory = false;
  size_t image_bytes = 0;
};

// Where `path` is among the run's files (compared as the same file, whatever the spelling of its path): by
// the path each was first seen at, or by a name it had when the run ended, per file in `at_end` where given
// (a file made under another name and renamed to `path`).
std::optional<size_t> traced_file(const std::vector<ImageFile>& files, const std::string& path,
                                  const std::vector<std::vector<std::string>>& at_end = {});

// The file whose image `--replay --image FILE` writes to FILE: the first of `pools` (--pool, in the order
// given) that the run traced, or else the first file it traced (PMDK's pools, found by themselves).
size_t named_image(const std::vector<ImageFile>& files, const std::vector<std::string>& pools,
                   const std::vector<std::vector<std::string>>& at_end = {});

// Refuses a check that names one of the program's persistent files itself and never its image (`{}`,
// $PMLAB_CRASH_IMAGE or $PMLAB_CRASH_DIR): it would judge the file the traced run left, the same whatever the
// crash state, and pass every one.
Status check_reads_crash_images(const std::string& check, const std::vector<ImageFile>& files);

// Whether a check is run by /bin/sh -c: it is more than a plain list of words (quotes, operators, ...).
bool check_needs_shell(const std::string& check);

// The checker's command line for an image at `image`: split into words when it is a plain list of words,
// else run by /bin/sh; `{}` becomes the image's path either way.
std::vector<std::string> checker_argv(const std::string& check, const std::string& image);

class SlotFile;

class Judges {
 public:
  struct Slot {
    size_t index = 0;
    std::string dir;    // where a checker finds the files of its crash image ($PMLAB_CRASH_DIR)
    std::string store;  // where the slot keeps each file's image, linked into `dir` where the file is present
    // Per file: what the crash leaves of it (CrashPointInfo::files); a file past its end is left whole.
    std::vector<FileAtCrash> left;
    std::byte* image = nullptr;    // the image: its files mapped at their bases, written in place
    Status files_ready;            // whether acquire() found the files and mapped them
    std::vector<std::string> env;  // per check: PMLAB_CRASH_POINT, …
    std::function<void(const Verdict&)> done;
    std::vector<std::unique_ptr<SlotFile>> files;  // per persistent file, its image in `store`
    size_t bytes = 0;
    ~Slot();  // where SlotFile is complete; unmaps the image
  };

  static Result<std::unique_ptr<Judges>> start(const JudgeOptions& options);
  ~Judges();
  Judges(const Judges&) = delete;
  Judges& operator=(const Judges&) = delete;

  // A free slot (blocks while every slot is busy), its files where its checker expects them, mapped at
  // slot.image; build the image there (restore, then the state's pieces).
  Slot& acquire();
  // Makes the slot's image `durable`: the pages `pages` lists (marked in `listed`) are compared and copied,
  // and wherever else the slot's files hold anything, holes are punched (every other page of the image is
  // zero).
  Status restore(Slot& slot, std::span<const std::byte> durable, const std::vector<size_t>& pages,
                 const std::vector<bool>& listed);
  // Has a checker judge the slot's image; `done` runs on the checker's thread.
  Status submit(Slot& slot, std::vector<std::string> env, std::function<void(const Verdict&)> done);
  // Returns once every submitted check has been judged.
  void drain();
  // Judges an image of random bytes (drawn from `seed`) in the pages `pages` lists, the pages a run gave
  // content, once nothing else is being judged. A check that reads its crash image rarely passes one; a
  // check that passes it either accepts any content or judges another file.
  Result<Verdict> judge_random_image(uint64_t seed, const std::vector<size_t>& pages);
  // Where slot `slot` keeps file `file`'s image, and where its checker finds it.
  std::string image_path(const Slot& slot, size_t file) const;
  std::string shown_path(const Slot& slot, size_t file) const;
  // What the options name file `file` (its file name where they name none).
  std::string given_name(size_t file) const;
  // Whether file `file` is one a crash leaves (`left`) where no directory it lies in is one it does not.
  // The names of the directories `left` does not leave.
  std::set<std::string> lost_directories(const std::vector<FileAtCrash>& left) const;
  bool left_there(const std::vector<FileAtCrash>& left, size_t file, const std::set<std::string>& lost) const;
  // Whether a crash that lost the directories `lost` leaves a path to `name`.
  static bool reachable(const std::string& name, const std::set<std::string>& lost);
  static Status place_links(const std::string& dir, const std::string& placed, const FileAtCrash& left,
                            const std::set<std::string>& lost);
  // Writes the image in `image` to `path` (the file `{}` names) and `path`.N for each other file N that the
  // crash leaves (`left`), as long as it leaves it: the pages `pages` lists, and holes (zero) elsewhere. With
  // image_is_directory, `path` is a directory made to hold each file under the name the crash leaves it.
  Status write_files(std::span<const std::byte> image, const std::vector<size_t>& pages, const std::string& path,
                     const std::vector<FileAtCrash>& left) const;

 private:
  explicit Judges(JudgeOptions options) : options_(std::move(options)) {}
  struct CheckServer;
  void work(unsigned worker);
  Verdict judge(Slot& slot, CheckServer& server);
  Verdict ask(CheckServer& server, const std::vector<std::string>& env);
  // Empties the slot's `dir` of what its last checker left, then links each present file's image there.
  Status lay_out(const Slot& slot) const;
  void release(Slot& slot);

  JudgeOptions options_;
  std::vector<std::string> names_;  // per file: its image's name in a slot's `dir` (its own file name)
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> free_, queued_;
  size_t busy_ = 0;
  bool stopping_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::thread> workers_;
};

}  // namespace pmlab::crash::exec
