// The peer of pmlab's PTMs: PMDK libpmemobj transactions (undo logging, its own allocator) behind the
// interface of ptm/common/ptm.hpp, so every ptm workload runs on it unchanged.
//
// Mapping: run() = pmemobj_tx_begin … pmemobj_tx_commit / pmemobj_tx_end; write() snapshots the word with
// pmemobj_tx_add_range_direct (PMDK merges repeated ranges) then stores it; read() is a plain load;
// alloc()/free() = pmemobj_tx_alloc / pmemobj_tx_free; offsets are PMEMoid offsets from the pool base. As
// PMDK documents, an object allocated in the running transaction is not snapshotted, so its payload is
// written without add_range (the same exemption pmlab's PTMs make). Roots live in PMDK's root object.
//
// PMDK transactions are not isolated: the same global lock as pmlab's PTMs serializes them.
// The pool is its own file (PMDK cannot share pmlab's pool); on an emulated medium pmem_is_pmem must be
// forced (PMEM_IS_PMEM_FORCE=1) or PMDK would msync.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::pmdk {

class ObjPtm {
 public:
  static constexpr const char* kName = "pmdk";
  // Words of the root object: the entry points a ptm workload keeps (at least ptm::kRoots).
  static constexpr int kRootWords = 16;

  static bool available() noexcept;
  // Creates the pool file `path` of `bytes` (removed by the destructor).
  static Result<std::unique_ptr<ObjPtm>> create(const std::string& path, uint64_t bytes);
  ~ObjPtm();
  ObjPtm(const ObjPtm&) = delete;
  ObjPtm& operator=(const ObjPtm&) = delete;

  class Tx {
   public:
    explicit Tx(ObjPtm& ptm) noexcept : ptm_(ptm) {}
    uint64_t read(const uint64_t* word) const noexcept { return *word; }
    void write(uint64_t* word, uint64_t value);
    uint64_t alloc(uint64_t bytes);
    void free(uint64_t off);
    template <class T>
    T* at(uint64_t off) const noexcept {
      return reinterpret_cast<T*>(ptm_.base_ + off);
    }
    uint64_t* root(int i) const noexcept { return ptm_.roots_ + i; }

   private:
    ObjPtm& ptm_;
    // [begin, end) offsets of objects this transaction allocated: written without a snapshot.
    std::vector<std::pair<uint64_t, uint64_t>> fresh_;
  };

  template <class F>
  void run(int /*slot*/, F&& body) {
    std::lock_guard<std::mutex> guard(lock_);
    begin();
    ++transactions_;
    Tx tx(*this);
    body(tx);
    commit();
  }

  // Words snapshotted with pmemobj_tx_add_range_direct, and transactions run (all threads, under the lock).
  uint64_t ranges_added() const noexcept { return ranges_; }
  uint64_t transactions() const noexcept { return transactions_; }
  // PMDK's statistics: bytes of objects allocated (pmemobj_ctl "stats.heap.curr_allocated"), -1 if off.
  int64_t allocated_bytes() const;
  const std::string& path() const noexcept { return path_; }

 private:
  ObjPtm() = default;
  void begin();
  void commit();

  void* pop_ = nullptr;
  std::byte* base_ = nullptr;
  uint64_t* roots_ = nullptr;
  uint64_t uuid_lo_ = 0;
  std::string path_;
  std::mutex lock_;
  uint64_t ranges_ = 0;        // guarded by lock_
  uint64_t transactions_ = 0;  // guarded by lock_
};

}  // namespace pmlab::pmdk
