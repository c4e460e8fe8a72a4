// Failure-atomic log writers ([PMemIO] §3.3): one append / recover / iterate / truncate interface over
// four ways of making an appended entry durable, each with and without cache-line padding.
//
//   classic         header + payload, barrier, then a footer that repeats the entry's tag, barrier (2)
//   header          header + payload, barrier, then the lane's size field, barrier (2; libpmemlog's way)
//   header-dancing  like header, but the size is written round-robin to one of N fields on their own
//                   cache lines, so consecutive appends never persist the same line twice (2)
//   zero            the log is zeroed beforehand; the entry carries the popcount of its bits, so one
//                   barrier makes it durable and a torn entry can never validate (1)
//
// Padding puts every entry on its own cache lines (and classic's footer on a line of its own), so an
// append never writes back a line the previous one wrote back ([PMemIO] Figure 6, right).
//
// Stores: an entry's lines go through the cache and are written back by the persister's flush
// (`cached`), or are written as whole lines with non-temporal stores (`streaming`; [PMemIO] §2:
// streaming stores should be used when possible, and libpmem's copies do the same above 256 bytes).
// A streamed line must be whole, or it would merge with whatever the cache holds of it: each lane keeps
// its last partial line in DRAM, so an entry that starts mid-line is stored without reading the line
// back, and the bytes after an entry's end in its last line are stored as zero.
//
// Concurrency: the log is split into lanes, each a sub-log with its own tail. A lane is used by one
// thread at a time; different lanes append concurrently without sharing a line. Every entry gets a
// log-wide sequence number (LSN) from one counter, so iteration returns entries in LSN order across
// lanes, and an append that returned before another began has the smaller LSN.
//
// Everything in the region is addressed by offsets: a log recovers at any address.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::pool {
class Pool;
}

namespace pmlab::primitives::log {

// An entry header's two words, as appends store them (on_media::header_words).
using HeaderWords = std::array<uint64_t, 2>;

enum class Kind : uint8_t { classic = 1, header = 2, header_dancing = 3, zero = 4 };

const char* to_string(Kind k) noexcept;
Result<Kind> parse_kind(std::string_view text);  // "classic", "header", "header-dancing", "zero"
// The writer's full name: "zero", "zero-padded", …; parse_writer accepts it.
std::string writer_name(Kind k, bool padded);
struct WriterChoice {
  Kind kind;
  bool padded;
};
Result<WriterChoice> parse_writer(std::string_view text);
// Persistency barriers (fences) one append issues.
int barriers_per_append(Kind k) noexcept;

// How appends store an entry's lines; a choice of the writing process, not recorded on the media.
enum class Stores : uint8_t { cached, streaming };
const char* to_string(Stores s) noexcept;
Result<Stores> parse_stores(std::string_view text);  // "cached", "streaming"

struct Options {
  Kind kind = Kind::zero;
  bool padded = false;
  Stores stores = Stores::cached;
  uint32_t lanes = 1;           // concurrent appenders; the region is divided evenly between them
  uint32_t dancing_slots = 64;  // size fields per lane for header-dancing ([PMemIO] used 64)
  // The id written into the superblock, which tells this log's entries from a former log's in the same
  // region. 0: a fresh random id. Set it where the bytes must repeat (a crash test runs its stream twice).
  uint64_t log_id = 0;
  // The LSN of the first append (at least 1: 0 is never an LSN). A log that must go on where another
  // left off starts above its last LSN; a crash test starts just below 2^32, so LSNs and the watermark
  // change both halves of their words.
  uint64_t first_lsn = 1;
};

// One entry as recovery or iteration sees it; payload points into the log's region.
struct Entry {
  uint64_t lsn = 0;
  uint32_t lane = 0;
  std::span<const std::byte> payload;
};

// What recovery found: per lane, the entries kept and whether a torn tail was cut off.
struct RecoveryReport {
  uint64_t entries = 0;
  uint64_t torn_tails = 0;   // lanes whose last append was in flight and was discarded
  uint64_t stale_lanes = 0;  // lanes a crash left half truncated, emptied now
  uint64_t next_lsn = 0;
};

// Where things are in a log's region (from the superblock once formatted).
struct Geometry {
  uint32_t slots_per_lane = 0;
  uint64_t slots_offset = 0;
  uint64_t data_offset = 0;
  uint64_t lane_bytes = 0;
  uint64_t region_bytes = 0;
  uint64_t log_id = 0;
};

class Log {
 public:
  // Writers are built by format and open (abstract: this only serves the writers' constructors).
  Log(std::span<std::byte> region, const persist::Persister& persister, const Options& options,
      const Geometry& geometry);
  virtual ~Log() = default;
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // Lays out an empty log in `region` (region_bytes(options, 4 KiB) at least; lanes share all of it) and
  // returns it open. Overwrites the region; a zero log zeroes all of it. The persister must outlive the log.
  static Result<std::unique_ptr<Log>> format(std::span<std::byte> region, const persist::Persister& persister,
                                             const Options& options);
  // Opens a formatted region and recovers it: every entry whose append returned is kept, a torn last
  // entry of a lane is discarded (and, for zero, its bytes zeroed again), a half-done truncation is
  // finished. `stores` is how this process's appends will store entries.
  static Result<std::unique_ptr<Log>> open(std::span<std::byte> region, const persist::Persister& persister,
                                           Stores stores = Stores::cached);
  // Verifies the region read-only: the superblock, and that every lane parses into entries.
  static Status check(std::span<const std::byte> region);
  // Smallest region that holds a log with these options and `lane_bytes` of entries per lane.
  static uint64_t region_bytes(const Options& options, uint64_t lane_bytes);
  // Bytes one entry of `payload` bytes occupies in a lane.
  static uint64_t entry_bytes(Kind kind, bool padded, uint64_t payload) noexcept;

  // Appends one entry through `lane` and returns its LSN once it is durable. The lane must not be in use
  // by another thread. Fails with pool_full when the lane has no room (truncate, or use another lane),
  // invalid_argument for a lane the log does not have.
  virtual Result<uint64_t> append(uint32_t lane, const void* payload, size_t len) noexcept = 0;

  // Every entry, in LSN order. Not concurrent with append or truncate.
  void for_each(const std::function<void(const Entry&)>& visit) const;
  std::vector<Entry> entries() const;
  // Discards every entry, failure-atomically: after a crash the log holds all of them or none.
  // Not concurrent with append.
  Status truncate();
  // Discards every entry with an LSN below `lsn` (a checkpoint's: what it covers is no longer needed),
  // failure-atomically: after a crash the log holds all of them or none, and every entry from `lsn` on.
  // A lane left with no entry is emptied; the others keep the discarded entries' space, which iteration
  // and recovery skip, until a truncation empties them. A watermark never goes down: an `lsn` below the
  // last truncation's discards nothing more. invalid_argument for an `lsn` past the next append's.
  // Not concurrent with append.
  Status truncate_before(uint64_t lsn);

  const Options& options() const noexcept { return options_; }
  std::string name() const { return writer_name(options_.kind, options_.padded); }
  uint32_t lanes() const noexcept { return options_.lanes; }
  uint64_t lane_capacity() const noexcept { return lane_bytes_; }
  uint64_t lane_used(uint32_t lane) const noexcept { return lane < options_.lanes ? lanes_[lane].tail : 0; }
  const RecoveryReport& recovery() const noexcept { return recovery_; }

 protected:
  // Per-lane state in DRAM, one cache line each so concurrent appenders never share a line.
  struct alignas(64) LaneState {
    uint64_t tail = 0;     // bytes of the lane holding entries
    uint64_t appends = 0;  // appends since open or truncate (header-dancing picks its size field by it)
    uint64_t last_lsn = 0;
    // Streaming: the lane's line at `tail_line_offset`, the one holding `tail` — its bytes before the
    // tail as the media has them, zero after.
    uint64_t tail_line_offset = 0;
    alignas(64) std::array<std::byte, 64> tail_line{};
  };

  // Writer hooks. recover_lane finds the lane's durable tail, keeps it in lanes_[lane], reports stale or
  // torn tails; `repair` false for the read-only check. reset_lane empties a lane durably (no fence).
  virtual Status recover_lane(uint32_t lane, bool repair) = 0;
  virtual void reset_lane(uint32_t lane) = 0;
  // Whether reset_lane and recover_lane write at all (a classic lane is disowned by the watermark alone,
  // and its recovery only reads: the next append overwrites a torn tail).
  virtual bool rewrites_lanes() const noexcept { return true; }
  // Makes freshly formatted space appendable (a zero log zeroes it). Not fenced: whether it wrote back
  // anything to fence.
  virtual bool prepare_format() { return false; }

  inline std::byte* lane_data(uint32_t lane) const noexcept;
  uint64_t* size_slot(uint32_t lane, uint32_t slot) const noexcept;
  uint64_t first_lsn() const noexcept;
  uint64_t log_id() const noexcept { return geometry_.log_id; }
  uint64_t next_lsn() noexcept {
    // One lane has one appender at a time, ordered by whoever hands the lane over: no locked add needed
    // (it costs a full barrier's worth of waiting on x86, a tenth of a streamed append).
    if (options_.lanes == 1) {
      const uint64_t lsn = next_lsn_.load(std::memory_order_relaxed);
      next_lsn_.store(lsn + 1, std::memory_order_relaxed);
      return lsn;
    }
    return next_lsn_.fetch_add(1, std::memory_order_relaxed);
  }
  // Why an entry of `payload` bytes found no room in the lane: full for now (a truncate makes room), or
  // too large for any lane (an invalid argument).
  Status no_room(uint32_t lane, Kind kind, uint64_t payload) const;
  Status no_such_lane(uint32_t lane) const;

  // Where an append of `len` payload bytes goes: the lane and size checks every writer makes first, then
  // the entry's place and LSN. finish_append advances the lane once the writer made the entry durable.
  struct Reservation {
    std::byte* at = nullptr;  // the entry's first byte
    uint64_t bytes = 0;       // the entry's footprint in the lane
    uint64_t lsn = 0;
  };
  // The append path (reserve, finish_append, store_entry, stream_entry) is defined inline in writers.hpp.
  // After the previous append's fence every store waits in the store queue for the drain, and call
  // frames and returned structs are stores: out of line, this path would make a short append measurably
  // slower (docs/primitives.md, "Stores").
  inline Result<Reservation> reserve(uint32_t lane, Kind kind, size_t len) noexcept;
  inline void finish_append(uint32_t lane, const Reservation& entry) noexcept;

  // Stores the entry header `head` then `body` contiguously at dst, a place in `lane` at or past its tail,
  // and writes both back the way options_.stores says (cached: non-temporal body for flush=ntstore),
  // without a fence.
  inline void store_entry(uint32_t lane, std::byte* dst, const HeaderWords& head, const void* body,
                          size_t body_len) noexcept;
  // An 8-byte word of an entry (classic's footer), stored and written back, without a fence.
  void store_entry_word(uint32_t lane, uint64_t* word, uint64_t value) noexcept;
  // A lane's size field (a word alone on its line), stored atomically and written back, without a fence.
  // Streaming stores its line whole (Persister::store_word_line): no read-for-ownership of the line first.
  void store_size_field(uint64_t* field, uint64_t value) const noexcept;
  // Walks entries [0, end) of a lane by their size fields; false when one does not fit.
  bool walk(uint32_t lane, uint64_t end, const std::function<void(uint64_t offset, const Entry&)>& visit) const;

  std::span<std::byte> region_;
  const persist::Persister& persister_;
  Options options_;
  Geometry geometry_;
  uint64_t lane_bytes_ = 0;
  std::unique_ptr<LaneState[]> lanes_;
  RecoveryReport recovery_;
  bool recovery_wrote_ = false;  // a recover_lane wrote a repair back: the recovery's one fence orders them
  alignas(64) std::atomic<uint64_t> next_lsn_{1};

 private:
  static std::unique_ptr<Log> make(std::span<std::byte> region, const persist::Persister& persister,
                                   const Options& options, const Geometry& geometry);
  static Result<Geometry> plan(const Options& options, uint64_t region_size);
  static Result<std::unique_ptr<Log>> load(std::span<std::byte> region, const persist::Persister& persister,
                                           Stores stores);
  Status recover(bool repair);
  // Streaming: `words` then `body` at dst as whole non-temporal lines (see Stores), the first line starting
  // with the lane's bytes before dst.
  inline void stream_entry(uint32_t lane, std::byte* dst, const uint64_t* words, uint32_t word_count, const void* body,
                           size_t body_len) noexcept;
  // store_entry through the cache (and flush), out of line.
  void store_entry_cached(std::byte* dst, const HeaderWords& head, const void* body, size_t body_len) noexcept;
  // Loads the lane's tail line from the media (after recovery found the tail).
  void remember_tail_line(uint32_t lane) noexcept;
};

// A pool file holding one log in its data area: layout "log", recovered by Pool::recover and checked by
// `pmlab pool check`.
inline constexpr const char* kPoolLayout = "log";
// Creates PATH (never overwrites) with a formatted log in its data area.
Result<std::unique_ptr<pool::Pool>> create_pool(const std::string& path, uint64_t size, const Options& options);
// The log in an open pool of layout "log", recovered. The pool must outlive it.
Result<std::unique_ptr<Log>> open_in_pool(pool::Pool& pool);

}  // namespace pmlab::primitives::log
