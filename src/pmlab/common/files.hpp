// Files named by users: opened without blocking, read whole, and written so a failure never loses the
// old contents. Every command that reads or writes a user-named file goes through here, so a FIFO, a
// directory or a full disk gets the same clear error everywhere.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"

namespace pmlab {

// A Status for a failed system call: `what` (e.g. "cannot write /x/results.json") followed by the
// cause. The code says what kind of failure it is: no_space for ENOSPC, EDQUOT and EFBIG (the file
// size limit), permission_denied for EACCES, EPERM and EROFS (a read-only file system), not_found for
// ENOENT, io_error otherwise.
Status errno_status(int err, const std::string& what);

// An open descriptor, closed when it goes out of scope.
class FileDescriptor {
 public:
  FileDescriptor() noexcept = default;
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  int get() const noexcept { return fd_; }
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// Opens PATH, which must be a regular file, with `flags` (O_RDONLY or O_RDWR; never creates). The open
// itself does not block: a FIFO, a device or a directory is refused with Errc::not_a_file instead of
// waiting for a writer. `what` names the file's role in messages ("pool file", "device file").
Result<FileDescriptor> open_regular_file(const std::string& path, int flags, std::string_view what);

// Reads a regular file whole (through open_regular_file), refusing files above `max_bytes`.
Result<std::string> read_regular_file(const std::string& path, std::string_view what, uint64_t max_bytes = 64ULL << 20);

// Writes `content` to PATH so that PATH holds either its old contents or all of the new ones: the bytes
// go to a temporary file beside PATH, which is fsynced and renamed over PATH, then the directory is
// fsynced. On any error the temporary file is removed, PATH is untouched, and the Status names the
// cause. An existing PATH that is not a regular file (a directory, a FIFO) is refused.
Status write_file_atomically(const std::string& path, std::string_view content);

// Where scratch files go when nothing says otherwise: /dev/shm when there is one (tmpfs, DRAM-backed like
// an emulated pool), else the temporary directory.
std::filesystem::path scratch_base_directory();

// The running executable (/proc/self/exe), or an empty path when the kernel does not say. An installed
// pmlab finds its runtime, data and report renderer relative to it.
std::filesystem::path executable_path();

// Whether process `pid` has ended: no process of that number runs (one of another user's still does).
bool process_ended(pid_t pid);

// A directory of its own for scratch files (crash images, a traced program's pool), under
// scratch_base_directory(); removed with everything in it when destroyed. Named <prefix>-<pid>-XXXXXX, the
// pattern sweep_scratch_directories recognises in the directories of a process killed before it could
// remove them (SIGKILL, or a second stop signal, which exits at once).
class ScratchDirectory {
 public:
  // `prefix`: "pmlab-" and then lower-case letters, digits and '-', as "pmlab-exec"; another is a caller's
  // bug (std::invalid_argument).
  static Result<ScratchDirectory> make(const std::string& prefix);
  ScratchDirectory(ScratchDirectory&& other) noexcept : path_(std::move(other.path_)), lock_(std::move(other.lock_)) {
    other.path_.clear();
  }
  ScratchDirectory& operator=(ScratchDirectory&&) = delete;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ~ScratchDirectory();
  const std::string& path() const noexcept { return path_; }

 private:
  ScratchDirectory(std::string path, FileDescriptor lock) : path_(std::move(path)), lock_(std::move(lock)) {}
  std::string path_;
  // The directory, open and locked while this process uses it: the sweep passes over a locked one, as it
  // does where the number of a live process names it (another PID namespace sharing /dev/shm).
  FileDescriptor lock_;
};

// The process that made the scratch directory called `name` (a name, not a path); nullopt for a name of
// another pattern.
std::optional<pid_t> scratch_directory_owner(std::string_view name);

// Removes the scratch directories in `dir` whose process has ended, with everything in them. A directory
// of another user's, a link, one of a live process, or one still locked is left alone. `note` gets one line per
// directory removed and per one it could not remove, saying how to remove it by hand.
void sweep_scratch_directories(const std::filesystem::path& dir, const std::function<void(const std::string&)>& note);

}  // namespace pmlab
