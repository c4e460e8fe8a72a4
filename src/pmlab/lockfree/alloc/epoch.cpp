#include "pmlab/lockfree/alloc/epoch.hpp"

namespace pmlab::lockfree {

EpochReclaimer::EpochReclaimer(int advance_every)
    : advance_every_(advance_every < 1 ? 1u : static_cast<uint32_t>(advance_every)),
      locals_(std::make_unique<Local[]>(Slab::kMaxThreads)) {}

EpochReclaimer::~EpochReclaimer() { drain(); }

void EpochReclaimer::enter(int tid) noexcept {
  Local& me = locals_[tid];
  const uint64_t e = global_.load(std::memory_order_acquire);
  // seq_cst: the announcement must be visible before this thread reads any node (store-load order).
  me.announced.store(e << 1 | kActive, std::memory_order_seq_cst);
  const uint64_t now = global_.load(std::memory_order_seq_cst);
  if (now != e) me.announced.store(now << 1 | kActive, std::memory_order_seq_cst);
  if (me.seen != now) {
    // Lists filled in epoch now-2 or before were retired while every active thread had announced an
    // epoch <= now-2; all of them have since moved on, so nothing can reach those nodes.
    me.seen = now;
    lock(me);
    free_old(me, now);
    unlock(me);
  }
  if (++me.enters % advance_every_ == 0) try_advance(now);
}

void EpochReclaimer::exit(int tid) noexcept {
  Local& me = locals_[tid];
  me.announced.store(me.announced.load(std::memory_order_relaxed) & ~kActive, std::memory_order_release);
}

void EpochReclaimer::retire(int tid, Slab& slab, uint64_t offset) {
  Local& me = locals_[tid];
  // Tagged with the global epoch at the unlink, not the epoch this thread announced: a reader that
  // entered later (at the newer epoch) may still hold the node, and only leaves that epoch once the
  // global one is two ahead of the tag.
  const uint64_t epoch = global_.load(std::memory_order_seq_cst);
  const size_t i = epoch % 3;
  lock(me);
  if (me.limbo_epoch[i] != epoch) {  // the list holds epoch-3 or older: safe, free it
    free_list(me.limbo[i]);
    me.limbo_epoch[i] = epoch;
  }
  me.limbo[i].push_back({&slab, offset});
  unlock(me);
}

void EpochReclaimer::free_old(Local& l, uint64_t now) noexcept {
  for (int i = 0; i < 3; ++i)
    if (!l.limbo[i].empty() && l.limbo_epoch[i] + 2 <= now) free_list(l.limbo[i]);
}

void EpochReclaimer::reclaim_all() noexcept {
  try_advance(global_.load(std::memory_order_seq_cst));
  const uint64_t now = global_.load(std::memory_order_seq_cst);
  for (int t = 0; t < Slab::kMaxThreads; ++t) {
    Local& l = locals_[t];
    if (!try_lock(l)) continue;
    free_old(l, now);
    unlock(l);
  }
}

void EpochReclaimer::try_advance(uint64_t epoch) noexcept {
  for (int t = 0; t < Slab::kMaxThreads; ++t) {
    const uint64_t a = locals_[t].announced.load(std::memory_order_seq_cst);
    if ((a & kActive) != 0 && (a >> 1) != epoch) return;
  }
  uint64_t expected = epoch;
  global_.compare_exchange_strong(expected, epoch + 1, std::memory_order_seq_cst);
}

void EpochReclaimer::free_list(std::vector<Retired>& list) noexcept {
  for (const Retired& r : list) r.slab->free(r.offset);
  list.clear();
}

void EpochReclaimer::drain() noexcept {
  for (int t = 0; t < Slab::kMaxThreads; ++t)
    for (auto& list : locals_[t].limbo) free_list(list);
}

uint64_t EpochReclaimer::pending() const noexcept {
  uint64_t n = 0;
  for (int t = 0; t < Slab::kMaxThreads; ++t)
    for (const auto& list : locals_[t].limbo) n += list.size();
  return n;
}

}  // namespace pmlab::lockfree
