// Krizhanovsky's lock-free MPMC ring buffer ([KrizhanovskyRing], as [PMIdioBench] §6.3 uses it) with
// fixed-size slots copied in and out, in three designs:
//
//  volatile  the original algorithm: global head/tail taken with fetch_add, per-thread local head/tail
//            (the ticket a thread works on, or "none"), and last_head/last_tail, the earliest operation
//            still in flight, recomputed from the locals so no push overtakes an unfinished pop of the
//            same slot and vice versa. Nothing persisted.
//  txfree    (eADR) each slot carries a stamp word: ticket+1 once its data is written, with the consumed
//            bit once popped. A push persists (fences) its data, then stamps the slot and clears its
//            persistent push position; a pop stamps the slot consumed and fences. Recovery rolls back
//            every in-flight push (its position names the ticket), keeps every element whose consumed
//            stamp is not durable (the in-flight pops), and consolidates the survivors into one
//            contiguous run of tickets.
//  tx        (ADR and eADR) the same state changed inside a failure-atomic transaction: a per-thread undo
//            log in the pool receives the slot's old bytes (the whole slot for a push, its stamp for a
//            pop), is made durable and marked valid, then the slot is written in place, flushed, and the
//            log invalidated (commit). Recovery first rolls back every valid log, then consolidates like
//            txfree. This is the logging a PMDK transaction does for one tx_add_range of the slot.
//
// `flush_slots` (recommendation R5): also write back the slot data with clwb under eADR, where the
// persistence vocabulary elides flushes; only slot data, never the per-thread state or the log.
//
// Pool layout (offsets): root line, head line, tail line, one line per thread {local head, local tail,
// push position}, one undo log per thread (tx), then the slots (stamp + data, 64-byte aligned each).
// Everything is found by offsets; last_head/last_tail are recomputable and live in DRAM.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::lockfree {

enum class RingDesign : uint8_t { volatile_ring, tx, txfree };
const char* to_string(RingDesign d) noexcept;
std::optional<RingDesign> parse_ring_design(std::string_view name) noexcept;
std::vector<persist::Domain> claimed_domains(RingDesign d);

struct RingOptions {
  bool flush_slots = false;  // R5: clwb slot data even under eADR
  int max_threads = 2;
  // format(): the ticket of the first push, a multiple of the capacity. The ring starts as if that many
  // elements had been pushed and popped (every slot stamped consumed), so tickets and stamps go on from
  // there; a crash test starts just below 2^32, where a stamp's store changes both halves of its word.
  uint64_t first_ticket = 0;
};

class RingBuffer {
 public:
  static constexpr uint64_t kNone = UINT64_MAX;
  static uint64_t bytes_needed(uint32_t capacity, uint32_t slot_bytes, int max_threads) noexcept;
  // The design a formatted region's root names; nullopt when it holds no ring.
  static std::optional<RingDesign> design_of(const std::byte* base, size_t size) noexcept;
  // Whether a region's root is a ring's that recovery may trust: its magic, checksum and geometry.
  static Status check_root_of(const std::byte* base, size_t size);

  RingBuffer(RingDesign design, std::byte* base, size_t size, const persist::Persister& p);
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;

  // capacity: slots, a power of two. Lays out an empty ring and makes it durable.
  Status format(uint32_t capacity, uint32_t slot_bytes, const RingOptions& options);
  // After a crash: rolls back in-flight operations, consolidates the elements left, makes it durable.
  // `options` supplies what is not stored (flush_slots).
  Status recover(const RingOptions& options);

  // Copies slot_bytes from `data` into the next slot; waits while the ring is full.
  void push(int tid, const void* data) noexcept;
  // Copies the oldest element's slot_bytes into `out`; waits while the ring is empty.
  void pop(int tid, void* out) noexcept;

  // Quiescent only: the elements in order, each slot_bytes long, concatenated.
  std::vector<std::byte> contents() const;
  uint64_t size() const noexcept;  // elements (quiescent only)
  uint32_t capacity() const noexcept { return capacity_; }
  uint32_t slot_bytes() const noexcept { return slot_bytes_; }
  int threads() const noexcept { return threads_; }
  RingDesign design() const noexcept { return design_; }

 private:
  void attach_layout();
  uint64_t& head() const noexcept;
  uint64_t& tail() const noexcept;
  uint64_t* thread_line(int tid) const noexcept;  // [0] local head, [1] local tail, [2] push position
  std::byte* slot(uint64_t ticket) const noexcept;
  std::byte* undo(int tid) const noexcept;  // [0] valid word, [1] saved stamp, line 1.. saved slot
  uint64_t& root_move() const noexcept;
  // Recovery's steps, in the order recover() takes them.
  Status check_root() const;
  Status attach_slot_flusher(const RingOptions& options);
  Status roll_back_transactions();
  Status finish_move();
  Result<std::vector<std::pair<uint64_t, uint64_t>>> surviving_elements(uint64_t& consumed_end) const;
  void drop_pushes_in_flight();
  void consolidate(const std::vector<std::pair<uint64_t, uint64_t>>& elements, uint64_t consumed_end);
  // Recovery: moves the element of ticket `from` to ticket `to` under the root's move record.
  void move_element(uint64_t from, uint64_t to) noexcept;
  uint64_t take_ticket(uint64_t& local, uint64_t& counter) noexcept;
  void wait_for_space(uint64_t ticket) noexcept;
  void wait_for_data(uint64_t ticket) noexcept;
  void flush_data(const void* data, size_t len) const noexcept;

  RingDesign design_;
  std::byte* base_;
  size_t size_;
  const persist::Persister& p_;
  // Recovery wrote back a line no fence has followed yet (the end of recovery fences it).
  bool recovery_unfenced_ = false;
  std::optional<persist::Persister> slot_flusher_;  // R5 under eADR: an ADR persister used only to clwb
  uint32_t capacity_ = 0;
  uint32_t slot_bytes_ = 0;
  uint64_t stride_ = 0;
  int threads_ = 0;
  uint64_t threads_off_ = 0, undo_off_ = 0, undo_stride_ = 0, slots_off_ = 0;
  alignas(64) std::atomic<uint64_t> last_head_{0};
  alignas(64) std::atomic<uint64_t> last_tail_{0};
};

}  // namespace pmlab::lockfree
