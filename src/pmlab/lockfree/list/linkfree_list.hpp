// Link-free (Zuriel, Friedman, Sheffi, Cohen, Petrank, OOPSLA'19), written from the paper's description:
// nodes live in PMEM, links are never persisted. A node is a member after a crash iff its validity word
// says valid and not deleted; recovery scans the whole slab for such nodes and relinks them in DRAM
// order. Key and flags share one 8-byte word, so no torn write can pair a valid flag with a stale key.
//
// Insert links the node, then makes it valid (its linearization) and flushes it; delete marks the link
// (Harris), then sets the deleted flag and flushes. Readers that return an answer depending on a node
// make that node's state durable first (flush_insert / flush_delete), guarded by "already flushed" flags
// so the common read issues no flush or fence. An updater that unlinks a marked node first makes its
// deletion durable, so two valid undeleted nodes with one key never coexist in PMEM.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/lockfree/alloc/epoch.hpp"
#include "pmlab/lockfree/alloc/slab.hpp"
#include "pmlab/lockfree/list/layout.hpp"
#include "pmlab/lockfree/list/linked_list.hpp"
#include "pmlab/lockfree/list/set.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::lockfree {

// The validity word of a Link-free node and of a SOFT persistent node: key << 4 | flags.
namespace validity {
inline constexpr uint64_t kValid = 1;       // the insert linearized
inline constexpr uint64_t kDeleted = 2;     // the delete linearized (durable before the node is unlinked)
inline constexpr uint64_t kInsFlushed = 4;  // the valid state is known durable: readers need not flush
inline constexpr uint64_t kDelFlushed = 8;  // the deleted state is known durable
inline constexpr uint64_t key_of(uint64_t word) noexcept { return word >> 4; }
inline constexpr uint64_t fresh(uint64_t key) noexcept { return key << 4; }
inline constexpr bool member(uint64_t word) noexcept { return (word & kValid) != 0 && (word & kDeleted) == 0; }

// What recovery rebuilds a set from: (key, node offset) of every member among the nodes of `slab` (whose
// offsets are from `base`), in key order; corrupted when a member's key is out of range or two hold one key.
inline Result<std::vector<std::pair<uint64_t, uint64_t>>> members(const Slab& slab, const std::byte* base) {
  std::vector<std::pair<uint64_t, uint64_t>> found;
  for (uint32_t i = 0; i < slab.count(); ++i) {
    const uint64_t n = slab.offset_of(i);
    const uint64_t m = reinterpret_cast<const list_layout::Node*>(base + n)->meta;
    if (!member(m)) continue;
    const uint64_t key = key_of(m);
    if (key == 0 || key > kMaxKey) return error(Errc::corrupted, "valid node with key out of range");
    found.emplace_back(key, n);
  }
  std::sort(found.begin(), found.end());
  for (size_t i = 1; i < found.size(); ++i)
    if (found[i].first == found[i - 1].first)
      return error(Errc::corrupted, "two valid nodes hold key " + std::to_string(found[i].first));
  return found;
}
}  // namespace validity

class LinkFreeList : public list_layout::Region<LinkFreeList> {
  using Node = list_layout::Node;
  friend Region;

 public:
  static constexpr ListDesign kDesign = ListDesign::linkfree;

  LinkFreeList(std::byte* base, size_t size, const persist::Persister& p, int advance_every = 32)
      : Region(base, size, p), reclaimer_(advance_every) {}

  // Scans every node of the slab: the valid, undeleted ones are the set; they are relinked in key order
  // (links are volatile, so no link is flushed) and are the only nodes marked taken. Each member's
  // insert-flushed flag is set and made durable, so that no operation flushes it again, crash or not.
  Status recover() {
    PMLAB_TRY(check_root("Link-free list"));
    make_slabs();
    auto members = validity::members(*slab_, base_);
    if (!members) return members.status();
    slab_->reset_all_free();
    uint64_t prev = list_layout::kHead;
    bool flagged = false;
    for (const auto& [key, n] : *members) {
      (void)key;
      node(prev)->next = n;
      if ((node(n)->meta & validity::kInsFlushed) == 0) {
        p_.word(&node(n)->meta).fetch_or(validity::kInsFlushed);
        p_.flush(&node(n)->meta, 8);
        flagged = true;
      }
      slab_->mark_allocated(n);
      prev = n;
    }
    node(prev)->next = 0;
    if (flagged) p_.fence();
    return Status::success();
  }

  InsertOutcome try_insert(int tid, uint64_t key) {
    uint64_t n = 0;
    return at_window(tid, key, [&](const Window& w) -> std::optional<InsertOutcome> {
      if (w.curr != 0 && validity::key_of(meta(w.curr).load(std::memory_order_acquire)) == key) {
        // The key is there: its insert must be linearized and durable before this one can say so.
        meta(w.curr).fetch_or(validity::kValid, std::memory_order_acq_rel);
        flush_insert(w.curr);
        if (n != 0) slab_->free(n);
        return InsertOutcome::present;
      }
      if (n == 0) {
        n = slab_->alloc(tid);
        if (n == 0) { return InsertOutcome::no_space; }
        // A plain store, as TLog's new link: the node is private until the CAS below publishes it. A crash
        // may leave this word torn, but no tear of it is a member (its flags are byte 0: the old node's,
        // deleted, or none), so the old node stays invalid whichever bytes persist.
        node(n)->meta = validity::fresh(key);
      }
      link(n).store(w.curr, std::memory_order_relaxed);
      uint64_t expected = w.pred_word;
      if (link(w.pred).compare_exchange_strong(expected, n, std::memory_order_acq_rel)) {
        meta(n).fetch_or(validity::kValid, std::memory_order_acq_rel);  // linearization point
        flush_insert(n);
        return InsertOutcome::inserted;
      }
      return std::nullopt;
    });
  }

  bool remove(int tid, uint64_t key) {
    return at_window(tid, key, [&](const Window& w) -> std::optional<bool> {
      if (w.curr == 0) return false;
      const uint64_t m = meta(w.curr).load(std::memory_order_acquire);
      if (validity::key_of(m) != key || (m & validity::kValid) == 0) return false;  // not inserted yet
      uint64_t succ = w.curr_word;
      bool marked = false;
      while ((succ & list_layout::kMark) == 0) {
        if (link(w.curr).compare_exchange_strong(succ, succ | list_layout::kMark, std::memory_order_acq_rel)) {
          marked = true;  // linearization point
          break;
        }
      }
      if (!marked) return std::nullopt;
      flush_delete(w.curr);
      if (unlink(tid, key, w, succ)) reclaimer_.retire(tid, *slab_, w.curr);
      return true;
    });
  }

  bool contains(int tid, uint64_t key) {
    EpochReclaimer::Guard guard(reclaimer_, tid);
    uint64_t curr = list_layout::ptr(link(list_layout::kHead).load(std::memory_order_acquire));
    while (curr != 0 && validity::key_of(meta(curr).load(std::memory_order_acquire)) < key)
      curr = list_layout::ptr(link(curr).load(std::memory_order_acquire));
    if (curr == 0) return false;
    const uint64_t m = meta(curr).load(std::memory_order_acquire);
    if (validity::key_of(m) != key || (m & validity::kValid) == 0) return false;
    if (link(curr).load(std::memory_order_acquire) & list_layout::kMark) {
      flush_delete(curr);
      return false;
    }
    flush_insert(curr);
    return true;
  }

  std::vector<uint64_t> keys() const {
    std::vector<uint64_t> out;
    for (uint64_t c = list_layout::ptr(node(list_layout::kHead)->next); c != 0; c = list_layout::ptr(node(c)->next))
      if ((node(c)->next & list_layout::kMark) == 0 && (node(c)->meta & validity::kValid))
        out.push_back(validity::key_of(node(c)->meta));
    return out;
  }

  Status check() {
    reclaimer_.drain();
    uint64_t reached = 0, prev = 0;
    for (uint64_t c = list_layout::ptr(node(list_layout::kHead)->next); c != 0; c = list_layout::ptr(node(c)->next)) {
      if (!slab_->owns(c)) return error(Errc::corrupted, "link outside the slab");
      if (++reached > slab_->count()) return error(Errc::corrupted, "cycle in the list");
      const uint64_t m = node(c)->meta;
      if (!validity::member(m) || (node(c)->next & list_layout::kMark))
        return error(Errc::corrupted, "a linked node is not a member");
      if (validity::key_of(m) <= prev) return error(Errc::corrupted, "keys out of order");
      prev = validity::key_of(m);
    }
    return reaches_every_taken_node("slab", slab_->allocated(), reached);
  }

  Slab& slab() noexcept { return *slab_; }
  EpochReclaimer& reclaimer() noexcept { return reclaimer_; }

 private:
  Node* node(uint64_t off) const noexcept { return reinterpret_cast<Node*>(base_ + off); }
  persist::PmWord link(uint64_t off) const noexcept { return p_.word(&node(off)->next); }
  persist::PmWord meta(uint64_t off) const noexcept { return p_.word(&node(off)->meta); }
  void make_slabs() {
    slab_ = std::make_unique<Slab>(base_, list_layout::slab_offset(static_cast<int>(root().max_threads)),
                                   static_cast<uint32_t>(sizeof(Node)), static_cast<uint32_t>(root().capacity));
    p_.declare_volatile(&node(list_layout::kHead)->next, 8);
    for (uint32_t i = 0; i < slab_->count(); ++i) p_.declare_volatile(&node(slab_->offset_of(i))->next, 8);
  }

  void flush_insert(uint64_t n) {
    if (meta(n).load(std::memory_order_acquire) & validity::kInsFlushed) return;
    p_.persist(node(n), sizeof(Node));
    meta(n).fetch_or(validity::kInsFlushed, std::memory_order_acq_rel);
  }
  void flush_delete(uint64_t n) {
    const uint64_t m = meta(n).load(std::memory_order_acquire);
    if (m & validity::kDelFlushed) return;
    if ((m & validity::kDeleted) == 0) meta(n).fetch_or(validity::kDeleted, std::memory_order_acq_rel);
    p_.persist(node(n), sizeof(Node));
    meta(n).fetch_or(validity::kDelFlushed, std::memory_order_acq_rel);
  }

  Window find(int tid, uint64_t key) {
  retry:
    uint64_t pred = list_layout::kHead;
    uint64_t pred_word = link(pred).load(std::memory_order_acquire);
    for (;;) {
      const uint64_t curr = list_layout::ptr(pred_word);
      if (curr == 0) return {pred, pred_word, 0, 0};
      const uint64_t curr_word = link(curr).load(std::memory_order_acquire);
      if (curr_word & list_layout::kMark) {
        flush_delete(curr);  // its deletion durable before it disappears from the volatile list
        const uint64_t succ = list_layout::ptr(curr_word);
        uint64_t expected = pred_word;
        if (!link(pred).compare_exchange_strong(expected, succ, std::memory_order_acq_rel)) goto retry;
        reclaimer_.retire(tid, *slab_, curr);
        pred_word = succ;
        continue;
      }
      if (validity::key_of(meta(curr).load(std::memory_order_acquire)) >= key)
        return {pred, pred_word, curr, curr_word};
      pred = curr;
      pred_word = curr_word;
    }
  }

  std::unique_ptr<Slab> slab_;
  // Last: destroyed first, while the slabs it frees into still exist.
  EpochReclaimer reclaimer_;
};

static_assert(PersistentSet<LinkFreeList>);

}  // namespace pmlab::lockfree
