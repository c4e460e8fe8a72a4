#include "pmlab/pmdk/log_blk.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>
#include <algorithm>

#include "pmlab/pmdk/environment.hpp"
#include "pmlab/pool/scratch.hpp"

#ifdef PMLAB_HAVE_LIBPMEMLOG
#include <libpmemlog.h>
#endif
#ifdef PMLAB_HAVE_LIBPMEMBLK
#include <libpmemblk.h>
#endif

namespace pmlab::pmdk {
namespace {

std::string peer_path(const std::string& dir, const char* what) { return pool::scratch_pool_path(dir, what); }

// A stale file of ours (same pid, an earlier crashed run) would make PMDK refuse to create.
void remove_stale(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

}  // namespace

// --------------------------------------------------------------------------- libpmemlog

#ifdef PMLAB_HAVE_LIBPMEMLOG
bool PmemLog::available() noexcept { return true; }

Result<std::unique_ptr<PmemLog>> PmemLog::create(const std::string& dir, uint64_t bytes) {
  force_pmem_is_pmem();
  const std::string path = peer_path(dir, "pmemlog");
  remove_stale(path);
  PMEMlogpool* pool = pmemlog_create(path.c_str(), std::max<uint64_t>(bytes, PMEMLOG_MIN_POOL), 0600);
  if (pool == nullptr) return error(Errc::io_error, "pmemlog_create " + path + ": " + pmemlog_errormsg());
  return std::unique_ptr<PmemLog>(new PmemLog(pool, path));
}

PmemLog::~PmemLog() {
  pmemlog_close(static_cast<PMEMlogpool*>(pool_));
  remove_stale(path_);
}

bool PmemLog::append(const void* data, size_t len) noexcept {
  return pmemlog_append(static_cast<PMEMlogpool*>(pool_), data, len) == 0;
}
void PmemLog::rewind() noexcept { pmemlog_rewind(static_cast<PMEMlogpool*>(pool_)); }
void PmemLog::prefault() {
  std::vector<std::byte> chunk(1 << 20);
  while (append(chunk.data(), chunk.size())) {}
  while (append(chunk.data(), 4096)) {}
  rewind();
}
uint64_t PmemLog::bytes_used() const noexcept {
  return static_cast<uint64_t>(pmemlog_tell(static_cast<PMEMlogpool*>(pool_)));
}
#else
bool PmemLog::available() noexcept { return false; }
Result<std::unique_ptr<PmemLog>> PmemLog::create(const std::string&, uint64_t) {
  return error(Errc::unsupported, "pmlab was built without libpmemlog (install libpmemlog-dev and rebuild)");
}
PmemLog::~PmemLog() = default;
bool PmemLog::append(const void*, size_t) noexcept { return false; }
void PmemLog::rewind() noexcept {}
void PmemLog::prefault() {}
uint64_t PmemLog::bytes_used() const noexcept { return 0; }
#endif

// --------------------------------------------------------------------------- libpmemblk

#ifdef PMLAB_HAVE_LIBPMEMBLK
bool PmemBlk::available() noexcept { return true; }

Result<std::unique_ptr<PmemBlk>> PmemBlk::create(const std::string& dir, uint32_t block_bytes, uint64_t bytes) {
  force_pmem_is_pmem();
  const std::string path = peer_path(dir, "pmemblk");
  remove_stale(path);
  PMEMblkpool* pool = pmemblk_create(path.c_str(), block_bytes, std::max<uint64_t>(bytes, PMEMBLK_MIN_POOL), 0600);
  if (pool == nullptr) return error(Errc::io_error, "pmemblk_create " + path + ": " + pmemblk_errormsg());
  const uint64_t blocks = pmemblk_nblock(pool);
  return std::unique_ptr<PmemBlk>(new PmemBlk(pool, path, blocks));
}

PmemBlk::~PmemBlk() {
  pmemblk_close(static_cast<PMEMblkpool*>(pool_));
  remove_stale(path_);
}

bool PmemBlk::write(const void* block, uint64_t number) noexcept {
  return pmemblk_write(static_cast<PMEMblkpool*>(pool_), block, static_cast<long long>(number)) == 0;
}
void PmemBlk::prefault() {
  std::vector<std::byte> block(static_cast<size_t>(pmemblk_bsize(static_cast<PMEMblkpool*>(pool_))));
  for (uint64_t b = 0; b < blocks_; ++b) write(block.data(), b);
}
#else
bool PmemBlk::available() noexcept { return false; }
Result<std::unique_ptr<PmemBlk>> PmemBlk::create(const std::string&, uint32_t, uint64_t) {
  return error(Errc::unsupported, "pmlab was built without libpmemblk (install libpmemblk-dev and rebuild)");
}
PmemBlk::~PmemBlk() = default;
bool PmemBlk::write(const void*, uint64_t) noexcept { return false; }
void PmemBlk::prefault() {}
#endif

}  // namespace pmlab::pmdk
