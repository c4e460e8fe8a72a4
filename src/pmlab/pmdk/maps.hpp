// The suite's peers: PMDK's example maps (btree, ctree, rbtree, hashmap_tx, hashmap_atomic, skiplist),
// built at build time from the sources libpmemobj-dev installs (CMakeLists.txt, "ds suite" block), driven
// through their common map.h interface and wrapped in the interface the YCSB case asks of our structures.
//
// A record is the map's key -> a PMEMoid of `value_bytes`:
//  - insert of a new key: one transaction that allocates the value (pmemobj_tx_alloc), fills it and calls
//    the map's insert (nested in ours); hashmap_atomic, a non-transactional design, gets its value from an
//    atomic allocation (pmemobj_alloc with a constructor) and its own atomic insert, as its authors use it;
//  - update: map_get, then one transaction that undo-logs the value and overwrites it (map.h has no value
//    replacement; this is how a PMDK-Trans structure updates in place, for every map alike);
//  - read: map_get and a copy; scans: map.h has no range scan (runs with scans are skipped).
// The pool is a file of its own beside the run's pool, removed when the map is destroyed. PMDK's maps are
// not thread-safe: one thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::pmdk {

class Map {
 public:
  // The structure values of the YCSB case: pmdk-btree, pmdk-ctree, pmdk-rbtree, pmdk-hashmap-tx,
  // pmdk-hashmap-atomic, pmdk-skiplist.
  static const std::vector<std::string>& names();
  static bool is_pmdk(const std::string& structure);
  // Empty when the maps were built in; otherwise why not.
  static std::string unavailable_reason();

  static Result<std::unique_ptr<Map>> create(const std::string& structure, const std::string& path, uint64_t pool_bytes,
                                             uint32_t value_bytes);
  // Pool bytes for `records` records of `value_bytes` (values, map nodes, allocator headers, rebuilds).
  static uint64_t pool_bytes_for(uint64_t records, uint32_t value_bytes) noexcept;
  ~Map();
  Map(const Map&) = delete;
  Map& operator=(const Map&) = delete;

  bool insert(uint64_t key, uint64_t record, const std::byte* value) noexcept;
  bool update(uint64_t key, uint64_t record, const std::byte* value) noexcept;
  bool read(uint64_t key, uint64_t record, std::byte* out) noexcept;
  uint32_t scan(uint64_t, uint64_t, uint32_t, std::byte*) noexcept { return 0; }
  uint64_t count() const noexcept;
  Status check() const;
  // Closes and reopens the pool (PMDK's recovery), then runs the map's own init (hashmap_atomic: its
  // recovery of an interrupted rebuild and count).
  Status reopen();
  // Transactions that ended aborted so far.
  uint64_t aborts() const noexcept { return aborts_; }

 private:
  struct Impl;
  explicit Map(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  uint64_t aborts_ = 0;
};

}  // namespace pmlab::pmdk
