#include "pmlab/pool/pool.hpp"

#include <fcntl.h>
#include <libpmem2.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "pmlab/common/files.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/platform/system.hpp"
#include "pmlab/pool/layout.hpp"

namespace pmlab::pool {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// RAII for a descriptor until the Pool owns it.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

Status lock(int fd, bool exclusive, const std::string& path) {
  if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0) return Status::success();
  if (errno == EWOULDBLOCK)
    return error(Errc::busy, path + " is in use (another pmlab process, or this one, has it open)");
  return error(Errc::io_error, path + ": cannot lock: " + errno_text(errno));
}

Status check_layout_name(std::string_view layout) {
  if (layout.empty() || layout.size() > kLayoutNameMax)
    return error(Errc::invalid_argument,
                 "layout name must have 1 to " + std::to_string(kLayoutNameMax) + " characters");
  for (char c : layout)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return error(Errc::invalid_argument,
                   "layout name '" + std::string(layout) + "' may hold only letters, digits, '-', '_' and '.'");
  return Status::success();
}

Status pmem2_error(const std::string& path, const char* what) {
  return error(Errc::io_error, path + ": " + what + ": " + pmem2_errormsg());
}

// Reads the header through an open descriptor and validates it against the file's size.
Result<Header> read_validated_header(int fd, uint64_t file_size, const std::string& path) {
  if (file_size < kHeaderSize)
    return error(Errc::not_a_pool, path + " is too small to be a pmlab pool (" + std::to_string(file_size) + " bytes)");
  Header h;
  if (pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h))
    return error(Errc::io_error, path + ": cannot read the pool header");
  PMLAB_TRY(validate(h, file_size, path));
  return h;
}

}  // namespace

const char* to_string(Medium m) noexcept { return m == Medium::pmem ? "pmem" : "emulated"; }

Status Pool::map(const OpenOptions& options) {
  pmem2_source* source = nullptr;
  if (pmem2_source_from_fd(&source, fd_) != 0) return pmem2_error(path_, "cannot describe the file to libpmem2");
  pmem2_config* config = nullptr;
  if (pmem2_config_new(&config) != 0) {
    pmem2_source_delete(&source);
    return pmem2_error(path_, "libpmem2 config");
  }
  // Accept any granularity and read back what the mapping gives: that is how real PMEM is told from
  // emulated pools.
  pmem2_config_set_required_store_granularity(config, PMEM2_GRANULARITY_PAGE);
  if (read_only_) pmem2_config_set_protection(config, PMEM2_PROT_READ);
  int rc = pmem2_map_new(&map_, config, source);
  pmem2_config_delete(&config);
  pmem2_source_delete(&source);
  if (rc != 0) return pmem2_error(path_, "cannot map the pool");

  base_ = static_cast<std::byte*>(pmem2_map_get_address(map_));
  size_ = pmem2_map_get_size(map_);
  switch (pmem2_map_get_store_granularity(map_)) {
    case PMEM2_GRANULARITY_BYTE:
      medium_ = Medium::pmem;
      granularity_ = "byte";
      mapped_domain_ = persist::Domain::eadr;
      break;
    case PMEM2_GRANULARITY_CACHE_LINE:
      medium_ = Medium::pmem;
      granularity_ = "cache-line";
      mapped_domain_ = persist::Domain::adr;
      break;
    case PMEM2_GRANULARITY_PAGE:
      medium_ = Medium::emulated;
      granularity_ = "page";
      // Emulated pools model ADR PMEM: the designs flush and fence as on real hardware.
      mapped_domain_ = persist::Domain::adr;
      break;
  }
  persist::Config pc;
  if (options.persist) {
    pc = *options.persist;
  } else {
    auto dflt = persist::default_config(mapped_domain_, platform::CpuFeatures::host());
    if (!dflt) return dflt.status();
    pc = *dflt;
  }
  auto persister = persist::Persister::create(pc);
  if (!persister) return persister.status();
  persister_ = *persister;
  return Status::success();
}

namespace {

constexpr std::string_view kCreationMark = ".pmlab-new-";

// The name a pool is made under before it is given its own: hidden, beside it (a rename within a directory),
// and naming the pool it is for, so that one a crashed create left behind is found by the next create.
std::string creation_prefix(const std::filesystem::path& path) {
  return "." + path.filename().string() + std::string(kCreationMark);
}

// Removes what creates of `path` that did not finish left in its directory (remove_abandoned_creation).
void remove_abandoned_creations(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string prefix = creation_prefix(path);
  for (const auto& entry : fs::directory_iterator(path.parent_path().empty() ? "." : path.parent_path(), ec))
    if (entry.path().filename().string().starts_with(prefix)) (void)remove_abandoned_creation(entry.path().string());
}

// Gives the made pool `made` its name `path`, unless a file took that name meanwhile; then syncs the
// directory, so that the name is as durable as the pool.
Status publish(const std::string& made, const std::string& path) {
  int rc = ::renameat2(AT_FDCWD, made.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {  // a file system without RENAME_NOREPLACE
    rc = ::link(made.c_str(), path.c_str());
    if (rc == 0) (void)::unlink(made.c_str());
  }
  if (rc != 0) {
    const int err = errno;
    return err == EEXIST ? error(Errc::already_exists, path + " appeared while the pool was made; left as it is")
                         : errno_status(err, "cannot name the new pool " + path);
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  FileDescriptor dir_fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) (void)::fsync(dir_fd.get());
  return Status::success();
}

Status exists_already(const std::string& path) {
  std::string hint;
  if (read_header(path).ok()) hint = " (pmlab pool remove " + path + " first)";
  return error(Errc::already_exists, path + " already exists; refusing to overwrite it" + hint);
}

}  // namespace

Status remove_abandoned_creation(const std::string& path) {
  auto fd = open_regular_file(path, O_RDONLY | O_NOFOLLOW, "unfinished pool");
  if (!fd) return fd.status();
  if (flock(fd->get(), LOCK_EX | LOCK_NB) != 0)
    return errno == EWOULDBLOCK ? error(Errc::busy, path + " is being created")
                                : errno_status(errno, "cannot lock " + path);
  if (::unlink(path.c_str()) != 0) return errno_status(errno, "cannot remove " + path);
  return Status::success();
}

std::optional<std::string> pool_being_created(std::string_view name) {
  const size_t mark = name.rfind(kCreationMark);
  if (!name.starts_with('.') || mark == std::string_view::npos || mark < 2 ||
      name.size() != mark + kCreationMark.size() + 6)
    return std::nullopt;
  return std::string(name.substr(1, mark - 1));
}

Result<std::unique_ptr<Pool>> Pool::create(const std::string& path, uint64_t size, std::string_view layout,
                                           uint32_t layout_version, const OpenOptions& options, const Format& format) {
  PMLAB_TRY(check_layout_name(layout));
  if (path.empty()) return error(Errc::invalid_argument, "cannot create a pool: the path is empty");
  if (size < kMinPoolSize)
    return error(Errc::invalid_argument,
                 "pool size " + format_size(size) + " is below the minimum " + format_size(kMinPoolSize));
  if (size % kHeaderSize != 0)
    return error(Errc::invalid_argument, "pool size " + std::to_string(size) + " is not a multiple of 4K");

  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec))
    return error(Errc::not_found, "cannot create " + path + ": directory " + parent.string() + " does not exist");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return exists_already(path);

  remove_abandoned_creations(path);
  std::string made;
  Fd fd;
  // A name of its own, made with O_EXCL and mode 0644 as the pool's own name would be (the umask applies).
  std::random_device entropy;
  for (int tries = 0; fd.fd < 0 && tries < 64; ++tries) {
    static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::string suffix(6, 'x');
    for (char& c : suffix) c = kLetters[entropy() % (sizeof kLetters - 1)];
    made = (parent / (creation_prefix(path) + suffix)).string();
    fd.fd = ::open(made.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd.fd < 0 && errno != EEXIST) break;
  }
  if (fd.fd < 0) {
    int err = errno;
    if (err == EACCES || err == EROFS || err == EPERM)
      return error(Errc::permission_denied, "cannot create " + path + ": " + errno_text(err));
    return error(Errc::io_error, "cannot create " + path + ": " + errno_text(err));
  }
  // From here on the file is ours: on failure remove it, so a failed create leaves nothing behind.
  auto fail = [&](Status s) -> Status {
    ::unlink(made.c_str());
    return s;
  };
  if (flock(fd.fd, LOCK_EX | LOCK_NB) != 0) return fail(error(Errc::busy, path + " was locked while being created"));
  if (int err = posix_fallocate(fd.fd, 0, static_cast<off_t>(size)); err != 0) {
    if (err == ENOSPC || err == EFBIG || err == EDQUOT)
      return fail(error(Errc::no_space,
                        "no space for a " + format_size(size) + " pool at " + path + " (" + errno_text(err) + ")"));
    return fail(error(Errc::io_error, "cannot allocate " + path + ": " + errno_text(err)));
  }
  std::unique_ptr<Pool> pool(new Pool(path, fd.release(), false));
  auto unmade = [&](Status s) -> Status {
    pool.reset();
    return fail(s);
  };
  if (Status s = pool->map(options); !s) return unmade(s);
  Header h = make_header(layout, layout_version, size);
  std::memcpy(pool->base_, &h, sizeof h);
  // The fields and the checksum; the reserved lines between them are zero, as the new file was.
  auto* written = reinterpret_cast<Header*>(pool->base_);
  pool->persister_.flush(written, offsetof(Header, reserved));
  pool->persister_.flush(&written->checksum, sizeof written->checksum);
  pool->persister_.fence();
  if (pool->medium_ == Medium::emulated) {
    // The header is the one write an emulated pool makes durable for real, so a pool file outlives a
    // reboot on a disk-backed file system. Benchmarks never msync.
    msync(pool->base_, kHeaderSize, MS_SYNC);
  }
  if (format)
    if (Status s = format(*pool); !s) return unmade(s);
  if (Status s = publish(made, path); !s) return unmade(s);
  return pool;
}

Result<std::unique_ptr<Pool>> Pool::open(const std::string& path, const OpenOptions& options) {
  // Opened read-only first: the file's kind and mode are checked before anything could write it.
  auto probe = open_regular_file(path, O_RDONLY, "pool file");
  if (!probe) return probe.status();
  struct stat st {};
  if (::fstat(probe->get(), &st) != 0) return errno_status(errno, "cannot stat " + path);
  // Root may write any file; a pool whose mode has no write bit is still treated as read-only, so the
  // owner's intent is kept.
  if (!options.read_only && (st.st_mode & 0222) == 0)
    return error(Errc::permission_denied, path + " is read-only; refusing to open it for writing");
  Result<FileDescriptor> opened = options.read_only ? std::move(probe) : open_regular_file(path, O_RDWR, "pool file");
  if (!opened) {
    if (opened.status().code() == Errc::permission_denied)
      return error(Errc::permission_denied, path + " is read-only (" + opened.status().message() + ")");
    return opened.status();
  }
  Fd fd{opened->release()};
  PMLAB_TRY(lock(fd.fd, !options.read_only, path));
  auto header = read_validated_header(fd.fd, static_cast<uint64_t>(st.st_size), path);
  if (!header) return header.status();
  if (!options.layout.empty() && layout_name(*header) != options.layout)
    return error(Errc::wrong_layout,
                 path + " holds layout '" + layout_name(*header) + "', not '" + std::string(options.layout) + "'");

  std::unique_ptr<Pool> pool(new Pool(path, fd.release(), options.read_only));
  PMLAB_TRY(pool->map(options));
  return pool;
}

Pool::~Pool() {
  if (map_ != nullptr) pmem2_map_delete(&map_);
  if (fd_ >= 0) close(fd_);  // releases the flock
}

Status Pool::recover() {
  const Layout* layout = LayoutRegistry::instance().find(layout_name(header()));
  if (layout == nullptr || !layout->recover) return Status::success();
  return layout->recover(*this);
}

Result<Header> read_header(const std::string& path) {
  auto fd = open_regular_file(path, O_RDONLY, "pool file");
  if (!fd) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return errno_status(errno, "cannot stat " + path);
  return read_validated_header(fd->get(), static_cast<uint64_t>(st.st_size), path);
}

Status remove(const std::string& path, RemoveMode mode) {
  auto fd = open_regular_file(path, O_RDONLY, "pool file");
  if (!fd) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return errno_status(errno, "cannot stat " + path);
  PMLAB_TRY(lock(fd->get(), true, path));
  auto header = read_validated_header(fd->get(), static_cast<uint64_t>(st.st_size), path);
  if (!header) {
    // A damaged pool still begins with the magic and holds at least its header's 4 KiB; anything
    // else was never a pool, and --force does not change that.
    char magic[sizeof kMagic] = {};
    const bool has_magic = pread(fd->get(), magic, sizeof magic, 0) == static_cast<ssize_t>(sizeof magic) &&
                           std::memcmp(magic, kMagic, sizeof kMagic) == 0;
    if (!has_magic || static_cast<uint64_t>(st.st_size) < kHeaderSize)
      return error(Errc::not_a_pool, path + " is not a pmlab pool; refusing to remove it");
    if (mode != RemoveMode::damaged_too)
      return error(
          header.status().code(),
          header.status().message() + "; refusing to remove it (pmlab pool remove --force removes a damaged pool)");
  }
  if (::unlink(path.c_str()) != 0) return errno_status(errno, "cannot remove " + path);
  return Status::success();
}

}  // namespace pmlab::pool
