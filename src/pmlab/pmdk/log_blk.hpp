// The peers users have today: PMDK's libpmemlog (append: data, barrier, write offset, barrier, under a
// pool-wide lock) and libpmemblk (block write through the BTT: about four barriers).
//
// Their pools are files of their own beside the run's pool. PMDK decides at open whether a mapping is
// PMEM; on an emulated pool it would say no and msync every append, so PMEM_IS_PMEM_FORCE=1 is set
// before the first PMDK call (unless the user set it) and every peer run records the value in effect.
// Built without PMDK, the peers say so and their runs are skipped with that reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pmlab/common/status.hpp"

namespace pmlab::pmdk {

class PmemLog {
 public:
  // Creates `dir`/pmlab-<pid>-pmemlog.pool of `bytes`; unavailable without libpmemlog.
  static Result<std::unique_ptr<PmemLog>> create(const std::string& dir, uint64_t bytes);
  ~PmemLog();
  PmemLog(const PmemLog&) = delete;
  PmemLog& operator=(const PmemLog&) = delete;

  // False when the log is full (rewind, then append again).
  bool append(const void* data, size_t len) noexcept;
  void rewind() noexcept;
  // Fills the log once and rewinds it, so its pages are allocated before anything is timed.
  void prefault();
  uint64_t bytes_used() const noexcept;
  static bool available() noexcept;

 private:
  PmemLog(void* pool, std::string path) : pool_(pool), path_(std::move(path)) {}
  void* pool_;
  std::string path_;
};

class PmemBlk {
 public:
  // Creates `dir`/pmlab-<pid>-pmemblk.pool of `bytes` with blocks of `block_bytes`.
  static Result<std::unique_ptr<PmemBlk>> create(const std::string& dir, uint32_t block_bytes, uint64_t bytes);
  ~PmemBlk();
  PmemBlk(const PmemBlk&) = delete;
  PmemBlk& operator=(const PmemBlk&) = delete;

  bool write(const void* block, uint64_t number) noexcept;
  uint64_t blocks() const noexcept { return blocks_; }
  // Writes every block once, so the pool's pages are allocated before anything is timed.
  void prefault();
  static bool available() noexcept;

 private:
  PmemBlk(void* pool, std::string path, uint64_t blocks) : pool_(pool), path_(std::move(path)), blocks_(blocks) {}
  void* pool_;
  std::string path_;
  uint64_t blocks_;
};

// Published barrier counts of the peers (PMDK 1.12 sources, as listed in data/reference/README.md).
inline constexpr double kPmemLogFencesPerAppend = 2;
inline constexpr double kPmemBlkFencesPerWrite = 4;
inline constexpr const char* kPmdkBarrierSource = "PMDK 1.12 sources (data/reference/README.md, barrier counts per op)";

}  // namespace pmlab::pmdk
