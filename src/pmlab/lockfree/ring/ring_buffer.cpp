#include "pmlab/lockfree/ring/ring_buffer.hpp"

#include <algorithm>
#include <thread>
#include <utility>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/common/hash.hpp"

namespace pmlab::lockfree {
namespace {

constexpr uint64_t kLine = 64;
constexpr uint64_t kRingMagic = 0x706d6c61622d7262ULL;  // "pmlab-rb"
constexpr uint64_t kConsumed = uint64_t{1} << 63;
constexpr uint64_t kUndoPush = uint64_t{1} << 62;  // undo log kind bits beside the slot index + 1
constexpr uint64_t kUndoPop = uint64_t{1} << 61;

struct alignas(64) Root {
  uint64_t magic;
  uint64_t design;
  uint64_t capacity;
  uint64_t slot_bytes;
  uint64_t max_threads;
  // The consolidation move in progress, (source slot + 1) << 32 | (destination slot + 1); 0: none. A crash
  // between a move's copy and the clearing of its source would leave the element twice.
  uint64_t move;
  // fnv1a64 of design .. max_threads, which never change after format: a flipped bit there would make the
  // ring copy another record size in and out of the caller's buffers. 0 in a root of an older format.
  uint64_t check;
  uint64_t pad;
};

uint64_t root_check(const Root& r) noexcept { return fnv1a64_between(r, &Root::design, &Root::move); }

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
uint64_t stride_of(uint32_t slot_bytes) { return round_up(8 + static_cast<uint64_t>(slot_bytes), kLine); }

void relax(const persist::Persister& p, uint64_t& spins) noexcept {
  if (++spins % 64 == 0)
    std::this_thread::yield();  // the thread we wait for may not be running (fewer cores than threads)
  else p.spin_wait();
}

}  // namespace

namespace {
constexpr auto kDesignNames = enum_names<RingDesign>(
    "ring design", {{RingDesign::volatile_ring, "volatile"}, {RingDesign::tx, "tx"}, {RingDesign::txfree, "txfree"}});
}  // namespace

const char* to_string(RingDesign d) noexcept { return kDesignNames.name(d); }
std::optional<RingDesign> parse_ring_design(std::string_view name) noexcept { return kDesignNames.find(name); }

std::vector<persist::Domain> claimed_domains(RingDesign d) {
  using persist::Domain;
  switch (d) {
    case RingDesign::volatile_ring: return {Domain::none};
    case RingDesign::tx: return {Domain::adr, Domain::eadr};
    case RingDesign::txfree: return {Domain::eadr};
  }
  return {};
}

uint64_t RingBuffer::bytes_needed(uint32_t capacity, uint32_t slot_bytes, int max_threads) noexcept {
  const uint64_t t = static_cast<uint64_t>(max_threads);
  return 3 * kLine + t * kLine + t * (kLine + stride_of(slot_bytes)) +
         static_cast<uint64_t>(capacity) * stride_of(slot_bytes);
}

std::optional<RingDesign> RingBuffer::design_of(const std::byte* base, size_t size) noexcept {
  if (size < sizeof(Root)) return std::nullopt;
  const Root& r = *reinterpret_cast<const Root*>(base);
  if (r.magic != kRingMagic) return std::nullopt;
  for (const RingDesign d : {RingDesign::volatile_ring, RingDesign::tx, RingDesign::txfree})
    if (r.design == static_cast<uint64_t>(d)) return d;
  return std::nullopt;
}

RingBuffer::RingBuffer(RingDesign design, std::byte* base, size_t size, const persist::Persister& p)
    : design_(design), base_(base), size_(size), p_(p) {}

void RingBuffer::attach_layout() {
  const Root& r = *reinterpret_cast<const Root*>(base_);
  capacity_ = static_cast<uint32_t>(r.capacity);
  slot_bytes_ = static_cast<uint32_t>(r.slot_bytes);
  threads_ = static_cast<int>(r.max_threads);
  stride_ = stride_of(slot_bytes_);
  threads_off_ = 3 * kLine;
  undo_off_ = threads_off_ + static_cast<uint64_t>(threads_) * kLine;
  undo_stride_ = kLine + stride_;
  slots_off_ = undo_off_ + static_cast<uint64_t>(threads_) * undo_stride_;
  // Head, tail and each thread's local head and tail are for the threads only: recovery recomputes
  // them from the slots' stamps and never reads them.
  p_.declare_volatile(&head(), 8);
  p_.declare_volatile(&tail(), 8);
  for (int t = 0; t < threads_; ++t) p_.declare_volatile(thread_line(t), 16);
}

uint64_t& RingBuffer::head() const noexcept { return *reinterpret_cast<uint64_t*>(base_ + kLine); }
uint64_t& RingBuffer::tail() const noexcept { return *reinterpret_cast<uint64_t*>(base_ + 2 * kLine); }
uint64_t* RingBuffer::thread_line(int tid) const noexcept {
  return reinterpret_cast<uint64_t*>(base_ + threads_off_ + static_cast<uint64_t>(tid) * kLine);
}
std::byte* RingBuffer::slot(uint64_t ticket) const noexcept {
  return base_ + slots_off_ + (ticket & (capacity_ - 1)) * stride_;
}
std::byte* RingBuffer::undo(int tid) const noexcept {
  return base_ + undo_off_ + static_cast<uint64_t>(tid) * undo_stride_;
}

void RingBuffer::flush_data(const void* data, size_t len) const noexcept {
  if (slot_flusher_) slot_flusher_->flush(data, len);
  else p_.flush(data, len);
}

Status RingBuffer::format(uint32_t capacity, uint32_t slot_bytes, const RingOptions& options) {
  if (capacity < 2 || (capacity & (capacity - 1)) != 0)
    return error(Errc::invalid_argument, "ring capacity must be a power of two >= 2");
  if (options.max_threads < 1 || options.max_threads > 64)
    return error(Errc::invalid_argument, "max_threads out of range");
  if (bytes_needed(capacity, slot_bytes, options.max_threads) > size_)
    return error(Errc::no_space, "region too small for the ring");
  if (options.first_ticket % capacity != 0 || options.first_ticket >= kConsumed / 2)
    return error(Errc::invalid_argument, "the first ticket must be a multiple of the capacity below 2^62");
  // What holds its formatted value already (a new pool's zeros) is only read (store_changed).
  Root root{kRingMagic,
            static_cast<uint64_t>(design_),
            capacity,
            slot_bytes,
            static_cast<uint64_t>(options.max_threads),
            0,
            0,
            0};
  root.check = root_check(root);
  size_t written = p_.store_changed(base_, &root, sizeof root);
  attach_layout();  // from the root just stored
  written += p_.zero_changed(base_ + kLine, threads_off_ - kLine);
  const uint64_t thread_line_formatted[kLine / 8] = {kNone, kNone, kNone};
  for (int t = 0; t < threads_; ++t) written += p_.store_changed(thread_line(t), thread_line_formatted, kLine);
  written += p_.zero_changed(base_ + undo_off_, slots_off_ - undo_off_);
  // Slot i last held ticket first_ticket - capacity + i, consumed: recovery goes on from first_ticket.
  for (uint64_t i = 0; i < capacity_; ++i) {
    const uint64_t stamp = options.first_ticket == 0 ? 0 : (options.first_ticket - capacity_ + i + 1) | kConsumed;
    written += p_.store_changed(slot(i), &stamp, 8);
  }
  if (written > 0) p_.fence();
  return recover(options);
}

Status RingBuffer::check_root() const {
  PMLAB_TRY(check_root_of(base_, size_));
  if (reinterpret_cast<const Root*>(base_)->design != static_cast<uint64_t>(design_))
    return error(Errc::corrupted, "not a ring of this design");
  return Status::success();
}

Status RingBuffer::check_root_of(const std::byte* base, size_t size) {
  if (!design_of(base, size)) return error(Errc::corrupted, "the root names no ring");
  const Root& r = *reinterpret_cast<const Root*>(base);
  PMLAB_TRY(verify_root_check(r.check, root_check(r), "ring root"));
  if (r.capacity < 2 || (r.capacity & (r.capacity - 1)) != 0 || r.max_threads < 1 || r.max_threads > 64 ||
      r.slot_bytes > (1u << 24) ||
      bytes_needed(static_cast<uint32_t>(r.capacity), static_cast<uint32_t>(r.slot_bytes),
                   static_cast<int>(r.max_threads)) > size)
    return error(Errc::corrupted, "ring root describes a larger region");
  return Status::success();
}

Status RingBuffer::attach_slot_flusher(const RingOptions& options) {
  slot_flusher_.reset();
  if (!options.flush_slots || p_.domain() != persist::Domain::eadr) return Status::success();
  persist::Config c = p_.config();
  c.domain = persist::Domain::adr;
  if (c.flush == persist::FlushInstruction::ntstore) c.flush = persist::best_line_flush(platform::CpuFeatures::host());
  auto flusher = p_.derive(c);
  if (!flusher) return flusher.status();
  slot_flusher_.emplace(*flusher);
  return Status::success();
}

Status RingBuffer::recover(const RingOptions& options) {
  if (Status s = check_root(); !s) return s;
  attach_layout();
  if (Status s = attach_slot_flusher(options); !s) return s;
  if (design_ == RingDesign::volatile_ring) {
    // Nothing survives: an empty ring.
    head() = tail() = 0;
    for (int t = 0; t < threads_; ++t) thread_line(t)[0] = thread_line(t)[1] = thread_line(t)[2] = kNone;
    last_head_.store(0);
    last_tail_.store(0);
    return Status::success();
  }
  if (design_ == RingDesign::tx)
    if (Status s = roll_back_transactions(); !s) return s;
  if (Status s = finish_move(); !s) return s;
  uint64_t consumed_end = 0;
  auto elements = surviving_elements(consumed_end);
  if (!elements) return elements.status();
  if (design_ == RingDesign::txfree) drop_pushes_in_flight();
  consolidate(*elements, consumed_end);
  return Status::success();
}

// 1. tx: rolls back every transaction that did not commit.
Status RingBuffer::roll_back_transactions() {
  for (int t = 0; t < threads_; ++t) {
    uint64_t* log = reinterpret_cast<uint64_t*>(undo(t));
    if (log[0] == 0) continue;
    const uint64_t index = (log[0] & ~(kUndoPush | kUndoPop)) - 1;
    if (index >= capacity_) return error(Errc::corrupted, "undo log names slot " + std::to_string(index));
    std::byte* s = slot(index);
    if (log[0] & kUndoPush) std::memcpy(s, undo(t) + kLine, stride_);
    else *reinterpret_cast<uint64_t*>(s) = log[1];
    p_.persist(s, stride_);
    p_.store8(&log[0], 0);
    // Durable at the next fence (the first move's record, or the end of recovery): until then a crash
    // only repeats this roll-back, from the same log.
    p_.flush(log, 8);
    recovery_unfenced_ = true;
  }
  return Status::success();
}

// 2. Finishes a move an earlier recovery did not finish (the undo logs were cleared before it began).
Status RingBuffer::finish_move() {
  const uint64_t move = root_move();
  if (move == 0) return Status::success();
  const uint64_t from = (move >> 32) - 1, to = (move & 0xffffffffu) - 1;
  if (from >= capacity_ || to >= capacity_ || from == to) return error(Errc::corrupted, "ring root names a bad move");
  const uint64_t stamp = *reinterpret_cast<const uint64_t*>(slot(from));
  // Still stamped: the copy may be incomplete, so it is made again; else the source was cleared after
  // the copy was durable.
  if (stamp != 0 && (stamp & kConsumed) == 0) {
    const uint64_t ticket = stamp - 1, distance = (from - to) & (capacity_ - 1);
    if ((ticket & (capacity_ - 1)) != from || ticket < distance)
      return error(Errc::corrupted,
                   "the move's source slot " + std::to_string(from) + " holds ticket " + std::to_string(ticket));
    move_element(ticket, ticket - distance);
  }
  // The record stays until the end of recovery: its source is clear now, so a redo would do nothing.
  return Status::success();
}

// 3. The elements: slots stamped with a ticket and not consumed, less txfree's in-flight pushes, less
// those below the newest consumed ticket. Pops claim tickets in order and a pop returns only once its
// consumed stamp is durable, so an unconsumed ticket below a consumed one was claimed by a pop still in
// flight: it counts as popped. (Kept, it would come back after a pop that returned a later element,
// which no order of the operations explains.)
Result<std::vector<std::pair<uint64_t, uint64_t>>> RingBuffer::surviving_elements(uint64_t& consumed_end) const {
  consumed_end = 0;  // newest consumed ticket + 1
  for (uint64_t i = 0; i < capacity_; ++i) {
    const uint64_t stamp = *reinterpret_cast<const uint64_t*>(slot(i));
    if (stamp & kConsumed) consumed_end = std::max(consumed_end, stamp & ~kConsumed);
  }
  std::vector<std::pair<uint64_t, uint64_t>> elements;  // ticket, slot index
  for (uint64_t i = 0; i < capacity_; ++i) {
    const uint64_t stamp = *reinterpret_cast<const uint64_t*>(slot(i));
    if (stamp == 0 || (stamp & kConsumed) || stamp < consumed_end) continue;
    const uint64_t ticket = stamp - 1;
    if ((ticket & (capacity_ - 1)) != i)
      return error(Errc::corrupted, "slot " + std::to_string(i) + " stamped with ticket " + std::to_string(ticket));
    bool in_flight = false;
    for (int t = 0; t < threads_ && design_ == RingDesign::txfree; ++t) in_flight |= thread_line(t)[2] == ticket;
    if (!in_flight) elements.emplace_back(ticket, i);
  }
  std::sort(elements.begin(), elements.end());
  if (!elements.empty() && elements.back().first - elements.front().first >= capacity_)
    return error(Errc::corrupted, "elements span more than one lap of the ring");
  return elements;
}

// txfree: the in-flight pushes are dropped for good before anything moves (a moved element may take the
// ticket of one, and must not then be taken for it). eADR only: the fence makes the stores durable.
void RingBuffer::drop_pushes_in_flight() {
  bool any = false;
  for (int t = 0; t < threads_; ++t) {
    uint64_t& position = thread_line(t)[2];
    if (position == kNone) continue;
    uint64_t* stamp = reinterpret_cast<uint64_t*>(slot(position));
    if (*stamp == position + 1) p_.store8(stamp, 0);
    position = kNone;  // plain, as push stores it: a torn position names no ticket
    any = true;
  }
  if (any) {
    p_.fence();
    recovery_unfenced_ = false;
  }
}

// 4. Consolidates: moves the survivors down into tickets base, base+1, ... (never onto an unread source),
// one move at a time under the root's move record. Tickets go on from the consumed ones, so that the rule
// of surviving_elements holds for the next recovery too.
void RingBuffer::consolidate(const std::vector<std::pair<uint64_t, uint64_t>>& elements, uint64_t consumed_end) {
  const uint64_t base = elements.empty() ? consumed_end : elements.front().first;
  for (size_t k = 0; k < elements.size(); ++k) {
    if (elements[k].first != base + k) move_element(elements[k].first, base + k);
  }
  for (uint64_t ticket = base + elements.size(); ticket < base + capacity_; ++ticket) {
    uint64_t& stamp = *reinterpret_cast<uint64_t*>(slot(ticket));
    if (stamp != 0 && (stamp & kConsumed) == 0) {
      stamp = 0;
      p_.flush(&stamp, 8);
      recovery_unfenced_ = true;
    }
  }
  if (root_move() != 0) {
    p_.store8(&root_move(), 0);
    p_.flush(&root_move(), 8);
    recovery_unfenced_ = true;
  }
  // The counters are rebuilt here and declared volatile: nothing needs ordering against them, and only
  // the cleared stamps must be durable before recovery returns.
  head() = base + elements.size();
  tail() = base;
  for (int t = 0; t < threads_; ++t) {
    uint64_t* line = thread_line(t);
    line[0] = line[1] = kNone;  // [2], the push position, was reset by drop_pushes_in_flight
  }
  // The cleared stamps and logs durable; a recovery that cleared nothing has nothing to fence.
  if (recovery_unfenced_) p_.fence();
  recovery_unfenced_ = false;
  last_head_.store(head());
  last_tail_.store(tail());
}

uint64_t& RingBuffer::root_move() const noexcept { return reinterpret_cast<Root*>(base_)->move; }

void RingBuffer::move_element(uint64_t from, uint64_t to) noexcept {
  const uint64_t from_slot = from & (capacity_ - 1), to_slot = to & (capacity_ - 1);
  p_.store8(&root_move(), (from_slot + 1) << 32 | (to_slot + 1));
  p_.persist(&root_move(), 8);
  std::memcpy(slot(to) + 8, slot(from) + 8, slot_bytes_);
  *reinterpret_cast<uint64_t*>(slot(to)) = to + 1;  // plain: the record redoes a torn copy
  p_.persist(slot(to), stride_);
  p_.store8(reinterpret_cast<uint64_t*>(slot(from)), 0);
  p_.persist(slot(from), 8);
  recovery_unfenced_ = false;
}

void RingBuffer::wait_for_space(uint64_t ticket) noexcept {
  uint64_t spins = 0;
  while (ticket >= last_tail_.load(std::memory_order_acquire) + capacity_) {
    uint64_t min = p_.word(&tail()).load(std::memory_order_seq_cst);
    for (int t = 0; t < threads_; ++t) min = std::min(min, p_.word(&thread_line(t)[1]).load(std::memory_order_seq_cst));
    last_tail_.store(min, std::memory_order_release);
    if (ticket < min + capacity_) break;
    relax(p_, spins);
  }
}

// The next ticket of `counter` (head for a push, tail for a pop), announced in `local` (the thread's local
// head or tail): first a lower bound of it, so the other side never passes a ticket it has not seen.
uint64_t RingBuffer::take_ticket(uint64_t& local, uint64_t& counter) noexcept {
  p_.word(&local).store(p_.word(&counter).load(std::memory_order_seq_cst), std::memory_order_seq_cst);
  const uint64_t ticket = p_.word(&counter).fetch_add(1, std::memory_order_seq_cst);
  p_.word(&local).store(ticket, std::memory_order_seq_cst);
  return ticket;
}

void RingBuffer::wait_for_data(uint64_t ticket) noexcept {
  uint64_t spins = 0;
  while (ticket >= last_head_.load(std::memory_order_acquire)) {
    uint64_t min = p_.word(&head()).load(std::memory_order_seq_cst);
    for (int t = 0; t < threads_; ++t) min = std::min(min, p_.word(&thread_line(t)[0]).load(std::memory_order_seq_cst));
    last_head_.store(min, std::memory_order_release);
    if (ticket < min) break;
    relax(p_, spins);
  }
}

void RingBuffer::push(int tid, const void* data) noexcept {
  uint64_t* line = thread_line(tid);
  const uint64_t ticket = take_ticket(line[0], head());
  wait_for_space(ticket);
  std::byte* s = slot(ticket);
  uint64_t* stamp = reinterpret_cast<uint64_t*>(s);
  switch (design_) {
    case RingDesign::volatile_ring: std::memcpy(s + 8, data, slot_bytes_); break;
    case RingDesign::txfree:
      // The push position, durable with the data: recovery rolls back the element it names. A plain
      // store: only recovery reads it, and a torn position names no ticket, so nothing is rolled back
      // that is not in flight.
      line[2] = ticket;
      std::memcpy(s + 8, data, slot_bytes_);
      if (slot_flusher_) slot_flusher_->flush(s + 8, slot_bytes_);
      p_.fence();
      p_.store8(stamp, ticket + 1);
      line[2] = kNone;
      p_.fence();  // the push is durable before it returns (linearization: local head below)
      break;
    case RingDesign::tx: {
      uint64_t* log = reinterpret_cast<uint64_t*>(undo(tid));
      std::memcpy(undo(tid) + kLine, s, stride_);  // undo: the slot's old stamp and data
      p_.flush(undo(tid) + kLine, stride_);
      // The saved slot durable before the log is valid: else a roll-back may restore a stamp torn between
      // this slot's and the one saved before, whose consumed ticket (across 2^32) lies beyond every real
      // one, and every element then counts as popped.
      p_.fence();
      p_.store8(&log[0], ((ticket & (capacity_ - 1)) + 1) | kUndoPush);
      p_.persist(log, 8);
      std::memcpy(s + 8, data, slot_bytes_);
      *stamp = ticket + 1;  // a plain store: until the commit below, the undo log takes a torn stamp back
      flush_data(s, stride_);
      p_.fence();
      p_.store8(&log[0], 0);  // commit
      p_.persist(log, 8);
      break;
    }
  }
  p_.word(&line[0]).store(kNone, std::memory_order_seq_cst);
}

void RingBuffer::pop(int tid, void* out) noexcept {
  uint64_t* line = thread_line(tid);
  const uint64_t ticket = take_ticket(line[1], tail());
  wait_for_data(ticket);
  std::byte* s = slot(ticket);
  uint64_t* stamp = reinterpret_cast<uint64_t*>(s);
  std::memcpy(out, s + 8, slot_bytes_);
  switch (design_) {
    case RingDesign::volatile_ring: break;
    case RingDesign::txfree:
      p_.store8(stamp, (ticket + 1) | kConsumed);
      p_.flush(stamp, 8);
      p_.fence();
      break;
    case RingDesign::tx: {
      // The TX design wraps every operation in a transaction ([PMIdioBench] §6.3), and this is its cost.
      // For a pop the log buys nothing: its one change is an atomic stamp, and recovery takes any element
      // below a consumed one as popped. Mutation testing shows it (this log's persists and the stamp's
      // fence survive removal); it stays so that TX measures what the paper's TX measures.
      uint64_t* log = reinterpret_cast<uint64_t*>(undo(tid));
      // A plain store, as a push's saved slot: the log is not valid until the store below, after this
      // persist, so no crash state reads the saved stamp torn.
      log[1] = persist::Persister::load8(stamp);
      p_.persist(&log[1], 8);
      p_.store8(&log[0], ((ticket & (capacity_ - 1)) + 1) | kUndoPop);
      p_.persist(log, 8);
      p_.store8(stamp, (ticket + 1) | kConsumed);
      p_.persist(stamp, 8);
      p_.store8(&log[0], 0);  // commit
      p_.persist(log, 8);
      break;
    }
  }
  p_.word(&line[1]).store(kNone, std::memory_order_seq_cst);
}

std::vector<std::byte> RingBuffer::contents() const {
  std::vector<std::byte> out;
  for (uint64_t t = tail(); t < head(); ++t) {
    const std::byte* s = slot(t);
    out.insert(out.end(), s + 8, s + 8 + slot_bytes_);
  }
  return out;
}

uint64_t RingBuffer::size() const noexcept { return head() - tail(); }

}  // namespace pmlab::lockfree
