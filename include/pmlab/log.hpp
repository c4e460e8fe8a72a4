// pmlab/log.hpp: a failure-atomic append-only log in a pool file, in C++.
//
//   auto log = pmlab::Log::create("/mnt/pmem/wal", 64 << 20, {.writer = "zero"});
//   uint64_t lsn = log.append(record.data(), record.size());     // durable when it returns
//   log.for_each([](const pmlab::LogEntry& e) { replay(e.data, e.size); });
//
// Writers ([PMemIO] in docs/references.md): "zero" makes an entry durable with one fence (the log is
// zeroed beforehand and an entry carries its bits' popcount, so a torn one never validates); "header"
// (libpmemlog's way) and "classic" with two; "header-dancing" spreads the size field over lines. A
// "-padded" suffix puts each entry on its own cache lines. `pmlab run primitives` measures which is
// fastest on a machine.
//
// Threads: appends through different lanes run in parallel; one lane takes one thread at a time.
// for_each and truncate are not concurrent with appends.
#ifndef PMLAB_LOG_HPP
#define PMLAB_LOG_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include <pmlab/error.hpp>
#include <pmlab/pmlab.h>

namespace pmlab {
inline namespace v0 {

// Options of Log::create.
struct LogOptions {
  std::string writer = "zero";  // zero, header, header-dancing, classic; each also "-padded"
  unsigned lanes = 1;           // concurrent appenders, each with an equal share of the pool
  // Entries stored as whole lines with non-temporal stores instead of through the cache: faster for
  // entries of a few hundred bytes and more on most PMEM (a choice of this process, not of the file).
  bool streaming = false;
};

// One entry as for_each visits it.
struct LogEntry {
  uint64_t lsn;      // its sequence number: entries are visited in this order
  unsigned lane;     // the lane it was appended through
  const void* data;  // valid during the visit only
  size_t size;       // its bytes, as appended
};

// What a log holds, and what its open recovered.
struct LogStats {
  unsigned lanes = 0;          // lanes the log was created with
  uint64_t lane_capacity = 0;  // bytes of entries one lane holds
  uint64_t recovered = 0;      // entries the open found
  uint64_t torn_tails = 0;     // appends the open found cut short, and discarded
};

// A log in a pool file, open in this process: one per pool (a second open is refused).
class Log {
 public:
  // Creates PATH (which must not exist) as a pool of `pool_bytes` holding an empty log: 1 MiB at least
  // (PMLAB_E_INVALID_ARGUMENT below), shared by the lanes. Crash-atomic, as every create (pool.hpp).
  static Log create(const std::string& path, uint64_t pool_bytes, const LogOptions& options = {});
  // Opens a log pool and recovers it: every entry whose append returned is kept, an append cut short by a
  // crash is gone whole, a truncation cut short is finished.
  static Log open(const std::string& path, bool streaming = false);

  // Movable, not copyable. Every append that returned is durable; destroying it only unmaps the pool.
  Log(Log&&) noexcept;
  Log& operator=(Log&&) noexcept;
  ~Log();

  // Appends through `lane` and returns the entry's sequence number once it is durable. Throws
  // Error(PMLAB_E_POOL_FULL) when the lane has no room (truncate, or use another lane);
  // Error(PMLAB_E_INVALID_ARGUMENT) for an entry larger than a whole lane, which no truncate makes room for.
  uint64_t append(unsigned lane, const void* data, size_t size);
  uint64_t append(const void* data, size_t size) { return append(0, data, size); }

  // Calls visit(const LogEntry&) for every entry in sequence order.
  template <class Visit>
  void for_each(Visit&& visit) const {
    using V = std::remove_reference_t<Visit>;
    for_each_erased([](void* v, const LogEntry& e) { (*static_cast<V*>(v))(e); },
                    const_cast<void*>(static_cast<const void*>(std::addressof(visit))));
  }
  // Discards every entry, failure-atomically (after a crash: all of them or none).
  void truncate();
  // Discards the entries with an LSN below `lsn` (what a checkpoint covers), failure-atomically: after a
  // crash all of them or none, and every entry from `lsn` on. A lane left with no entry is free again;
  // the others free the discarded entries' room at a later truncate(). An `lsn` below an earlier
  // truncation's discards nothing more; past the next append's: Error(PMLAB_E_INVALID_ARGUMENT).
  void truncate_before(uint64_t lsn);

  // The writer's name ("zero-padded"), the bytes a lane holds, the log's counters, its file.
  std::string writer() const;
  uint64_t lane_used(unsigned lane) const noexcept;
  LogStats stats() const noexcept;
  const std::string& path() const noexcept;

 private:
  struct Impl;
  explicit Log(std::unique_ptr<Impl> impl) noexcept;
  Impl& self() const;  // throws for a moved-from Log
  void for_each_erased(void (*visit)(void*, const LogEntry&), void* state) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace v0
}  // namespace pmlab

#endif  // PMLAB_LOG_HPP
