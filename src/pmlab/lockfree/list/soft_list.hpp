// SOFT (Sets with an Optimal Flushing Technique; Zuriel et al., OOPSLA'19), written from the paper's
// description: the list itself is volatile (nodes and links in DRAM); each member also has a persistent
// node in the pool holding only its key and validity word. One flush + fence per insert and per delete,
// none for contains. Recovery scans the pool slab for valid, undeleted nodes and rebuilds the DRAM list.
//
// A volatile node moves through intend-to-insert -> inserted -> intend-to-delete -> deleted. The insert
// linearizes when its state becomes `inserted` (after its persistent node is durable); a delete when the
// state becomes `intend-to-delete`, and nobody answers "absent" for that key before the persistent node's
// deleted flag is durable. Only deleted nodes are marked and unlinked (Harris), so persistent nodes are
// reused only after their deletion is durable.
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
#include "pmlab/lockfree/list/linkfree_list.hpp"
#include "pmlab/lockfree/list/set.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::lockfree {

class SoftList : public list_layout::Region<SoftList> {
  using Node = list_layout::Node;  // volatile node: key, meta = state, next, aux = its persistent node
  friend Region;
  enum State : uint64_t { kIntendInsert = 0, kInserted = 1, kIntendDelete = 2, kDeleted = 3 };
  static constexpr uint64_t kVHead = 64;  // offset of the volatile head in the DRAM buffer
  static constexpr uint64_t kVFirst = 128;

 public:
  static constexpr ListDesign kDesign = ListDesign::soft;

  SoftList(std::byte* base, size_t size, const persist::Persister& p, int advance_every = 32)
      : Region(base, size, p), reclaimer_(advance_every) {}

  Status recover() {
    PMLAB_TRY(check_root("SOFT list"));
    make_slabs();
    auto members = validity::members(*pslab_, base_);  // (key, persistent node)
    if (!members) return members.status();
    pslab_->reset_all_free();
    uint64_t prev = kVHead;
    for (const auto& [key, pn] : *members) {
      pslab_->mark_allocated(pn);
      const uint64_t v = vslab_->alloc(0);
      if (v == 0) return error(Errc::corrupted, "more members than capacity");
      *vnode(v) = Node{key, kInserted, 0, pn};
      vnode(prev)->next = v;
      prev = v;
    }
    vnode(prev)->next = 0;
    return Status::success();
  }

  InsertOutcome try_insert(int tid, uint64_t key) {
    uint64_t v = 0, pn = 0;
    return at_window(tid, key, [&](const Window& w) -> std::optional<InsertOutcome> {
      if (w.curr != 0 && vnode(w.curr)->key == key) {
        const uint64_t s = state(w.curr).load(std::memory_order_acquire);
        if (s >= kIntendDelete) return std::nullopt;  // being deleted: find helps it out of the list
        if (s == kIntendInsert) help_insert(w.curr);
        if (v != 0) {
          vslab_->free(v);
          pslab_->free(pn);
        }
        return InsertOutcome::present;
      }
      if (v == 0) {
        v = vslab_->alloc(tid);
        pn = v == 0 ? 0 : pslab_->alloc(tid);
        if (pn == 0) {
          if (v != 0) vslab_->free(v);
          return InsertOutcome::no_space;
        }
        // Plain: the persistent node is private until the CAS below publishes its volatile node, and no
        // tear of this word is a member (its flags are byte 0: the old node's, deleted, or none).
        pnode(pn)->meta = validity::fresh(key);
        vnode(v)->key = key;
        vnode(v)->aux = pn;
        state(v).store(kIntendInsert, std::memory_order_relaxed);
      }
      link(v).store(w.curr, std::memory_order_relaxed);
      uint64_t expected = w.pred_word;
      if (link(w.pred).compare_exchange_strong(expected, v, std::memory_order_acq_rel)) {
        help_insert(v);
        return InsertOutcome::inserted;
      }
      return std::nullopt;
    });
  }

  bool remove(int tid, uint64_t key) {
    return at_window(tid, key, [&](const Window& w) -> std::optional<bool> {
      if (w.curr == 0 || vnode(w.curr)->key != key) return false;
      uint64_t s = state(w.curr).load(std::memory_order_acquire);
      if (s != kInserted) return false;  // not yet inserted, or another delete came first
      if (!state(w.curr).compare_exchange_strong(s, kIntendDelete, std::memory_order_acq_rel)) return std::nullopt;
      if (unlink(tid, key, w, help_delete(w.curr))) retire(tid, w.curr);
      return true;
    });
  }

  bool contains(int tid, uint64_t key) {
    EpochReclaimer::Guard guard(reclaimer_, tid);
    uint64_t curr = list_layout::ptr(link(kVHead).load(std::memory_order_acquire));
    while (curr != 0 && vnode(curr)->key < key) curr = list_layout::ptr(link(curr).load(std::memory_order_acquire));
    if (curr == 0 || vnode(curr)->key != key) return false;
    if (link(curr).load(std::memory_order_acquire) & list_layout::kMark) return false;  // deletion durable
    const uint64_t s = state(curr).load(std::memory_order_acquire);
    if (s == kInserted) return true;
    if (s == kIntendDelete) (void)help_delete(curr);  // "absent" only once the deletion is durable
    return false;
  }

  std::vector<uint64_t> keys() const {
    std::vector<uint64_t> out;
    for (uint64_t c = list_layout::ptr(vnode(kVHead)->next); c != 0; c = list_layout::ptr(vnode(c)->next))
      if ((vnode(c)->next & list_layout::kMark) == 0 && vnode(c)->meta == kInserted) out.push_back(vnode(c)->key);
    return out;
  }

  Status check() {
    reclaimer_.drain();
    uint64_t reached = 0, prev = 0;
    for (uint64_t c = list_layout::ptr(vnode(kVHead)->next); c != 0; c = list_layout::ptr(vnode(c)->next)) {
      if (++reached > vslab_->count()) return error(Errc::corrupted, "cycle in the list");
      if (vnode(c)->meta != kInserted || (vnode(c)->next & list_layout::kMark))
        return error(Errc::corrupted, "a linked node is not a member");
      if (vnode(c)->key <= prev) return error(Errc::corrupted, "keys out of order");
      if (!validity::member(pnode(vnode(c)->aux)->meta) ||
          validity::key_of(pnode(vnode(c)->aux)->meta) != vnode(c)->key)
        return error(Errc::corrupted, "a member's persistent node is not valid");
      prev = vnode(c)->key;
    }
    PMLAB_TRY(reaches_every_taken_node("persistent slab", pslab_->allocated(), reached));
    return reaches_every_taken_node("volatile slab", vslab_->allocated(), reached);
  }

  Slab& slab() noexcept { return *pslab_; }
  EpochReclaimer& reclaimer() noexcept { return reclaimer_; }

 private:
  Node* pnode(uint64_t off) const noexcept { return reinterpret_cast<Node*>(base_ + off); }
  Node* vnode(uint64_t off) const noexcept { return reinterpret_cast<Node*>(dram_.get() + off); }
  std::atomic_ref<uint64_t> link(uint64_t v) const noexcept { return std::atomic_ref<uint64_t>(vnode(v)->next); }
  std::atomic_ref<uint64_t> state(uint64_t v) const noexcept { return std::atomic_ref<uint64_t>(vnode(v)->meta); }

  void make_slabs() {
    const uint32_t capacity = static_cast<uint32_t>(root().capacity);
    pslab_ = std::make_unique<Slab>(base_, list_layout::slab_offset(static_cast<int>(root().max_threads)),
                                    static_cast<uint32_t>(sizeof(Node)), capacity);
    dram_bytes_ = kVFirst + static_cast<uint64_t>(capacity) * sizeof(Node);
    dram_.reset(new (std::align_val_t{64}) std::byte[dram_bytes_]);
    std::memset(dram_.get(), 0, dram_bytes_);
    vslab_ = std::make_unique<Slab>(dram_.get(), kVFirst, static_cast<uint32_t>(sizeof(Node)), capacity);
  }

  // Makes the persistent node valid and durable, then the insert visible (idempotent: any thread).
  void help_insert(uint64_t v) {
    const uint64_t pn = vnode(v)->aux;
    uint64_t fresh = validity::fresh(vnode(v)->key);
    // A CAS, not a store: a late helper must not revive a node whose deletion is already recorded.
    p_.word(&pnode(pn)->meta).compare_exchange_strong(fresh, fresh | validity::kValid, std::memory_order_acq_rel);
    if (state(v).load(std::memory_order_acquire) != kIntendInsert) return;
    p_.persist(pnode(pn), sizeof(Node));
    uint64_t s = kIntendInsert;
    state(v).compare_exchange_strong(s, kInserted, std::memory_order_acq_rel);
  }

  // Makes the deletion durable, then marks the volatile node; returns its (marked) link word.
  uint64_t help_delete(uint64_t v) {
    if (state(v).load(std::memory_order_acquire) == kIntendDelete) {
      const uint64_t pn = vnode(v)->aux;
      p_.word(&pnode(pn)->meta).fetch_or(validity::kDeleted, std::memory_order_acq_rel);
      p_.persist(pnode(pn), sizeof(Node));
      uint64_t s = kIntendDelete;
      state(v).compare_exchange_strong(s, kDeleted, std::memory_order_acq_rel);
    }
    uint64_t w = link(v).load(std::memory_order_acquire);
    while ((w & list_layout::kMark) == 0 &&
           !link(v).compare_exchange_weak(w, w | list_layout::kMark, std::memory_order_acq_rel)) {}
    return w | list_layout::kMark;
  }

  void retire(int tid, uint64_t v) {
    reclaimer_.retire(tid, *pslab_, vnode(v)->aux);
    reclaimer_.retire(tid, *vslab_, v);
  }

  Window find(int tid, uint64_t key) {
  retry:
    uint64_t pred = kVHead;
    uint64_t pred_word = link(pred).load(std::memory_order_acquire);
    for (;;) {
      const uint64_t curr = list_layout::ptr(pred_word);
      if (curr == 0) return {pred, pred_word, 0, 0};
      uint64_t curr_word = link(curr).load(std::memory_order_acquire);
      if ((curr_word & list_layout::kMark) == 0 && state(curr).load(std::memory_order_acquire) >= kIntendDelete)
        curr_word = help_delete(curr);
      if (curr_word & list_layout::kMark) {
        const uint64_t succ = list_layout::ptr(curr_word);
        uint64_t expected = pred_word;
        if (!link(pred).compare_exchange_strong(expected, succ, std::memory_order_acq_rel)) goto retry;
        retire(tid, curr);
        pred_word = succ;
        continue;
      }
      if (vnode(curr)->key >= key) return {pred, pred_word, curr, curr_word};
      pred = curr;
      pred_word = curr_word;
    }
  }

  struct AlignedDelete {
    void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
  };

  std::unique_ptr<Slab> pslab_;
  std::unique_ptr<std::byte[], AlignedDelete> dram_;
  uint64_t dram_bytes_ = 0;
  std::unique_ptr<Slab> vslab_;
  // Last: destroyed first, while the slabs it frees into still exist.
  EpochReclaimer reclaimer_;
};

static_assert(PersistentSet<SoftList>);

}  // namespace pmlab::lockfree
