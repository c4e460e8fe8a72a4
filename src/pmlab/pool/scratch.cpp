#include "pmlab/pool/scratch.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "pmlab/common/files.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/pool/header.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab::pool {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "pmlab-";
constexpr std::string_view kSuffix = ".pool";

bool valid_what(std::string_view what) {
  for (char c : what)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '+')) return false;
  return !what.empty();
}

// PMDK's pools begin with their library's signature ("PMEMOBJ", "PMEMLOG", "PMEMBLK"). A pool whose
// maker was killed while it allocated the file has no header yet: its first page is zeros (or the file
// is shorter). A file under a scratch name with anything else in front was not made by pmlab, and stays.
enum class Maker { pmlab, pmdk, unfinished, other };

Maker maker_of(int fd) {
  char head[4096] = {};
  const ssize_t got = pread(fd, head, sizeof head, 0);
  if (got < 0) return Maker::other;
  if (got >= static_cast<ssize_t>(sizeof kMagic) && std::memcmp(head, kMagic, sizeof kMagic) == 0) return Maker::pmlab;
  for (const char* signature : {"PMEMOBJ", "PMEMLOG", "PMEMBLK"})
    if (got >= 8 && std::memcmp(head, signature, std::strlen(signature)) == 0) return Maker::pmdk;
  for (ssize_t i = 0; i < got; ++i)
    if (head[i] != 0) return Maker::other;
  return Maker::unfinished;
}

// A PMDK pool, or a pool whose creation was cut off, under a scratch name: removed once nobody holds its
// lock (PMDK locks its pool files as pmlab does).
Status remove_locked(const std::string& path, int fd) {
  if (flock(fd, LOCK_EX | LOCK_NB) != 0)
    return errno == EWOULDBLOCK ? error(Errc::busy, path + " is in use") : errno_status(errno, "cannot lock " + path);
  if (::unlink(path.c_str()) != 0) return errno_status(errno, "cannot remove " + path);
  return Status::success();
}

Status remove_scratch_pool(const std::string& path) {
  auto fd = open_regular_file(path, O_RDONLY | O_NOFOLLOW, "scratch pool");
  if (!fd) return fd.status();
  switch (maker_of(fd->get())) {
    case Maker::pmlab: return remove(path, RemoveMode::damaged_too);
    case Maker::pmdk:
    case Maker::unfinished: return remove_locked(path, fd->get());
    case Maker::other: break;
  }
  return error(Errc::not_a_pool, "neither a pmlab pool nor a PMDK pool");
}

}  // namespace

std::string scratch_pool_path(const fs::path& dir, std::string_view what) {
  std::string name = std::string(kPrefix) + std::to_string(getpid());
  if (!what.empty()) {
    // A name outside the pattern would be a pool the sweep can never recognise: a bug of the caller.
    if (!valid_what(what)) throw std::invalid_argument("scratch pool name '" + std::string(what) + "'");
    name += "-" + std::string(what);
  }
  return (dir / (name + std::string(kSuffix))).string();
}

std::optional<pid_t> scratch_pool_owner(std::string_view name) {
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  name.remove_suffix(kSuffix.size());
  const size_t dash = name.find('-');
  const std::string_view digits = name.substr(0, dash);
  if (dash != std::string_view::npos && !valid_what(name.substr(dash + 1))) return std::nullopt;
  auto pid = parse_count(digits, 1, INT32_MAX);
  if (!pid) return std::nullopt;
  return static_cast<pid_t>(*pid);
}

void sweep_scratch_pools(const fs::path& dir, const std::function<void(const std::string&)>& note) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // A scratch pool, or one its create did not finish (the create's file, under its hidden name).
    const auto made_for = pool_being_created(name);
    const auto owner = scratch_pool_owner(made_for ? *made_for : name);
    // A live process may be a pmlab run that is using its pools: not ours to judge.
    if (!owner || *owner == getpid() || !process_ended(*owner)) continue;
    const std::string path = entry.path().string();
    const std::string pid = std::to_string(*owner);
    if (Status s = made_for ? remove_abandoned_creation(path) : remove_scratch_pool(path); s) {
      note("pmlab: removed stale pool " + path + " (process " + pid + " ended without removing it)");
    } else if (s.code() != Errc::busy && s.code() != Errc::not_found) {
      note("pmlab: note: " + path + " was left by process " + pid + ", which has ended; not removed: " + s.message() +
           " (remove it with: rm " + path + ")");
    }
  }
}

}  // namespace pmlab::pool
