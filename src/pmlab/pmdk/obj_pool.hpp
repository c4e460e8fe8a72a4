// The transactional mode's home: a libpmemobj pool file whose root object holds one structure's arena.
//
// Root object: a 64-byte header (magic, arena size, arena offset inside the root object), then the arena,
// 64-byte aligned. Reopening a pool (open()) runs PMDK's own recovery first (an interrupted transaction's
// undo log is applied), then the structure's recover() rebuilds its volatile parts over the arena.
//
// PMDK decides at create/open whether the mapping is PMEM; on an emulated pool (/dev/shm, a plain file) it
// would say no and msync every persist, so PMEM_IS_PMEM_FORCE=1 is set first unless the user set it
// (force_pmem_is_pmem(), whose value the bench records with every run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pmlab/common/status.hpp"

namespace pmlab::pmdk {

class ObjArenaPool {
 public:
  static constexpr const char* kLayout = "pmlab-ds-tx";

  // Creates `path` (which must not exist) with an arena of `arena_bytes`.
  static Result<std::unique_ptr<ObjArenaPool>> create(const std::string& path, uint64_t arena_bytes);
  // Opens an existing pool: PMDK recovery runs, then the header is checked.
  static Result<std::unique_ptr<ObjArenaPool>> open(const std::string& path);
  // Pool file bytes for an arena of `arena_bytes` (heap metadata, lanes and undo logs on top).
  static uint64_t pool_bytes_for(uint64_t arena_bytes) noexcept;
  static bool available() noexcept;

  ~ObjArenaPool();
  ObjArenaPool(const ObjArenaPool&) = delete;
  ObjArenaPool& operator=(const ObjArenaPool&) = delete;

  // Removes the pool file when closed (the bench's pools; a test keeps its file to reopen it).
  void remove_on_close(bool remove) noexcept { remove_ = remove; }
  std::byte* arena() const noexcept { return arena_; }
  uint64_t arena_bytes() const noexcept { return arena_bytes_; }
  void* handle() const noexcept { return pool_; }  // the PMEMobjpool*
  const std::string& path() const noexcept { return path_; }

 private:
  ObjArenaPool(void* pool, std::string path, std::byte* arena, uint64_t arena_bytes)
      : pool_(pool), path_(std::move(path)), arena_(arena), arena_bytes_(arena_bytes) {}
  void* pool_;
  std::string path_;
  std::byte* arena_;
  uint64_t arena_bytes_;
  bool remove_ = false;
};

}  // namespace pmlab::pmdk
