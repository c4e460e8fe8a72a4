// Harris's lock-free sorted list with its links in the region, in three designs ([PMIdioBench] §6.2):
//
//  volatile_harris  Harris on DRAM; nothing persisted.
//  logfree (eADR)   Harris as is: a fence after a new node's stores (so it is durable before it is
//                   reachable). [PMIdioBench] also fences at each linearization point (the link CAS, the
//                   mark CAS) and after an unlink; on x86 each follows a locked CAS, which leaves nothing
//                   in the store buffer, and under eADR what is visible is durable, so those fences order
//                   nothing (the crash simulator's mutants found them redundant) and are left out.
//  tlog (ADR+eADR)  every link written is persisted; before an update linearizes, the thread persists a
//                   one-word micro-log {op, key, node}; recovery redoes in-flight updates from it. A link
//                   is written with kDirty and cleared once durable; an updater that traverses a dirty
//                   link persists it first, so no update ever depends on a link a crash could lose.
//                   contains() never flushes: whatever it saw unpersisted is covered by its writer's log.
//
// The log names the node, not only the key, so a redo cannot repeat an update that already took effect
// and was followed by a conflicting one: an insert is redone only if its node is neither reachable nor
// marked; a delete only if its node is reachable and unmarked.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/lockfree/alloc/epoch.hpp"
#include "pmlab/lockfree/alloc/slab.hpp"
#include "pmlab/lockfree/list/layout.hpp"
#include "pmlab/lockfree/list/set.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::lockfree {

using list_layout::kListMagic;

template <ListDesign D>
class LinkedList : public list_layout::Region<LinkedList<D>> {
  static_assert(D == ListDesign::volatile_harris || D == ListDesign::tlog || D == ListDesign::logfree);
  using Node = list_layout::Node;
  static constexpr bool kTLog = D == ListDesign::tlog;
  static constexpr bool kLogFree = D == ListDesign::logfree;
  enum LogOp : uint64_t { kNone = 0, kInsert = 1, kDelete = 2 };
  using Base = list_layout::Region<LinkedList>;
  friend Base;
  using Base::at_window;
  using Base::base_;
  using Base::check_root;
  using Base::p_;
  using Base::reaches_every_taken_node;
  using Base::root;
  using Base::unlink;
  using typename Base::Window;

 public:
  static constexpr ListDesign kDesign = D;

  LinkedList(std::byte* base, size_t size, const persist::Persister& p, int advance_every = 32)
      : Base(base, size, p), reclaimer_(advance_every) {}

  // Opens a list after a crash (or a clean stop): redoes in-flight TLog updates, unlinks nodes that were
  // marked, validates the structure and rebuilds the slab bitmap from the nodes it reaches.
  Status recover() {
    PMLAB_TRY(check_root("list of this design"));
    make_slabs();
    std::vector<uint64_t> reached;
    if (Status s = walk(reached); !s) return s;
    bool repaired = unlink_marked();
    if constexpr (kTLog) {
      for (int t = 0; t < threads(); ++t) {
        uint64_t* log = log_word(t);
        if (*log == 0) continue;
        if (Status s = walk(reached); !s) return s;
        if (Status s = redo(*log, reached); !s) return s;
        unlink_marked();
        // The repairs (flushed as they were made) durable before the log that may be needed to redo them
        // is cleared; one fence for all of them, as a crash before it only repeats idempotent repairs.
        p_.fence();
        p_.store8(log, 0);
        p_.persist(log, 8);
        repaired = false;
      }
    }
    if (repaired) p_.fence();  // the unlinks durable before recovery returns
    if (Status s = walk(reached); !s) return s;
    slab_->reset_all_free();
    for (uint64_t n : reached)
      if (!slab_->mark_allocated(n)) return error(Errc::corrupted, "node reached twice");
    return Status::success();
  }

  InsertOutcome try_insert(int tid, uint64_t key) {
    uint64_t n = 0;
    bool logged = false;
    return at_window(tid, key, [&](const Window& w) -> std::optional<InsertOutcome> {
      if (w.curr != 0 && node(w.curr)->key == key) {
        if (n != 0) slab_->free(n);
        if (logged) clear_log(tid);
        return InsertOutcome::present;
      }
      if (n == 0) {
        n = slab_->alloc(tid);
        if (n == 0) { return InsertOutcome::no_space; }
        node(n)->key = key;
        node(n)->meta = 0;
      }
      // A plain store, as the key's: the node is private until the CAS below publishes it, after the fence
      // that makes it durable. A crash before that fence leaves it unreachable (TLog's redo of the insert
      // writes its link again), so no crash state depends on the link being whole.
      node(n)->next = w.curr;
      if constexpr (kTLog) {
        p_.flush(node(n), sizeof(Node));
        if (!logged) {
          write_log(tid, kInsert, key, n);  // flushed with the node, one fence for both
          logged = true;
        }
        p_.fence();
      } else if constexpr (kLogFree) {
        p_.fence();  // the node's stores durable before it is reachable
      }
      uint64_t expected = w.pred_word;
      const uint64_t desired = n | (kTLog ? list_layout::kDirty : 0);
      if (link(w.pred).compare_exchange_strong(expected, desired, std::memory_order_acq_rel)) {
        if constexpr (kTLog) {
          p_.persist(&node(w.pred)->next, 8);
          uint64_t dirty = desired;
          link(w.pred).compare_exchange_strong(dirty, n, std::memory_order_acq_rel);
          clear_log(tid);
        }
        return InsertOutcome::inserted;
      }
      return std::nullopt;
    });
  }

  bool remove(int tid, uint64_t key) {
    return at_window(tid, key, [&](const Window& w) -> std::optional<bool> {
      if (w.curr == 0 || node(w.curr)->key != key) return false;
      uint64_t succ = w.curr_word;
      bool logged = false, marked = false;
      while ((succ & list_layout::kMark) == 0) {
        if constexpr (kTLog) {
          if (!logged) {
            write_log(tid, kDelete, key, w.curr);
            // The entry durable before the mark exists: another thread that sees the mark answers "absent"
            // before this delete returns, and only the entry can redo a mark a crash takes back. (Only
            // such a lookup shows it: its mutants survive single-threaded runs.)
            p_.fence();
            logged = true;
          }
        }
        const uint64_t desired = succ | list_layout::kMark | (kTLog ? list_layout::kDirty : 0);
        if (link(w.curr).compare_exchange_strong(succ, desired, std::memory_order_acq_rel)) {
          marked = true;
          if constexpr (kTLog) {
            // Durable before the dirty bit goes: a thread that then unlinks the node in find() persists
            // only its unlink, and this delete's entry may be cleared before that unlink is durable.
            p_.persist(&node(w.curr)->next, 8);
            uint64_t dirty = desired;
            link(w.curr).compare_exchange_strong(dirty, desired & ~list_layout::kDirty, std::memory_order_acq_rel);
          }
          break;
        }
        succ = load_link(w.curr);
      }
      if (!marked) {  // another thread deleted this node first: look again
        if (logged) clear_log(tid);
        return std::nullopt;
      }
      if (unlink(tid, key, w, succ)) {
        if constexpr (kTLog) p_.flush(&node(w.pred)->next, 8);  // durable (by clear_log's fence) before reuse
        reclaimer_.retire(tid, *slab_, w.curr);
      }
      if constexpr (kTLog) clear_log(tid);
      return true;
    });
  }

  bool contains(int tid, uint64_t key) {
    EpochReclaimer::Guard guard(reclaimer_, tid);
    uint64_t curr = list_layout::ptr(link(list_layout::kHead).load(std::memory_order_acquire));
    while (curr != 0 && node(curr)->key < key) curr = list_layout::ptr(link(curr).load(std::memory_order_acquire));
    return curr != 0 && node(curr)->key == key &&
           (link(curr).load(std::memory_order_acquire) & list_layout::kMark) == 0;
  }

  // Quiescent only: the keys in order.
  std::vector<uint64_t> keys() const {
    std::vector<uint64_t> out;
    for (uint64_t c = list_layout::ptr(node(list_layout::kHead)->next); c != 0; c = list_layout::ptr(node(c)->next))
      if ((node(c)->next & list_layout::kMark) == 0) out.push_back(node(c)->key);
    return out;
  }

  // Quiescent only: sorted, unmarked, and every taken slab node is reachable (after reclaiming limbo).
  Status check() {
    reclaimer_.drain();
    std::vector<uint64_t> reached;
    if (Status s = walk(reached); !s) return s;
    for (uint64_t n : reached)
      if (node(n)->next & list_layout::kMark) return error(Errc::corrupted, "a marked node is still linked");
    return reaches_every_taken_node("slab", slab_->allocated(), reached.size());
  }

  Slab& slab() noexcept { return *slab_; }
  EpochReclaimer& reclaimer() noexcept { return reclaimer_; }

 private:
  Node* node(uint64_t off) const noexcept { return reinterpret_cast<Node*>(base_ + off); }
  persist::PmWord link(uint64_t off) const noexcept { return p_.word(&node(off)->next); }
  uint64_t* log_word(int tid) const noexcept {
    return reinterpret_cast<uint64_t*>(base_ + list_layout::log_offset(tid));
  }
  int threads() const noexcept { return static_cast<int>(root().max_threads); }

  void make_slabs() {
    slab_ = std::make_unique<Slab>(base_, list_layout::slab_offset(threads()), static_cast<uint32_t>(sizeof(Node)),
                                   static_cast<uint32_t>(root().capacity));
  }

  // TLog: an updater never builds on a link that may not be durable. The writer's log redoes its insert
  // by relinking the node behind the durable list, so a helper that linked a node behind it first would
  // lose that node: the write-back here prevents it (mutation testing kills its removal when the helper
  // runs on before the writer persists). The fence matters only to a third thread that builds on the link
  // this one cleared before this one's next fence, while the writer has not persisted it either: no
  // schedule the crash subjects try stops all three there, so its mutant survives. See
  // docs/crash-simulator.md.
  uint64_t load_link(uint64_t off) {
    uint64_t w = link(off).load(std::memory_order_acquire);
    if constexpr (kTLog) {
      while (w & list_layout::kDirty) {
        p_.persist(&node(off)->next, 8);
        link(off).compare_exchange_strong(w, w & ~list_layout::kDirty, std::memory_order_acq_rel);
        w = link(off).load(std::memory_order_acquire);
      }
    }
    return w;
  }

  // Harris's search: pred.key < key <= curr.key, unlinking marked nodes on the way.
  Window find(int tid, uint64_t key) {
  retry:
    uint64_t pred = list_layout::kHead;
    uint64_t pred_word = load_link(pred);
    for (;;) {
      const uint64_t curr = list_layout::ptr(pred_word);
      if (curr == 0) return {pred, pred_word, 0, 0};
      const uint64_t curr_word = load_link(curr);
      if (curr_word & list_layout::kMark) {
        const uint64_t succ = list_layout::ptr(curr_word);
        uint64_t expected = pred_word;
        if (!link(pred).compare_exchange_strong(expected, succ, std::memory_order_acq_rel)) goto retry;
        // The unlink durable before the node can be reused (a later node's stores must not be reachable
        // through a stale link); under eADR the locked CAS made it so.
        if constexpr (kTLog) p_.persist(&node(pred)->next, 8);
        reclaimer_.retire(tid, *slab_, curr);
        pred_word = succ;
        continue;
      }
      if (node(curr)->key >= key) return {pred, pred_word, curr, curr_word};
      pred = curr;
      pred_word = curr_word;
    }
  }

  // Written back here, fenced by the caller before the update it describes can be seen by another thread.
  void write_log(int tid, LogOp op, uint64_t key, uint64_t n) {
    const uint64_t entry = static_cast<uint64_t>(slab_->index_of(n)) << 32 | (key & kMaxKey) << 2 | op;
    p_.store8(log_word(tid), entry);
    p_.flush(log_word(tid), 8);
  }
  // Cleared durably: a stale delete entry would be redone on its node after another thread reused the
  // node for the same key.
  void clear_log(int tid) {
    p_.store8(log_word(tid), 0);
    p_.persist(log_word(tid), 8);
  }

  // The durable list from the head: nodes of the slab, keys strictly increasing, no cycle.
  Status walk(std::vector<uint64_t>& reached) const {
    reached.clear();
    uint64_t prev_key = 0;
    for (uint64_t c = list_layout::ptr(node(list_layout::kHead)->next); c != 0; c = list_layout::ptr(node(c)->next)) {
      if (!slab_->owns(c)) return error(Errc::corrupted, "link to offset " + std::to_string(c) + " outside the slab");
      if (node(c)->key <= prev_key || node(c)->key > kMaxKey) return error(Errc::corrupted, "keys out of order");
      if (reached.size() >= slab_->count()) return error(Errc::corrupted, "cycle in the list");
      prev_key = node(c)->key;
      reached.push_back(c);
    }
    return Status::success();
  }

  // Recovery: completes one in-flight TLog update from its log entry.
  Status redo(uint64_t entry, const std::vector<uint64_t>& reached) {
    const uint64_t op = entry & 3, key = (entry >> 2) & kMaxKey;
    const uint32_t idx = static_cast<uint32_t>(entry >> 32);
    if (idx >= slab_->count() || (op != kInsert && op != kDelete)) return error(Errc::corrupted, "bad log entry");
    const uint64_t n = slab_->offset_of(idx);
    if (node(n)->key != key) return Status::success();  // logged before the node was written: not begun
    const bool is_reached = std::find(reached.begin(), reached.end(), n) != reached.end();
    if (op == kDelete) {
      if (is_reached && (node(n)->next & list_layout::kMark) == 0) {
        link(n).store(node(n)->next | list_layout::kMark);
        p_.flush(&node(n)->next, 8);  // fenced with the other repairs, before the log is cleared
      }
      return Status::success();
    }
    if (is_reached || (node(n)->next & list_layout::kMark)) return Status::success();  // took effect
    uint64_t pred = list_layout::kHead;
    for (;;) {
      const uint64_t curr = list_layout::ptr(node(pred)->next);
      if (curr != 0 && node(curr)->key < key) {
        pred = curr;
        continue;
      }
      if (curr != 0 && node(curr)->key == key && (node(curr)->next & list_layout::kMark) == 0)
        return Status::success();  // the key is there: the insert would have returned false
      node(n)->next = curr;
      p_.persist(node(n), sizeof(Node));  // the node durable before it is reachable
      link(pred).store(n);
      p_.flush(&node(pred)->next, 8);  // fenced with the other repairs, before the log is cleared
      return Status::success();
    }
  }
  // Recovery: unlinks nodes whose delete had linearized and drops dirty bits (all is durable now).
  // Whether it wrote back anything (unfenced).
  bool unlink_marked() {
    bool wrote = false;
    uint64_t pred = list_layout::kHead;
    for (;;) {
      const uint64_t word = node(pred)->next;
      const uint64_t curr = list_layout::ptr(word);
      if (curr == 0) break;
      const uint64_t cw = node(curr)->next;
      // Repairs a crash may undo are redone by the next recovery (the marks and dirty bits stay); the
      // caller fences them before it clears a log.
      if (cw & list_layout::kMark) {
        link(pred).store(list_layout::ptr(cw));
        p_.flush(&node(pred)->next, 8);
        wrote = true;
        continue;
      }
      if (word & list_layout::kDirty) {
        link(pred).store(curr);
        p_.flush(&node(pred)->next, 8);
        wrote = true;
      }
      pred = curr;
    }
    return wrote;
  }

  std::unique_ptr<Slab> slab_;
  // Last: destroyed first, while the slabs it frees into still exist.
  EpochReclaimer reclaimer_;
};

static_assert(PersistentSet<LinkedList<ListDesign::volatile_harris>>);
static_assert(PersistentSet<LinkedList<ListDesign::tlog>>);
static_assert(PersistentSet<LinkedList<ListDesign::logfree>>);

}  // namespace pmlab::lockfree
