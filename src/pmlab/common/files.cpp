#include "pmlab/common/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "pmlab/common/units.hpp"

namespace pmlab {
namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Returns 0 or the errno of the write that failed.
int write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace

Status errno_status(int err, const std::string& what) {
  Errc code = Errc::io_error;
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG: code = Errc::no_space; break;
    case EACCES:
    case EPERM:
    case EROFS: code = Errc::permission_denied; break;
    case ENOENT: code = Errc::not_found; break;
    default: break;
  }
  std::string cause = std::strerror(err);
  // EFBIG alone reads as a property of the file, not of the space it may use.
  if (err == EFBIG) cause += " (over the file size limit)";
  return error(code, what + ": " + cause);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FileDescriptor> open_regular_file(const std::string& path, int flags, std::string_view what) {
  if (path.empty()) return error(Errc::invalid_argument, std::string(what) + " path is empty");
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever.
  FileDescriptor fd(::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return error(Errc::not_found, path + ": no such " + std::string(what));
    if (err == EISDIR) return error(Errc::not_a_file, path + " is a directory, not a " + std::string(what));
    return errno_status(err, "cannot open " + path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_status(errno, "cannot stat " + path);
  if (!S_ISREG(st.st_mode))
    return error(Errc::not_a_file, path + " is " + file_kind(st.st_mode) + ", not a " + std::string(what));
  const int status_flags = ::fcntl(fd.get(), F_GETFL);
  if (status_flags < 0 || ::fcntl(fd.get(), F_SETFL, status_flags & ~O_NONBLOCK) != 0)
    return errno_status(errno, "cannot open " + path);
  return fd;
}

Result<std::string> read_regular_file(const std::string& path, std::string_view what, uint64_t max_bytes) {
  auto fd = open_regular_file(path, O_RDONLY, what);
  if (!fd) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return errno_status(errno, "cannot stat " + path);
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    return error(Errc::invalid_argument,
                 path + " is too large for a " + std::string(what) + " (" + std::to_string(st.st_size) + " bytes)");
  std::string body;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd->get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "cannot read " + path);
    }
    if (n == 0) break;
    body.append(buffer, static_cast<size_t>(n));
    if (body.size() > max_bytes)
      return error(Errc::invalid_argument, path + " is too large for a " + std::string(what));
  }
  return body;
}

Status write_file_atomically(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  if (path.empty()) return error(Errc::invalid_argument, "output path is empty");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    return error(Errc::not_a_file,
                 "cannot write " + path + ": it is " + file_kind(st.st_mode) + ", not a regular file");
  fs::path target(path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  // In the target's directory, so the rename cannot cross file systems; the name is hidden and unique
  // to this process, so a concurrent writer never shares it.
  const fs::path tmp = dir / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()));
  FileDescriptor fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT)
      return error(Errc::not_found, "cannot write " + path + ": directory " + dir.string() + " does not exist");
    return errno_status(err, "cannot write " + path);
  }
  auto fail = [&](int err) {
    ::unlink(tmp.c_str());
    return errno_status(err, "cannot write " + path);
  };
  if (int err = write_all(fd.get(), content); err != 0) return fail(err);
  if (::fsync(fd.get()) != 0) return fail(errno);
  if (::close(fd.release()) != 0) return fail(errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail(errno);
  // The rename is durable only once the directory is; a failure here leaves the new file in place.
  FileDescriptor dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) (void)::fsync(dir_fd.get());
  return Status::success();
}

std::filesystem::path scratch_base_directory() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec)) return "/dev/shm";
  const fs::path tmp = fs::temp_directory_path(ec);
  return ec ? fs::path("/tmp") : tmp;
}

std::filesystem::path executable_path() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self;
}

namespace {

constexpr std::string_view kScratchPrefix = "pmlab-";
constexpr size_t kMkdtempLetters = 6;  // the XXXXXX mkdtemp replaces

bool scratch_prefix_ok(std::string_view prefix) {
  return prefix.size() > kScratchPrefix.size() && prefix.starts_with(kScratchPrefix) && prefix.back() != '-' &&
         std::all_of(prefix.begin(), prefix.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

}  // namespace

bool process_ended(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

std::optional<pid_t> scratch_directory_owner(std::string_view name) {
  const size_t last = name.rfind('-');
  if (last == std::string_view::npos || last == 0 || name.size() - last - 1 != kMkdtempLetters) return std::nullopt;
  const std::string_view letters = name.substr(last + 1);
  if (!std::all_of(letters.begin(), letters.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  const size_t before = name.rfind('-', last - 1);
  if (before == std::string_view::npos || !scratch_prefix_ok(name.substr(0, before))) return std::nullopt;
  auto pid = parse_count(name.substr(before + 1, last - before - 1), 1, INT32_MAX);
  if (!pid) return std::nullopt;
  return static_cast<pid_t>(*pid);
}

void sweep_scratch_directories(const std::filesystem::path& dir, const std::function<void(const std::string&)>& note) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto owner = scratch_directory_owner(entry.path().filename().string());
    // A live process may be a pmlab command still using its directory: not ours to judge.
    if (!owner || *owner == getpid() || !process_ended(*owner)) continue;
    const std::string path = entry.path().string();
    // What mkdtemp made: a directory of this user's, not a link to one; unlocked, so no process uses it.
    FileDescriptor lock(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (lock.get() < 0 || ::fstat(lock.get(), &st) != 0 || st.st_uid != ::geteuid() ||
        ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0)
      continue;
    std::error_code removed;
    fs::remove_all(entry.path(), removed);
    const std::string pid = std::to_string(*owner);
    if (!removed)
      note("pmlab: removed stale scratch directory " + path + " (process " + pid + " ended without removing it)");
    else
      note("pmlab: note: " + path + " was left by process " + pid +
           ", which has ended; not removed: " + removed.message() + " (remove it with: rm -r " + path + ")");
  }
}

Result<ScratchDirectory> ScratchDirectory::make(const std::string& prefix) {
  namespace fs = std::filesystem;
  // A name outside the pattern would be a directory the sweep can never recognise.
  if (!scratch_prefix_ok(prefix)) throw std::invalid_argument("scratch directory prefix '" + prefix + "'");
  const fs::path base = scratch_base_directory();
  std::string templ = (base / (prefix + "-" + std::to_string(getpid()) + "-XXXXXX")).string();
  if (mkdtemp(templ.data()) == nullptr)
    return errno_status(errno, "cannot create a scratch directory in " + base.string());
  FileDescriptor lock(::open(templ.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (lock.get() < 0 || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::error_code ec;
    fs::remove(templ, ec);
    return errno_status(err, "cannot lock the scratch directory " + templ);
  }
  return ScratchDirectory(templ, std::move(lock));
}

ScratchDirectory::~ScratchDirectory() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace pmlab
