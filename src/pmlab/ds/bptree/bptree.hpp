// The B+-tree, with selective persistence (as FPTree and NV-Tree): the leaves are the persistent
// structure, a linked list in key order; the inner nodes are an index over them that is never made durable
// and is rebuilt from the leaves by recover().
//
// Leaf: one commit word [next leaf's block number : 32][slot bitmap : 32], a byte of fingerprint per slot
// (a hash of its key, as FPTree's [FPTree]), then unsorted slots [key][value]. A lookup compares the
// fingerprints (one line with the commit word) eight to a word and reads only the slots whose byte
// matches — about one — instead of every live slot's key, each on a line of its own. The fingerprints are
// volatile by design: kept up to date by every change, never made durable, and rewritten from the keys by
// recover(). Every change to a leaf is one 8-byte store of the commit word:
//  - insert: write a free slot, persist it, set its bit;
//  - update: write a free slot with the new value, persist it, set its bit and clear the old one's;
//  - remove: clear its bit (a leaf is never merged: an emptied one keeps its place in the list);
//  - split: copy the upper half of the keys into a new leaf that links to the old leaf's successor,
//    persist it, then in one store link the old leaf to it and clear the moved bits.
// So a crash leaves each leaf either before or after the operation, and no leaf or value is leaked by
// updates (slots are reused).
//
// Locking (threads > 1): the tree's shape — inner nodes, leaf links, which keys a leaf covers — changes
// only in a split. A split holds the whole-tree lock exclusively (against scans, which hold it shared and
// walk the leaf links) and makes the shape version odd while it runs ([OLC]), and it takes the stripe of
// each leaf it changes. Point reads and upserts take neither the tree lock nor, on the way down, anything
// else: they note an even shape version, descend without a lock (the descent stays inside the arena
// whatever a concurrent split leaves half done), and keep what they did only if the version has not
// moved. A reader then reads its leaf optimistically against the leaf's stripe; an upsert locks the stripe
// and checks the shape version after taking it, so a split either came before (the upsert descends again)
// or waits for the stripe. Neither writes a line that other operations share, and an update releases
// only its stripe (a plain store) after its write-backs: a locked instruction there would wait for them
// to finish. An upsert that finds its leaf full lets go and runs again exclusively to split it.
//
// A block number is an offset in units of the policy's block alignment: 32 bits of them reach 256 GiB of
// a ds arena (64-byte blocks) and 32 GiB of a PTM heap (8-byte aligned blocks). Under a policy whose
// every store is transactional (a PTM) the index is durable with the leaves, and recover() keeps it.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <vector>

#include "pmlab/ds/common/access.hpp"
#include "pmlab/ds/common/arena.hpp"
#include "pmlab/ds/common/locks.hpp"
#include "pmlab/ds/common/structure.hpp"

namespace pmlab::ds {

template <PersistencePolicy A>
class BPTree : public StructureBase<Identity{"bptree", "bf"}> {
 public:
  // How threads share it, as a run's context states it.
  static constexpr const char* kLocking =
      "version locks per leaf (writers take them, point reads validate them) and a shape "
      "version that splits take and reads and upserts validate; a reader-writer lock for splits "
      "and scans";
  static constexpr bool kDenseKeysOnly = false;

  static constexpr uint32_t kFanout = 32;  // children per inner node
  static constexpr int kMaxDepth = 16;

  BPTree(A& arena, const Options& o)
      : StructureBase(o),
        arena_(arena),
        slots_(std::clamp<uint32_t>(o.leaf_slots, 4, 32)),
        header_bytes_(8 + 8 * ((slots_ + 7) / 8)) {
    arena_.declare_volatile(arena_.root(1), 16);  // the index root and its depth
  }

  static uint64_t bytes_needed(const Options& o) {
    const uint64_t slots = std::clamp<uint32_t>(o.leaf_slots, 4, 32);
    const uint64_t leaf = block_bytes(8 + 8 * ((slots + 7) / 8) + slots * (8 + ValueCell(o.value_bytes).stride()));
    // Leaves are at least half full after a split; inner nodes (~1/16 of the leaves) and one rebuild.
    const uint64_t leaves = 2 * o.capacity / slots + 2;
    return sizeof(ArenaHeader) + leaves * leaf + 2 * (leaves / (kFanout / 2) + 2) * kInnerBytes + 4 * kBlockAlign;
  }

  Status create(uint64_t) {
    const auto head = format_with_block(arena_, kMagic, leaf_bytes(), "B+-tree first leaf");
    if (!head) return head.status();
    arena_.declare_volatile(fingerprints(*head), header_bytes_ - 8);
    arena_.store(arena_.root(0), *head);
    arena_.store(arena_.root(1), *head);  // index root (volatile)
    arena_.store(arena_.root(2), 0);      // inner levels (volatile)
    arena_.store(arena_.root(3), slots_);
    arena_.persist(arena_.root(0), 32);
    return Status::success();
  }
  // Checks the leaf list and rebuilds the volatile parts over it: the leaves' fingerprints and the inner
  // nodes.
  Status recover() {
    PMLAB_TRY(arena_.open(kMagic));
    if (arena_.load(arena_.root(3)) != slots_)
      return error(Errc::corrupted, "B+-tree leaf size differs from the one it was created with");
    PMLAB_TRY(check_leaves(A::kDeclaredVolatileSurvives));
    if constexpr (!A::kDeclaredVolatileSurvives) {
      PMLAB_TRY(rebuild_index());
      // The rebuild took arena space: the bump offset it advanced is durable before new leaves follow it.
      arena_.fence();
    }
    return Status::success();
  }

  // recover() for a tree written back whole after its last change (a clean close its user recorded): keeps
  // the index if it routes every leaf's keys to it, rather than rebuild it in new arena space (a bump arena
  // never reuses the old one's blocks); a stale fingerprint or a node outside the arena makes it recover().
  Status reopen() {
    PMLAB_TRY(arena_.open(kMagic));
    if (arena_.load(arena_.root(3)) != slots_ || !check_leaves(true).ok()) return recover();
    uint64_t next = arena_.load(arena_.root(0));
    const bool routes = routes_leaves(arena_.load(arena_.root(1)), arena_.load(arena_.root(2)), 0, 0, true, next);
    return routes && next == 0 ? Status::success() : recover();
  }

  bool insert(uint64_t key, uint64_t, const std::byte* value) noexcept(A::kNothrow) { return upsert(key, value, true); }
  bool update(uint64_t key, uint64_t, const std::byte* value) noexcept(A::kNothrow) {
    return upsert(key, value, false);
  }
  bool read(uint64_t key, uint64_t, std::byte* out) noexcept(A::kNothrow) {
    if (!concurrent_) return read_in_leaf(descend(key, nullptr), key, out);
    // Optimistic twice over: the descent against the shape version, the leaf against its stripe. Whatever
    // a racing writer left half done, the bitmap (masked to the leaf's slots) names slots of this leaf
    // only, so a torn read stays inside it, and is done again.
    for (;;) {
      uint64_t shape = 0;
      const uint64_t leaf = descend_unlocked(key, &shape);
      if (leaf == 0) return false;  // the index is damaged (check())
      const bool found = leaf_locks_.read_validated(leaf_stripe(leaf), [&] { return read_in_leaf(leaf, key, out); });
      if (shape_.still_valid(0, shape)) return found;
    }
  }
  // Removes `key` with one 8-byte store: its slot's bit cleared in the leaf's commit word. Leaves are never
  // merged or freed: an emptied leaf stays in the list and takes the inserts of its key range again.
  bool remove(uint64_t key, uint64_t) noexcept(A::kNothrow) {
    if (concurrent_)
      return in_locked_leaf(key, [&](uint64_t leaf) { return remove_in_leaf(leaf, key); }).value_or(false);
    [[maybe_unused]] const auto op = arena_.operation();
    return remove_in_leaf(descend(key, nullptr), key);
  }

  uint32_t scan(uint64_t key, uint64_t, uint32_t n, std::byte* out) noexcept(A::kNothrow) {
    return scan_with(key, n, out, [](uint64_t) {});
  }
  // Up to n records from the first key >= `key` on, in key order: each record's value read into `value`
  // (value_bytes), then visit(its key). Under the tree's shared lock and each leaf's stripe when threads
  // share the tree: `visit` must not call into it.
  template <class Visit>
  uint32_t scan_with(uint64_t key, uint32_t n, std::byte* value,
                     Visit&& visit) noexcept(A::kNothrow&& noexcept(visit(key))) {
    GlobalLock::Shared guard(lock_, concurrent_);
    uint32_t seen = 0;
    std::array<std::pair<uint64_t, uint32_t>, 32> sorted;
    for (uint64_t leaf = descend(key, nullptr); leaf != 0 && seen < n; leaf = next_of(leaf)) {
      const LeafLock locked(*this, leaf);  // the link to the next leaf changes only in a split
      uint32_t m = 0;
      for (uint32_t bits = bitmap(leaf); bits != 0; bits &= bits - 1) {
        const uint32_t s = static_cast<uint32_t>(std::countr_zero(bits));
        const uint64_t k = key_at(leaf, s);
        if (k >= key) sorted[m++] = {k, s};
      }
      std::sort(sorted.begin(), sorted.begin() + m);
      for (uint32_t i = 0; i < m && seen < n; ++i, ++seen) {
        arena_.read_bytes(value, slot(leaf, sorted[i].second) + 8, cell_.value_bytes());
        visit(sorted[i].first);
      }
    }
    return seen;
  }

  uint64_t count() const noexcept(A::kNothrow) {
    uint64_t n = 0;
    for (uint64_t leaf = arena_.load(arena_.root(0)); leaf != 0; leaf = next_of(leaf))
      n += static_cast<uint64_t>(std::popcount(bitmap(leaf)));
    return n;
  }
  // The leaf list: inside the arena, acyclic, bits only for existing slots, keys unique in a leaf, every
  // key of a leaf below every key of the next (the order splits establish), and each live slot's
  // fingerprint that of its key.
  Status check() const { return check_leaves(true); }

 private:
  Status check_leaves(bool fingerprinted) const {
    const uint64_t limit = arena_.used() / A::kAlign;
    uint64_t steps = 0;
    bool any = false;
    uint64_t previous_max = 0;
    // create() links a first leaf that nothing unlinks: a list without one is a damaged root word.
    if (arena_.load(arena_.root(0)) == 0) return error(Errc::corrupted, "B+-tree has no leaf");
    for (uint64_t leaf = arena_.load(arena_.root(0)); leaf != 0; leaf = next_of(leaf)) {
      if (!arena_.contains(leaf, leaf_bytes()) || leaf % A::kAlign != 0)
        return error(Errc::corrupted, "B+-tree leaf list links outside the arena");
      if (++steps > limit) return error(Errc::corrupted, "B+-tree leaf list has a cycle");
      const uint32_t bits = bitmap(leaf);
      if (slots_ < 32 && (bits >> slots_) != 0)
        return error(Errc::corrupted, "B+-tree leaf bitmap names slots it does not have");
      uint64_t lo = UINT64_MAX, hi = 0;
      for (uint32_t b = bits; b != 0; b &= b - 1) {
        const uint32_t s = static_cast<uint32_t>(std::countr_zero(b));
        const uint64_t k = key_at(leaf, s);
        if (fingerprinted && fingerprint_at(leaf, s) != fingerprint_of(k))
          return error(Errc::corrupted, "B+-tree leaf fingerprint does not match its key");
        for (uint32_t o = b & (b - 1); o != 0; o &= o - 1)
          if (key_at(leaf, static_cast<uint32_t>(std::countr_zero(o))) == k)
            return error(Errc::corrupted, "B+-tree leaf holds a key twice");
        lo = std::min(lo, k);
        hi = std::max(hi, k);
      }
      if (bits != 0) {
        if (any && lo <= previous_max) return error(Errc::corrupted, "B+-tree leaves are out of key order");
        any = true;
        previous_max = hi;
      }
    }
    return Status::success();
  }

  static constexpr uint64_t kInnerBytes = 8 + 8 * (kFanout - 1) + 8 * kFanout;
  static constexpr uint64_t kBitsMask = 0xffffffffULL;

  // Inner node: [children count][keys × (kFanout - 1)][children × kFanout]; child i holds keys in
  // [keys[i-1], keys[i]).
  struct Inner {
    uint64_t count;
    uint64_t keys[kFanout - 1];
    uint64_t kids[kFanout];
  };
  static_assert(sizeof(Inner) == kInnerBytes);

  size_t slot_bytes() const noexcept { return 8 + cell_.stride(); }
  uint32_t all_slots() const noexcept { return slots_ == 32 ? 0xffffffffu : (1u << slots_) - 1; }
  size_t leaf_bytes() const noexcept { return header_bytes_ + slots_ * slot_bytes(); }
  uint64_t* word(uint64_t leaf) const noexcept { return arena_.template at<uint64_t>(leaf); }
  uint32_t bitmap(uint64_t leaf) const noexcept(A::kNothrow) {
    return static_cast<uint32_t>(arena_.load8(word(leaf)) & kBitsMask);
  }
  uint64_t next_of(uint64_t leaf) const noexcept(A::kNothrow) { return (arena_.load8(word(leaf)) >> 32) * A::kAlign; }
  std::byte* slot(uint64_t leaf, uint32_t s) const noexcept {
    return arena_.bytes(leaf + header_bytes_ + s * slot_bytes());
  }
  // The fingerprint words after the commit word: slot s's byte is byte s % 8 of word s / 8.
  uint64_t* fingerprints(uint64_t leaf) const noexcept { return arena_.template at<uint64_t>(leaf + 8); }
  static uint8_t fingerprint_of(uint64_t key) noexcept { return static_cast<uint8_t>(mix_key(key) >> 56); }
  uint8_t fingerprint_at(uint64_t leaf, uint32_t s) const noexcept(A::kNothrow) {
    return static_cast<uint8_t>(arena_.load(fingerprints(leaf) + s / 8) >> (8 * (s % 8)));
  }
  void set_fingerprint(uint64_t leaf, uint32_t s, uint64_t key) noexcept(A::kNothrow) {
    uint64_t* w = fingerprints(leaf) + s / 8;
    const uint32_t shift = 8 * (s % 8);
    arena_.store(w, (arena_.load(w) & ~(uint64_t{0xff} << shift)) | uint64_t{fingerprint_of(key)} << shift);
  }
  // 0x80 in each byte of x that is zero, 0 in the others (exact: no borrow crosses bytes).
  static uint64_t zero_bytes(uint64_t x) noexcept {
    constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
    return ~(((x & kLow7) + kLow7) | x | kLow7);
  }
  uint64_t key_at(uint64_t leaf, uint32_t s) const noexcept(A::kNothrow) {
    return arena_.load(reinterpret_cast<const uint64_t*>(slot(leaf, s)));
  }
  Inner* inner(uint64_t off) const noexcept { return arena_.template at<Inner>(off); }
  // Inner nodes live in the arena but are never made durable: recovery rebuilds them from the leaves.
  uint64_t alloc_inner() noexcept(A::kNothrow) {
    const uint64_t off = arena_.alloc(kInnerBytes);
    if (off != 0) arena_.declare_volatile(arena_.bytes(off), kInnerBytes);
    return off;
  }
  // The child of `in` that covers `key`: the first separator above it (an upper bound). The count is
  // clamped to the node's room: a descent racing a split (descend_racing) may read any count.
  uint64_t child_index(const Inner* in, uint64_t key) const noexcept(A::kNothrow) {
    uint64_t lo = 0, hi = std::clamp<uint64_t>(arena_.load(&in->count), 1, kFanout) - 1;
    while (lo < hi) {
      const uint64_t mid = (lo + hi) / 2;
      if (key < arena_.load(&in->keys[mid])) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  bool read_in_leaf(uint64_t leaf, uint64_t key, std::byte* out) const noexcept(A::kNothrow) {
    const int s = find_slot(leaf, key);
    if (s < 0) return false;
    arena_.read_bytes(out, slot(leaf, static_cast<uint32_t>(s)) + 8, cell_.value_bytes());
    return true;
  }
  // The live slot holding `key`, or -1: the key is read only in slots whose fingerprint matches.
  int find_slot(uint64_t leaf, uint64_t key) const noexcept(A::kNothrow) {
    const uint32_t bits = bitmap(leaf) & all_slots();  // a racing reader's bitmap may be any word
    const uint64_t pattern = 0x0101010101010101ULL * fingerprint_of(key);
    for (uint32_t w = 0; w * 8 < slots_; ++w) {
      const uint32_t live = (bits >> (8 * w)) & 0xff;
      if (live == 0) continue;
      for (uint64_t match = zero_bytes(arena_.load(fingerprints(leaf) + w) ^ pattern); match != 0; match &= match - 1) {
        const uint32_t byte = static_cast<uint32_t>(std::countr_zero(match)) / 8;
        if ((live >> byte & 1) != 0 && key_at(leaf, 8 * w + byte) == key) return static_cast<int>(8 * w + byte);
      }
    }
    return -1;
  }

  // The leaf for `key`; `path` (when given) receives the inner nodes from the root down.
  uint64_t descend(uint64_t key, uint64_t* path) const noexcept(A::kNothrow) {
    uint64_t node = arena_.load(arena_.root(1));
    const uint64_t depth = arena_.load(arena_.root(2));
    for (uint64_t level = 0; level < depth; ++level) {
      if (path != nullptr) path[level] = node;
      const Inner* in = inner(node);
      node = arena_.load(&in->kids[child_index(in, key)]);
    }
    return node;
  }

  // descend() for a thread that holds no lock against splits (it validates the shape version after): each
  // node's offset is checked to lie inside the arena, on the block grid, with room for the node, before it
  // is read, and the depth is bounded, so a descent that raced a split ends inside the arena whatever it
  // read. 0: a node failed the checks (the caller descends again).
  uint64_t descend_racing(uint64_t key) const noexcept(A::kNothrow) {
    const OptimisticReads racy;
    uint64_t node = arena_.load8(arena_.root(1));
    const uint64_t depth = arena_.load8(arena_.root(2));
    if (depth > kMaxDepth) return 0;
    for (uint64_t level = 0; level < depth; ++level) {
      if (!inside(node, kInnerBytes)) return 0;
      const Inner* in = inner(node);
      node = arena_.load8(&in->kids[child_index(in, key)]);
    }
    return inside(node, leaf_bytes()) ? node : 0;
  }
  // The leaf of `key` by descend_racing, again until a descent finds one or no split came by during it
  // (0: the index is damaged); `shape`: the even shape version it descended under, for the caller to
  // validate what it then does in the leaf.
  uint64_t descend_unlocked(uint64_t key, uint64_t* shape) const noexcept(A::kNothrow) {
    for (;;) {
      *shape = shape_.read_begin(0);
      const uint64_t leaf = descend_racing(key);
      if (leaf != 0 || shape_.still_valid(0, *shape)) return leaf;
    }
  }
  bool inside(uint64_t off, uint64_t bytes) const noexcept {
    return off % A::kAlign == 0 && arena_.contains(off, bytes);
  }

  static uint64_t leaf_stripe(uint64_t leaf) noexcept { return mix_key(leaf) >> 32; }
  // The leaf's lock for the scope, when threads share the tree.
  class LeafLock {
   public:
    LeafLock(const BPTree& t, uint64_t leaf) noexcept : locked_(t.leaf_locks_, leaf_stripe(leaf), t.concurrent_) {}

   private:
    MaybeLocked<StripedVersionLocks, uint64_t> locked_;
  };

  // act(leaf) on the leaf of `key`, holding its stripe, when threads share the tree; nullopt when the
  // index is damaged (as in read()).
  template <class Act>
  auto in_locked_leaf(uint64_t key, Act&& act) noexcept(A::kNothrow) -> std::optional<decltype(act(key))> {
    for (;;) {
      uint64_t shape = 0;
      const uint64_t leaf = descend_unlocked(key, &shape);
      if (leaf == 0) return std::nullopt;
      const LeafLock locked(*this, leaf);
      // After the stripe is held: a split that began before has moved the version (descend again); one
      // that begins after waits for the stripe.
      if (!shape_.still_valid(0, shape)) continue;
      [[maybe_unused]] const auto op = arena_.operation();
      return act(leaf);
    }
  }

  bool upsert(uint64_t key, const std::byte* value, bool may_insert) noexcept(A::kNothrow) {
    if (concurrent_) {
      const auto r =
          in_locked_leaf(key, [&](uint64_t leaf) { return put_in_leaf(leaf, key, value, may_insert, false); });
      if (!r) return false;
      if (*r != Put::full) return *r == Put::done;
    }
    GlobalLock::Exclusive guard(lock_, concurrent_);
    const MaybeLocked<StripedVersionLocks, uint64_t> changing(shape_, 0, concurrent_);  // the shape version odd
    [[maybe_unused]] const auto op = arena_.operation();
    return put(key, value, may_insert);
  }

  bool remove_in_leaf(uint64_t leaf, uint64_t key) noexcept(A::kNothrow) {
    const int s = find_slot(leaf, key);
    if (s < 0) return false;
    arena_.store8(word(leaf), arena_.load8(word(leaf)) & ~(uint64_t{1} << s));
    arena_.persist(word(leaf), 8);
    return true;
  }

  enum class Put { done, absent, full };
  // Writes key and value into a free slot of `leaf` and commits it with the leaf's word (replacing the
  // key's old slot); `split_before`: this operation split the leaf, so the free slot may be one the split
  // moved out (live when the operation began).
  Put put_in_leaf(uint64_t leaf, uint64_t key, const std::byte* value, bool may_insert,
                  bool split_before) noexcept(A::kNothrow) {
    const int existing = find_slot(leaf, key);
    if (existing < 0 && !may_insert) return Put::absent;
    const uint32_t bits = bitmap(leaf);
    if (bits == all_slots()) return Put::full;
    const uint32_t s = static_cast<uint32_t>(std::countr_one(bits));
    std::byte* target = slot(leaf, s);
    if (split_before) arena_.will_overwrite(target, 8 + cell_.value_bytes());
    arena_.store(reinterpret_cast<uint64_t*>(target), key);
    arena_.write_bytes(target + 8, value, cell_.value_bytes());
    set_fingerprint(leaf, s, key);  // volatile: not written back (recover() rewrites it)
    arena_.persist(target, 8 + cell_.value_bytes());
    uint32_t next_bits = bits | (1u << s);
    if (existing >= 0) next_bits &= ~(1u << existing);
    arena_.store8(word(leaf), (arena_.load8(word(leaf)) & ~kBitsMask) | next_bits);
    arena_.persist(word(leaf), 8);
    return Put::done;
  }

  // Under the tree's lock held exclusively and the shape version odd (or one thread): splits as often as
  // the key's leaf is full. The leaf's stripe is taken as well: an upsert that checked the shape version
  // before it went odd may still be writing that leaf.
  bool put(uint64_t key, const std::byte* value, bool may_insert) noexcept(A::kNothrow) {
    bool split_before = false;
    for (;;) {
      uint64_t path[kMaxDepth];
      const uint64_t leaf = descend(key, path);
      const LeafLock locked(*this, leaf);
      const Put r = put_in_leaf(leaf, key, value, may_insert, split_before);
      if (r != Put::full) return r == Put::done;
      if (!split(leaf, path)) return false;
      split_before = true;
    }
  }

  bool split(uint64_t leaf, const uint64_t* path) noexcept(A::kNothrow) {
    // Room first for the leaf, an inner node per level and a root: a split durable in the leaves must reach
    // the index, or descents miss the new leaf (a PTM's transaction takes back a split out of room instead).
    if constexpr (requires { arena_.has_room(uint64_t{}); })
      if (!arena_.has_room(block_bytes(leaf_bytes()) + (arena_.load(arena_.root(2)) + 1) * block_bytes(kInnerBytes)))
        return false;
    const uint64_t right = arena_.alloc(leaf_bytes());
    if (right == 0) return false;
    std::array<std::pair<uint64_t, uint32_t>, 32> live;
    uint32_t n = 0;
    for (uint32_t bits = bitmap(leaf); bits != 0; bits &= bits - 1) {
      const uint32_t s = static_cast<uint32_t>(std::countr_zero(bits));
      live[n++] = {key_at(leaf, s), s};
    }
    std::sort(live.begin(), live.begin() + n);
    const uint32_t keep = n / 2;
    uint32_t moved_bits = 0;
    arena_.declare_volatile(fingerprints(right), header_bytes_ - 8);
    for (uint32_t i = keep; i < n; ++i) {
      arena_.copy(slot(right, i - keep), slot(leaf, live[i].second), slot_bytes());
      set_fingerprint(right, i - keep, live[i].first);
      moved_bits |= 1u << live[i].second;
    }
    const uint64_t old_word = arena_.load8(word(leaf));
    const uint32_t moved = n - keep;
    arena_.store(word(right), (old_word & ~kBitsMask) | (moved == 32 ? 0xffffffffu : (1u << moved) - 1));
    arena_.persist(arena_.bytes(right), header_bytes_ + moved * slot_bytes());
    arena_.store8(word(leaf), ((right / A::kAlign) << 32) | ((old_word & kBitsMask) & ~moved_bits));
    arena_.persist(word(leaf), 8);
    return add_to_parent(path, static_cast<int>(arena_.load(arena_.root(2))) - 1, live[keep].first, right);
  }

  // Inserts separator `sep` with its right child after the child that split, at path level `level`
  // (-1: the split node was the root). Only the words that change are stored: under a PTM each is logged.
  bool add_to_parent(const uint64_t* path, int level, uint64_t sep, uint64_t right) noexcept(A::kNothrow) {
    if (level < 0) {
      const uint64_t depth = arena_.load(arena_.root(2));
      if (depth + 1 >= kMaxDepth) return false;
      const uint64_t root = alloc_inner();
      if (root == 0) return false;
      Inner* in = inner(root);
      arena_.store(&in->count, 2);
      arena_.store(&in->keys[0], sep);
      arena_.store(&in->kids[0], arena_.load(arena_.root(1)));
      arena_.store(&in->kids[1], right);
      arena_.store(arena_.root(1), root);
      arena_.store(arena_.root(2), depth + 1);
      return true;
    }
    Inner* in = inner(path[level]);
    const uint64_t c = arena_.load(&in->count);
    const uint64_t pos = child_index(in, sep);  // sep becomes keys[pos], right becomes kids[pos + 1]
    if (c < kFanout) {
      for (uint64_t i = c - 1; i > pos; --i) arena_.store(&in->keys[i], arena_.load(&in->keys[i - 1]));
      arena_.store(&in->keys[pos], sep);
      for (uint64_t i = c; i > pos + 1; --i) arena_.store(&in->kids[i], arena_.load(&in->kids[i - 1]));
      arena_.store(&in->kids[pos + 1], right);
      arena_.store(&in->count, c + 1);
      return true;
    }
    uint64_t keys[kFanout];
    uint64_t kids[kFanout + 1];
    for (uint64_t i = 0, j = 0; i < c - 1; ++i, ++j) {
      if (i == pos) keys[j++] = sep;
      keys[j] = arena_.load(&in->keys[i]);
    }
    if (pos == c - 1) keys[c - 1] = sep;
    for (uint64_t i = 0, j = 0; i < c; ++i, ++j) {
      kids[j] = arena_.load(&in->kids[i]);
      if (i == pos) kids[++j] = right;
    }
    const uint64_t sibling = alloc_inner();
    if (sibling == 0) return false;
    Inner* r = inner(sibling);
    const uint64_t left_kids = (kFanout + 1) / 2;
    // The left half keeps its first pos keys and pos + 1 children as they are.
    arena_.store(&in->count, left_kids);
    for (uint64_t i = pos; i < left_kids - 1; ++i) arena_.store(&in->keys[i], keys[i]);
    for (uint64_t i = pos + 1; i < left_kids; ++i) arena_.store(&in->kids[i], kids[i]);
    arena_.store(&r->count, kFanout + 1 - left_kids);
    for (uint64_t i = left_kids; i < kFanout; ++i) arena_.store(&r->keys[i - left_kids], keys[i]);
    for (uint64_t i = left_kids; i <= kFanout; ++i) arena_.store(&r->kids[i - left_kids], kids[i]);
    return add_to_parent(path, level - 1, keys[left_kids - 1], sibling);
  }

  // Whether the subtree at `node`, `levels` inner levels high, reaches the leaves from `next` on in list
  // order (moving `next` past them), each with keys in [lo, hi) only (no bound above when `top`).
  bool routes_leaves(uint64_t node, uint64_t levels, uint64_t lo, uint64_t hi, bool top, uint64_t& next) const {
    if (levels == 0) {
      if (node == 0 || node != next) return false;
      for (uint32_t b = bitmap(node); b != 0; b &= b - 1) {
        const uint64_t k = key_at(node, static_cast<uint32_t>(std::countr_zero(b)));
        if (k < lo || (!top && k >= hi)) return false;
      }
      next = next_of(node);
      return true;
    }
    if (levels > kMaxDepth || !inside(node, kInnerBytes)) return false;
    const Inner* in = inner(node);
    const uint64_t n = arena_.load(&in->count);
    uint64_t from = lo, previous = 0;
    if (n < 1 || n > kFanout) return false;
    for (uint64_t i = 0; i < n; ++i) {
      const bool last = i + 1 == n;
      const uint64_t sep = last ? hi : arena_.load(&in->keys[i]);
      if (!last && sep < previous) return false;  // descents search the separators in order
      if (!routes_leaves(arena_.load(&in->kids[i]), levels - 1, from, top || last ? sep : std::min(hi, sep),
                         top && last, next))
        return false;
      from = std::max(lo, previous = sep);
    }
    return true;
  }

  // Rewrites the leaves' fingerprints and bulk-builds full inner nodes over the leaves, bottom up.
  Status rebuild_index() {
    std::vector<std::pair<uint64_t, uint64_t>> level;  // (separator: the smallest key it covers, node)
    std::optional<uint64_t> previous_max;              // of the last leaf that holds keys
    for (uint64_t leaf = arena_.load(arena_.root(0)); leaf != 0; leaf = next_of(leaf)) {
      arena_.declare_volatile(fingerprints(leaf), header_bytes_ - 8);
      const uint32_t bits = bitmap(leaf);
      uint64_t lo = UINT64_MAX, hi = 0;
      for (uint32_t b = bits; b != 0; b &= b - 1) {
        const uint32_t s = static_cast<uint32_t>(std::countr_zero(b));
        const uint64_t k = key_at(leaf, s);
        set_fingerprint(leaf, s, k);
        lo = std::min(lo, k);
        hi = std::max(hi, k);
      }
      // A leaf that removes emptied covers the keys between its neighbours' (a separator equal to the next
      // leaf's minimum would route it none, and one equal to the previous leaf's would steal that leaf's).
      if (bits == 0) lo = !previous_max ? 0 : *previous_max == UINT64_MAX ? UINT64_MAX : *previous_max + 1;
      else previous_max = hi;
      level.emplace_back(lo, leaf);
    }
    uint64_t depth = 0;
    while (level.size() > 1) {
      std::vector<std::pair<uint64_t, uint64_t>> up;
      for (size_t i = 0; i < level.size(); i += kFanout) {
        const uint64_t off = alloc_inner();
        if (off == 0) return error(Errc::no_space, "no room to rebuild the B+-tree index");
        Inner* in = inner(off);
        const size_t n = std::min<size_t>(kFanout, level.size() - i);
        arena_.store(&in->count, n);
        for (size_t k = 0; k < n; ++k) {
          arena_.store(&in->kids[k], level[i + k].second);
          if (k > 0) arena_.store(&in->keys[k - 1], level[i + k].first);
        }
        up.emplace_back(level[i].first, off);
      }
      level = std::move(up);
      ++depth;
    }
    arena_.store(arena_.root(1), level.front().second);
    arena_.store(arena_.root(2), depth);
    return Status::success();
  }

  A& arena_;
  uint32_t slots_;
  uint32_t header_bytes_;  // the commit word and the fingerprint words
  GlobalLock lock_;        // splits exclusively, scans shared
  // Writers (and scans) hold their leaf's stripe; point reads only validate against it.
  mutable StripedVersionLocks leaf_locks_;
  mutable StripedVersionLocks shape_{1};  // odd while a split changes the shape
};

}  // namespace pmlab::ds
