// A pool: a file mapped with libpmem2, a header, an exclusive lock, and the persister chosen at map time.
//
// On fsdax persistent memory the mapping is real PMEM (libpmem2 maps it MAP_SYNC and reports cache-line
// or byte store granularity); anywhere else (tmpfs under /dev/shm, a plain file) the pool is *emulated*:
// the same code runs on DRAM-backed pages, and every result says which it was.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/persister.hpp"
#include "pmlab/pool/header.hpp"

struct pmem2_map;

namespace pmlab::pool {

enum class Medium : uint8_t {
  pmem,      // DAX-mapped persistent memory: flushes from user space reach the durability domain
  emulated,  // page-cache or tmpfs pages standing in for PMEM
};
const char* to_string(Medium m) noexcept;

struct OpenOptions {
  std::string_view layout;                 // required layout; empty accepts any
  std::optional<persist::Config> persist;  // overrides the map-time choice (tests, sweeps)
  bool read_only = false;                  // shared lock, read-only mapping
};

class Pool {
 public:
  // What a new pool's layout writes into it before the pool takes its name (a superblock, a structure).
  using Format = std::function<Status(Pool&)>;

  // Creates PATH (which must not exist) with `size` bytes and a zero-filled data area, formatted by
  // `format` where given. Never overwrites. The pool is made under a hidden name beside PATH and renamed to
  // PATH once its header is durable and `format` returned (the directory then synced): a crash at any point
  // leaves no PATH or a whole pool, never one that no open accepts. What a crashed create left under the
  // hidden name is removed by the next create of PATH.
  static Result<std::unique_ptr<Pool>> create(const std::string& path, uint64_t size, std::string_view layout,
                                              uint32_t layout_version = 1, const OpenOptions& options = {},
                                              const Format& format = {});
  static Result<std::unique_ptr<Pool>> open(const std::string& path, const OpenOptions& options = {});
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  const std::string& path() const noexcept { return path_; }
  const Header& header() const noexcept { return *reinterpret_cast<const Header*>(base_); }
  std::byte* base() const noexcept { return base_; }
  std::byte* data() const noexcept { return base_ + header().data_offset; }
  uint64_t data_size() const noexcept { return size_ - header().data_offset; }
  uint64_t size() const noexcept { return size_; }
  bool read_only() const noexcept { return read_only_; }

  Medium medium() const noexcept { return medium_; }
  // libpmem2's store granularity of the mapping: "byte" (eADR), "cache-line" (ADR PMEM), "page".
  const char* store_granularity() const noexcept { return granularity_; }
  // The domain the mapping itself implies: eadr for byte granularity, adr otherwise.
  persist::Domain mapped_domain() const noexcept { return mapped_domain_; }
  const persist::Persister& persister() const noexcept { return persister_; }
  persist::Persister& persister() noexcept { return persister_; }

  // Runs the layout's registered recovery (pool/layout.hpp); no-op for layouts without one.
  Status recover();

 private:
  Pool(std::string path, int fd, bool read_only) : path_(std::move(path)), fd_(fd), read_only_(read_only) {}
  Status map(const OpenOptions& options);

  std::string path_;
  int fd_ = -1;
  bool read_only_ = false;
  pmem2_map* map_ = nullptr;
  std::byte* base_ = nullptr;
  uint64_t size_ = 0;
  Medium medium_ = Medium::emulated;
  const char* granularity_ = "page";
  persist::Domain mapped_domain_ = persist::Domain::adr;
  persist::Persister persister_ = persist::Persister::volatile_memory();
};

// The name of the pool that a file named `name` (a name, not a path) is the making of: a file under the hidden
// name Pool::create makes a pool under; nullopt for any other name.
std::optional<std::string> pool_being_created(std::string_view name);

// Removes `path`, a file a create left under its hidden name, unless a create still holds its lock (busy).
Status remove_abandoned_creation(const std::string& path);

// Reads and validates PATH's header without mapping or locking it (for `pmlab pool info`).
Result<Header> read_header(const std::string& path);
enum class RemoveMode : uint8_t {
  valid_only,   // a pool whose header validates
  damaged_too,  // also a damaged one: the magic and a whole header's bytes, failing validation (--force)
};
// Deletes PATH if it is a pmlab pool that nobody has open. Never deletes anything else: a file without
// the pool magic, or shorter than a header, is refused whatever the mode.
Status remove(const std::string& path, RemoveMode mode = RemoveMode::valid_only);

}  // namespace pmlab::pool
