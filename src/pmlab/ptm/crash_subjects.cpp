// Crash subjects ptm.undo and ptm.redo: a stream of transactions on two log slots by turns — bank transfers over 8
// accounts, multi-word swaps, and queue moves that free one node and allocate another — checked against
// the durability contract of a transaction: after recovery the heap's logical state (top, roots, and
// every allocated block with its payload) is exactly the state after the transactions that returned
// before the crash, plus the one in flight wholly or not at all. The expected states come from replaying
// the same stream on a volatile scratch heap. Comparing allocated blocks also proves the transactional
// allocator leaks nothing: a block carved or freed by a transaction that did not commit is free again.
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "pmlab/crashtest/linearizability.hpp"
#include "pmlab/crashtest/subject.hpp"
#include "pmlab/ptm/redo/redo_ptm.hpp"
#include "pmlab/ptm/undo/undo_ptm.hpp"
#include "pmlab/ptm/workloads/queue.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm {
namespace {

constexpr uint64_t kSlotBytes = 4096;
// Two log slots for the stream, used by turns as two threads would: a slot's log must be retired before
// the other slot's next transaction may overwrite the same words, or recovery replays it over them. A third
// runs the load alone and is idle after it, as a loader thread that exited: the recovery that opens the
// run empties the orecs, so no later transaction retires that slot, and its record stays live but for the
// redo PTM's retirement word (recovered_seq). The sequence numbers carry that word across 2^32 at the
// second quiesce (ptm.redo) and in the recovery after the run (ptm.redo-threads), where a torn one would
// bring the load's record back, to be replayed over everything written since.
constexpr uint64_t kStreamSlots = 2;
constexpr uint64_t kSlots = kStreamSlots + 1;
constexpr int kLoadSlot = static_cast<int>(kSlots) - 1;
constexpr uint64_t kHeapBytes = 8192;
constexpr uint64_t kAccounts = 8;
constexpr uint64_t kQueueStart = 3;
// Balances open on both sides of 2^32 and queue values count up across it: a transfer, a swap or a queue
// move then changes both halves of a word, so a torn 8-byte store (half old, half new) is a state the
// check can see. Values that stay below 2^32 would leave every split store's high half unchanged.
constexpr uint64_t k2To32 = uint64_t{1} << 32;
constexpr uint64_t kFirstQueueValue = crash::kCounterBase - 1;
uint64_t opening_balance(uint64_t account) { return k2To32 - 64 + 16 * account; }

// Root 0: the accounts array.
template <class Tx>
void apply_op(Tx& tx, uint64_t seed, uint64_t op) {
  workloads::Rng rng(seed * 1000003 + op);
  uint64_t* acc = tx.template at<uint64_t>(tx.read(tx.root(0)));
  switch (op % 3) {
    case 0: {  // transfer
      uint64_t* a = acc + rng.below(kAccounts);
      uint64_t* b = acc + rng.below(kAccounts);
      const uint64_t amount = 1 + rng.below(20);
      const uint64_t va = tx.read(a);
      if (a == b || va < amount) return;
      tx.write(a, va - amount);
      tx.write(b, tx.read(b) + amount);
      break;
    }
    case 1: {  // three swaps (a word may be written twice, or with the value it holds)
      for (int k = 0; k < 3; ++k) {
        uint64_t* x = acc + rng.below(kAccounts);
        uint64_t* y = acc + rng.below(kAccounts);
        const uint64_t vx = tx.read(x), vy = tx.read(y);
        tx.write(x, vy);
        tx.write(y, vx);
      }
      break;
    }
    default: {  // queue move: free the head node, carve a new tail node
      workloads::queue_dequeue(tx);
      const uint64_t seq = tx.read(tx.root(5));
      tx.write(tx.root(5), seq + 1);
      if (!workloads::queue_enqueue(tx, seq)) throw std::runtime_error("ptm subject: heap full");
      break;
    }
  }
}

template <class P>
void load(P& ptm, int slot) {
  ptm.run(slot, [&](auto& tx) {
    const uint64_t off = tx.alloc(kAccounts * 8);
    uint64_t* a = tx.template at<uint64_t>(off);
    for (uint64_t i = 0; i < kAccounts; ++i) tx.write(a + i, opening_balance(i));
    tx.write(tx.root(0), off);
    for (uint64_t i = 0; i < kQueueStart; ++i) workloads::queue_enqueue(tx, kFirstQueueValue + i);
    tx.write(tx.root(5), kFirstQueueValue + kQueueStart);
  });
}

// The logical state: top, roots, and every block below top with its payload when allocated.
std::vector<uint64_t> digest(const Heap& heap) {
  std::vector<uint64_t> d;
  const HeapHeader& h = heap.header();
  d.push_back(h.top);
  for (uint64_t r : h.root) d.push_back(r);
  for (uint64_t off = kFirstBlock; off < h.top;) {
    const uint64_t word = *heap.at<uint64_t>(off);
    const uint64_t bytes = word & ~kAllocated;
    if (bytes == 0 || off + bytes > h.top) {
      d.push_back(~uint64_t{0});
      break;
    }
    d.push_back(off);
    d.push_back(word);
    if (word & kAllocated)
      for (uint64_t w = 8; w < bytes; w += 8) d.push_back(*heap.at<uint64_t>(off + w));
    off += bytes;
  }
  return d;
}

// The subjects' PTM over an image: the log slots, then the heap; `slots` of the kSlots the log holds.
template <class P>
std::unique_ptr<P> make_ptm(std::byte* base, const persist::Persister& p, bool logging, int slots = kSlots) {
  Regions r;
  r.log = base;
  r.log_bytes = kSlots * kSlotBytes;
  r.heap = base + kSlots * kSlotBytes;
  r.heap_bytes = kHeapBytes;
  r.log_persister = &p;
  r.data_persister = &p;
  Options o;
  o.slots = slots;
  o.slot_bytes = kSlotBytes;
  o.logging = logging;
  // Every block the redo PTM carves at the top is written in place (the bulk-load path, fenced before
  // its record); blocks reused from the free lists go through its log: the streams exercise both.
  o.in_place_bytes = 0;
  // Sequence numbers cross 2^32 a few transactions in: the redo PTM's just after its first quiesce (op
  // 4, when every op writes), so the retirement word a recovery then stores changes both halves.
  o.first_seq = crash::kCounterBase - 2;
  return std::make_unique<P>(r, o);
}
constexpr size_t kImageBytes = kSlots * kSlotBytes + kHeapBytes;

// f(ptm) on a volatile scratch image, formatted and loaded: the expected states are replays on it.
template <class P, class F>
auto on_scratch(F&& f) {
  std::vector<std::byte> buf(kImageBytes + 64);
  auto* base = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(buf.data()) + 63) & ~uintptr_t{63});
  const persist::Persister none = persist::Persister::volatile_memory();
  auto ptm = make_ptm<P>(base, none, true);
  (void)ptm->format();
  load(*ptm, kLoadSlot);
  return f(*ptm);
}

// What both stream subjects share: the image, its format (the loaded heap), the PTM reopened over it, and
// its recovery.
template <class P, bool kLogging, int kUsedSlots = kStreamSlots>
class PtmSubjectBase : public crash::Subject {
 public:
  explicit PtmSubjectBase(const crash::SubjectOptions& o) : ops_(o.ops), seed_(o.seed) {}

  size_t image_bytes() const override { return kImageBytes; }

  void format(crash::Image image, const persist::Persister& p) override {
    auto ptm = make(image.base, p);
    if (Status s = ptm->format(); !s) throw std::runtime_error("ptm format: " + s.message());
    load(*ptm, kUsedSlots == 1 ? 0 : kLoadSlot);
  }

  // The PTM's own recovery: it finishes or rolls back the logged transactions and rebuilds the allocator in
  // DRAM. The recovered PTM is kept for the check: reopening it would run the recovery again.
  Status recover(crash::Image image, const persist::Persister& p) override {
    auto ptm = make(image.base, p);
    if (Status s = ptm->recover(); !s) return s;
    recovered_ptm_ = std::move(ptm);
    return Status::success();
  }

 protected:
  std::unique_ptr<P> make(std::byte* base, const persist::Persister& p) const {
    return make_ptm<P>(base, p, kLogging, kUsedSlots == 1 ? 1 : static_cast<int>(kSlots));
  }
  std::unique_ptr<P> reopen(crash::Image image, const persist::Persister& p) const {
    auto ptm = make(image.base, p);
    if (Status s = ptm->recover(); !s) throw std::runtime_error("ptm open: " + s.message());
    return ptm;
  }
  static const char* label(uint64_t op) noexcept {
    return op % 3 == 0 ? "transfer" : op % 3 == 1 ? "swaps" : "queue-move";
  }

  uint64_t ops_;
  uint64_t seed_;
  std::unique_ptr<P> recovered_ptm_;  // the PTM recover() opened and recovered; check() goes on with it
};

// kLogging = false is the deliberately broken twin: the breakdown's "no logging" switch, which the
// simulator must catch tearing a transaction. kUsedSlots = 1: one thread's PTM (the redo PTM's path
// without ownership records, the one ptm.target measures); 2: two slots by turns.
template <class P, bool kLogging = true, int kUsedSlots = kStreamSlots>
class PtmSubject final : public PtmSubjectBase<P, kLogging, kUsedSlots> {
  using Base = PtmSubjectBase<P, kLogging, kUsedSlots>;
  using Base::ops_;
  using Base::recovered_ptm_;
  using Base::seed_;

 public:
  using Base::Base;

  // Every fourth transaction is preceded by an attempt that does another one's writes and aborts (the
  // library's Transaction::abort, an exception from the body): it must leave nothing, also when a crash
  // cuts its undoing short, so the expected states never include it. The redo PTM also quiesces (a clean
  // close) after every fifth transaction: a crash during it must keep every transaction that returned, and
  // once it returned the next open replays none of theirs.
  void run(crash::Image image, const persist::Persister& p, crash::OpTracker& ops) override {
    auto ptm = this->reopen(image, p);
    for (uint64_t op = 0; op < ops_; ++op) {
      ops.begin(op, Base::label(op));
      step(*ptm, op);
      ops.end(op);
      if constexpr (std::is_same_v<P, RedoPtm>) {
        if (op % 5 == 4) ptm->quiesce();
      }
    }
  }

  Status check(crash::Image, const persist::Persister&, const crash::CrashPoint& at) override {
    P& ptm = *recovered_ptm_;
    const std::vector<uint64_t> got = digest(ptm.heap());
    const uint64_t done = at.ops_completed;
    if constexpr (std::is_same_v<P, UndoPtm>) PMLAB_TRY(check_seqs(ptm, done));
    if constexpr (std::is_same_v<P, RedoPtm>) PMLAB_TRY(check_quiesced(ptm, at));
    if (got == expected(done)) return check_usable(ptm);
    if (at.op_in_flight && got == expected(done + 1)) return check_usable(ptm);
    return error(Errc::corrupted, std::string(P::kName) + " ptm: recovered heap is neither the state after " +
                                      std::to_string(done) + " transactions" +
                                      (at.op_in_flight ? " nor after " + std::to_string(done + 1) : std::string()));
  }

 private:
  // Op `op` of the stream on its slot, after the aborted attempt that precedes every fourth one.
  void step(P& ptm, uint64_t op) const {
    struct AbortedAttempt {};
    const int slot = static_cast<int>(op % kUsedSlots);
    if (kLogging && op % 4 == 1) {
      try {
        ptm.run(slot, [&](auto& tx) {
          apply_op(tx, seed_, op + 1);
          throw AbortedAttempt{};
        });
      } catch (const AbortedAttempt&) {}
    }
    ptm.run(slot, [&](auto& tx) { apply_op(tx, seed_, op); });
  }

  // A quiesce retires every record durably: a clean close saves the next open its replay. Op 5k begins
  // once the quiesce after op 5k-1 returned (run() starts after a recovery, which retires as much), so
  // recovery replays no record but those of the ops from the last such point on, each one transaction.
  // (With no op in flight after op 5k-1, the quiesce itself may be what the crash cut short.)
  static Status check_quiesced(const P& ptm, const crash::CrashPoint& at) {
    const uint64_t done = at.ops_completed;
    if (!at.op_in_flight && done % 5 == 0) return Status::success();
    const uint64_t since = done % 5 + (at.op_in_flight ? 1 : 0);
    if (ptm.replayed() <= since) return Status::success();
    return error(Errc::corrupted, "redo ptm: recovery replayed " + std::to_string(ptm.replayed()) +
                                      " records where the last quiesce left at most " + std::to_string(since) +
                                      " live: it did not retire the records before it durably");
  }

  // The undo log's sequence numbers never go back: each slot's is at least what the ops that returned left
  // it (the op in flight and recovery only add to it). A torn one that went back would retire the entries
  // as well, but the slot would then log under numbers it used before.
  Status check_seqs(P& ptm, uint64_t done) {
    auto it = seq_floors_.find(done);
    if (it == seq_floors_.end()) {
      std::vector<uint64_t> floors = on_scratch<P>([&](P& scratch) {
        for (uint64_t op = 0; op < done && op < ops_; ++op) step(scratch, op);
        std::vector<uint64_t> seqs;
        for (int slot = 0; slot < kUsedSlots; ++slot) seqs.push_back(scratch.durable_seq(slot));
        return seqs;
      });
      it = seq_floors_.emplace(done, std::move(floors)).first;
    }
    for (int slot = 0; slot < kUsedSlots; ++slot)
      if (ptm.durable_seq(slot) < it->second[static_cast<size_t>(slot)])
        return error(Errc::corrupted, "undo ptm: slot " + std::to_string(slot) + "'s sequence number went back to " +
                                          std::to_string(ptm.durable_seq(slot)) + " from " +
                                          std::to_string(it->second[static_cast<size_t>(slot)]));
    return Status::success();
  }

  std::vector<uint64_t> expected(uint64_t ops) const {
    return on_scratch<P>([&](P& ptm) {
      for (uint64_t op = 0; op < ops && op < ops_; ++op) ptm.run(0, [&](auto& tx) { apply_op(tx, seed_, op); });
      return digest(ptm.heap());
    });
  }

  // The recovered PTM must run a transaction again (allocator rebuilt) and keep its invariants.
  Status check_usable(P& ptm) const {
    uint64_t total = 0;
    bool queue_ok = true;
    ptm.run(0, [&](auto& tx) {
      uint64_t* acc = tx.template at<uint64_t>(tx.read(tx.root(0)));
      total = 0;
      for (uint64_t i = 0; i < kAccounts; ++i) total += tx.read(acc + i);
      workloads::queue_dequeue(tx);
      queue_ok = workloads::queue_enqueue(tx, 1u << 30);
    });
    uint64_t want = 0;
    for (uint64_t i = 0; i < kAccounts; ++i) want += opening_balance(i);
    if (total != want)
      return error(Errc::corrupted, "ptm: account total " + std::to_string(total) + " != " + std::to_string(want));
    if (!queue_ok) return error(Errc::corrupted, "ptm: recovered heap cannot allocate a queue node");
    return Status::success();
  }

  std::map<uint64_t, std::vector<uint64_t>> seq_floors_;  // ops returned -> each slot's sequence number
};

// The logical state of the stream's heap, whatever blocks the allocator chose: the accounts, the queue's
// values in order, the next queue value, and how many blocks are allocated (a leak or a lost node shows).
struct Logical {
  std::vector<uint64_t> accounts;
  std::deque<uint64_t> queue;
  uint64_t next = 0;
  uint64_t blocks = 0;
  bool operator==(const Logical&) const = default;
};
struct LogicalHash {
  size_t operator()(const Logical& l) const {
    uint64_t h = mix64(l.next ^ (l.blocks << 32));
    for (uint64_t a : l.accounts) h = mix64(h ^ a);
    for (uint64_t q : l.queue) h = mix64(h + q);
    return static_cast<size_t>(h);
  }
};

// A search state: the logical state and the newest write version applied to reach it. Equal when the
// logical states are: at equal positions the versions applied are the same.
struct Ordered {
  Logical state;
  uint64_t newest = 0;
  bool operator==(const Ordered& o) const { return state == o.state; }
};
struct OrderedHash {
  size_t operator()(const Ordered& o) const { return LogicalHash{}(o.state); }
};

template <class P>
Logical logical_of(P& ptm) {
  Logical l;
  ptm.run(0, [&](auto& tx) {
    l = Logical{};
    const uint64_t* acc = tx.template at<uint64_t>(tx.read(tx.root(0)));
    for (uint64_t i = 0; i < kAccounts; ++i) l.accounts.push_back(tx.read(acc + i));
    for (uint64_t off = tx.read(tx.root(2)); off != 0 && l.queue.size() <= kHeapBytes / 32;
         off = tx.read(&tx.template at<workloads::QueueNode>(off)->next))
      l.queue.push_back(tx.read(&tx.template at<workloads::QueueNode>(off)->value));
    l.next = tx.read(tx.root(5));
  });
  auto st = ptm.heap().stats();
  l.blocks = st.ok() ? st->allocated_blocks : ~uint64_t{0};
  return l;
}

// apply_op's specification on the logical state (the same random draws).
Logical apply_logical(Logical l, uint64_t seed, uint64_t op) {
  workloads::Rng rng(seed * 1000003 + op);
  switch (op % 3) {
    case 0: {
      const uint64_t a = rng.below(kAccounts), b = rng.below(kAccounts), amount = 1 + rng.below(20);
      if (a == b || l.accounts[a] < amount) break;
      l.accounts[a] -= amount;
      l.accounts[b] += amount;
      break;
    }
    case 1:
      for (int k = 0; k < 3; ++k) {
        const uint64_t x = rng.below(kAccounts), y = rng.below(kAccounts);
        std::swap(l.accounts[x], l.accounts[y]);
      }
      break;
    default:
      if (!l.queue.empty()) {
        l.queue.pop_front();
        --l.blocks;
      }
      l.queue.push_back(l.next++);
      ++l.blocks;
      break;
  }
  return l;
}

// Two threads interleaving transactions on their own log slots over the same accounts and queue (every
// transaction conflicts with the other thread's: aborts, reruns, orecs handed between slots, predecessors
// retired and helped). The recovered state must be durably linearizable: the state after some order of
// the returned transactions and any in flight, respecting real time.
template <class P>
class ConcurrentPtmSubject final : public PtmSubjectBase<P, true> {
  using Base = PtmSubjectBase<P, true>;
  using Base::ops_;
  using Base::recovered_ptm_;
  using Base::seed_;

 public:
  static constexpr unsigned kThreads = 2;
  using Base::Base;

  void run(crash::Image image, const persist::Persister& p, crash::OpTracker& ops) override {
    auto ptm = this->reopen(image, p);
    ops.run_threads(kThreads, [&](unsigned t) {
      for (uint64_t i = 0; i < per_thread(); ++i) {
        const uint64_t op = global(t, i);
        ops.begin(i, Base::label(op));
        ptm->run(static_cast<int>(t), [&](auto& tx) { apply_op(tx, seed_, op); });
        ops.end_returning(i, ptm->last_commit(static_cast<int>(t)));
      }
    });
  }

  Status check(crash::Image, const persist::Persister&, const crash::CrashPoint& at) override {
    // The search follows the write versions the returned transactions report (the order they took
    // effect in; its memo keys on the positions, which fix the newest version applied): each step takes
    // a newer one, so it walks one order instead of every interleaving of two conflicting streams.
    // Transactions in flight, and those that wrote nothing, may stand anywhere.
    const Ordered got{logical_of(*recovered_ptm_), 0};
    const bool ok = crash::durably_linearizable<Ordered, OrderedHash>(
        at.history, Ordered{initial(), 0}, got,
        [&](const Ordered& o, unsigned t, uint32_t i, std::optional<uint64_t> wv) -> std::optional<Ordered> {
          const uint64_t v = wv.value_or(0);
          if (v != 0 && v <= o.newest) return std::nullopt;
          return Ordered{apply_logical(o.state, seed_, global(t, i)), v != 0 ? v : o.newest};
        });
    if (!ok)
      return error(
          Errc::corrupted,
          std::string(P::kName) + " ptm: recovered heap is the state after no order of the interleaved transactions");
    return Status::success();
  }

 private:
  uint64_t per_thread() const noexcept { return std::max<uint64_t>(1, ops_ / kThreads); }
  static uint64_t global(unsigned t, uint64_t i) noexcept { return i * kThreads + t; }

  static Logical initial() {
    return on_scratch<P>([](P& ptm) { return logical_of(ptm); });
  }
};

// A subject S that claims both domains.
template <class S>
crash::SubjectInfo info(std::string name, std::string description, bool deliberately_broken = false) {
  return {std::move(name),
          std::move(description),
          {persist::Domain::adr, persist::Domain::eadr},
          deliberately_broken,
          [](const crash::SubjectOptions& o) { return std::make_unique<S>(o); }};
}

const crash::SubjectRegistration undo_subject{info<PtmSubject<UndoPtm>>(
    "ptm.undo", "undo-logging PTM: transfers, swaps, queue moves with transactional alloc/free")};
const crash::SubjectRegistration redo_subject{info<PtmSubject<RedoPtm>>(
    "ptm.redo", "redo-logging PTM: transfers, swaps, queue moves with transactional alloc/free")};
const crash::SubjectRegistration redo_one_slot{info<PtmSubject<RedoPtm, true, 1>>(
    "ptm.redo-one-slot", "redo-logging PTM with one log slot (one thread: no ownership records), the same stream")};
const crash::SubjectRegistration redo_concurrent{info<ConcurrentPtmSubject<RedoPtm>>(
    "ptm.redo-threads", "redo-logging PTM, two threads interleaving conflicting transactions on their own log slots")};
const crash::SubjectRegistration undo_unlogged{info<PtmSubject<UndoPtm, false>>(
    "ptm.broken.undo-unlogged", "undo PTM with logging switched off (the breakdown's no-log point)", true)};
const crash::SubjectRegistration redo_unlogged{info<PtmSubject<RedoPtm, false>>(
    "ptm.broken.redo-unlogged", "redo PTM with logging switched off (applies in place without a log)", true)};

}  // namespace
}  // namespace pmlab::ptm
