// A persistent B+-tree of 8-byte keys and values, written over the PTM interface: the tree of the ds
// suite (ds/bptree) reshaped for transactions — every node word goes through tx.read / tx.write, and a
// split carves its new node with tx.alloc, so the whole insert (splits included) is one failure-atomic
// transaction instead of the ds tree's hand-ordered flushes. Insert splits full nodes on the way down
// (one pass, no parent pointers). Leaves hold values in ptr[i]; inner nodes hold children, separator
// keys[i] with left < keys[i] <= right. No delete (the workload is lookups and upserts).
#pragma once

#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

inline constexpr int kBtMax = 15;  // keys per node
struct BtNode {
  uint64_t leaf;
  uint64_t n;
  uint64_t keys[kBtMax];
  uint64_t ptr[kBtMax + 1];
};

// Roots: 9 = tree root, 10 = key count.
template <class Tx>
uint64_t bt_new_node(Tx& tx, bool leaf) {
  const uint64_t off = tx.alloc(sizeof(BtNode));
  if (off == 0) return 0;
  BtNode* n = tx.template at<BtNode>(off);
  tx.write(&n->leaf, leaf ? 1 : 0);
  tx.write(&n->n, 0);
  return off;
}

template <class Tx>
bool bt_lookup(Tx& tx, uint64_t key, uint64_t* value) {
  uint64_t off = tx.read(tx.root(9));
  while (off != 0) {
    BtNode* n = tx.template at<BtNode>(off);
    const uint64_t count = tx.read(&n->n);
    uint64_t i = 0;
    if (tx.read(&n->leaf)) {
      for (; i < count; ++i)
        if (tx.read(&n->keys[i]) == key) {
          *value = tx.read(&n->ptr[i]);
          return true;
        }
      return false;
    }
    while (i < count && key >= tx.read(&n->keys[i])) ++i;
    off = tx.read(&n->ptr[i]);
  }
  return false;
}

// Splits the full child `i` of `parent` (not full). False when the heap is full.
template <class Tx>
bool bt_split_child(Tx& tx, BtNode* parent, uint64_t i) {
  BtNode* child = tx.template at<BtNode>(tx.read(&parent->ptr[i]));
  const bool leaf = tx.read(&child->leaf) != 0;
  const uint64_t right_off = bt_new_node(tx, leaf);
  if (right_off == 0) return false;
  BtNode* right = tx.template at<BtNode>(right_off);
  constexpr uint64_t mid = kBtMax / 2;
  uint64_t separator;
  if (leaf) {
    for (uint64_t j = mid; j < kBtMax; ++j) {
      tx.write(&right->keys[j - mid], tx.read(&child->keys[j]));
      tx.write(&right->ptr[j - mid], tx.read(&child->ptr[j]));
    }
    tx.write(&right->n, kBtMax - mid);
    separator = tx.read(&child->keys[mid]);
  } else {
    for (uint64_t j = mid + 1; j < kBtMax; ++j) tx.write(&right->keys[j - mid - 1], tx.read(&child->keys[j]));
    for (uint64_t j = mid + 1; j <= kBtMax; ++j) tx.write(&right->ptr[j - mid - 1], tx.read(&child->ptr[j]));
    tx.write(&right->n, kBtMax - mid - 1);
    separator = tx.read(&child->keys[mid]);
  }
  tx.write(&child->n, mid);
  const uint64_t pn = tx.read(&parent->n);
  for (uint64_t j = pn; j > i; --j) {
    tx.write(&parent->keys[j], tx.read(&parent->keys[j - 1]));
    tx.write(&parent->ptr[j + 1], tx.read(&parent->ptr[j]));
  }
  tx.write(&parent->keys[i], separator);
  tx.write(&parent->ptr[i + 1], right_off);
  tx.write(&parent->n, pn + 1);
  return true;
}

// Inserts or updates. False when the heap is full.
template <class Tx>
bool bt_upsert(Tx& tx, uint64_t key, uint64_t value) {
  uint64_t root = tx.read(tx.root(9));
  if (root == 0) {
    root = bt_new_node(tx, true);
    if (root == 0) return false;
    tx.write(tx.root(9), root);
  }
  if (tx.read(&tx.template at<BtNode>(root)->n) == kBtMax) {
    const uint64_t top = bt_new_node(tx, false);
    if (top == 0) return false;
    tx.write(&tx.template at<BtNode>(top)->ptr[0], root);
    if (!bt_split_child(tx, tx.template at<BtNode>(top), 0)) return false;
    tx.write(tx.root(9), top);
    root = top;
  }
  BtNode* n = tx.template at<BtNode>(root);
  for (;;) {
    const uint64_t count = tx.read(&n->n);
    if (tx.read(&n->leaf)) {
      uint64_t i = 0;
      while (i < count && tx.read(&n->keys[i]) < key) ++i;
      if (i < count && tx.read(&n->keys[i]) == key) {
        tx.write(&n->ptr[i], value);
        return true;
      }
      for (uint64_t j = count; j > i; --j) {
        tx.write(&n->keys[j], tx.read(&n->keys[j - 1]));
        tx.write(&n->ptr[j], tx.read(&n->ptr[j - 1]));
      }
      tx.write(&n->keys[i], key);
      tx.write(&n->ptr[i], value);
      tx.write(&n->n, count + 1);
      tx.write(tx.root(10), tx.read(tx.root(10)) + 1);
      return true;
    }
    uint64_t i = 0;
    while (i < count && key >= tx.read(&n->keys[i])) ++i;
    if (tx.read(&tx.template at<BtNode>(tx.read(&n->ptr[i]))->n) == kBtMax) {
      if (!bt_split_child(tx, n, i)) return false;
      if (key >= tx.read(&n->keys[i])) ++i;
    }
    n = tx.template at<BtNode>(tx.read(&n->ptr[i]));
  }
}

// Keys sorted and inside their separators, every leaf at one depth; returns the number of keys.
template <class Tx>
Result<uint64_t> bt_check(Tx& tx) {
  struct Walk {
    Tx& tx;
    int leaf_depth = -1;
    Result<uint64_t> visit(uint64_t off, int depth, bool has_lo, uint64_t lo, bool has_hi, uint64_t hi) {
      BtNode* n = tx.template at<BtNode>(off);
      const uint64_t count = tx.read(&n->n);
      if (count > static_cast<uint64_t>(kBtMax)) return error(Errc::corrupted, "bptree: node count over the fanout");
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t k = tx.read(&n->keys[i]);
        if ((has_lo && k < lo) || (has_hi && k >= hi) || (i > 0 && k <= tx.read(&n->keys[i - 1])))
          return error(Errc::corrupted, "bptree: keys out of order");
      }
      if (tx.read(&n->leaf)) {
        if (leaf_depth < 0) leaf_depth = depth;
        if (leaf_depth != depth) return error(Errc::corrupted, "bptree: leaves at different depths");
        return count;
      }
      uint64_t total = 0;
      for (uint64_t i = 0; i <= count; ++i) {
        const bool clo = i > 0 || has_lo, chi = i < count || has_hi;
        const uint64_t clov = i > 0 ? tx.read(&n->keys[i - 1]) : lo, chiv = i < count ? tx.read(&n->keys[i]) : hi;
        auto sub = visit(tx.read(&n->ptr[i]), depth + 1, clo, clov, chi, chiv);
        if (!sub) return sub;
        total += *sub;
      }
      return total;
    }
  };
  const uint64_t root = tx.read(tx.root(9));
  if (root == 0) return uint64_t{0};
  Walk w{tx};
  return w.visit(root, 0, false, 0, false, 0);
}

template <class P>
class BPTree {
 public:
  static constexpr const char* kName = "bptree";
  static uint64_t heap_bytes(const Config& c) { return c.records * 2 / 5 * 288 + c.records * 2 * 288 / 7 + (4 << 20); }

  Status load(P& ptm, const Config& c) {
    keys_ = 2 * c.records;
    lookup_pct_ = c.lookup_pct;
    bool ok = true;
    // Every other key, in a scrambled order so the tree is not built by appends alone.
    for (uint64_t i = 0; i < c.records && ok;) {
      ptm.run(0, [&](auto& tx) {
        for (int b = 0; b < 64 && i < c.records && ok; ++b, ++i) {
          const uint64_t k = 2 * ((i * 0x9E3779B1ull) % c.records);
          ok = bt_upsert(tx, k, k);
        }
      });
    }
    if (!ok) return error(Errc::no_space, "bptree: heap too small");
    return Status::success();
  }

  void op(P& ptm, int slot, Rng& rng) {
    const uint64_t key = rng.below(keys_);
    const bool lookup = rng.below(100) < static_cast<uint64_t>(lookup_pct_);
    ptm.run(slot, [&](auto& tx) {
      uint64_t v;
      if (lookup) (void)bt_lookup(tx, key, &v);
      else (void)bt_upsert(tx, key, key + 1);
    });
  }

  Status check(P& ptm) {
    Status st;
    ptm.run(0, [&](auto& tx) {
      auto count = bt_check(tx);
      if (!count) st = count.status();
      else if (*count != tx.read(tx.root(10)))
        st = error(Errc::corrupted, "bptree: " + std::to_string(*count) + " keys, count root says " + std::to_string(tx.read(tx.root(10))));
    });
    return st;
  }

 private:
  uint64_t keys_ = 0;
  int lookup_pct_ = 50;
};

}  // namespace pmlab::ptm::workloads
