// The ptm suite's B+-tree: the ds B+-tree (ds/bptree/bptree.hpp: leaves with a slot bitmap and a next
// link in one commit word, an index of inner nodes above them) run on the PTM through TxArena, with
// 8-byte values. Keys are drawn uniformly from twice the loaded ones, so upserts both insert and update. A
// transaction is one structure operation, splits included: a lookup (lookup_pct) or an upsert.
#pragma once

#include <optional>
#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ptm/workloads/tx_arena.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

template <Ptm P>
class BPTree {
  using Tree = PtmStructure<P, ds::BPTree>;

 public:
  static constexpr const char* kName = "bptree";
  static constexpr int kRoot = 9;  // holds the tree's header

  // The ds arena's bound for every key of the key space present (its blocks are no smaller than the PTM
  // heap's), and room for the heap's own bookkeeping.
  static uint64_t heap_bytes(const Config& c) { return Tree::Structure::bytes_needed(options(c)) + (1 << 20); }

  Status load(P& ptm, const Config& c) {
    keys_ = 2 * c.records;
    lookup_pct_ = c.lookup_pct;
    tree_.emplace(ptm, kRoot, options(c));
    PMLAB_TRY(tree_->create(ptm, keys_));
    bool ok = true;
    // Every other key, in a scrambled order so the tree is not built by appends alone.
    for (uint64_t i = 0; i < c.records && ok;) {
      tree_->run(ptm, 0, [&](typename Tree::Structure& t) {
        for (int b = 0; b < 64 && i < c.records && ok; ++b, ++i) {
          const uint64_t k = 2 * ((i * 0x9E3779B1ull) % c.records);
          ok = t.insert(k, 0, word_bytes(k));
        }
      });
    }
    if (!ok) return error(Errc::no_space, "bptree: heap too small");
    return Status::success();
  }

  void op(P& ptm, int slot, Rng& rng) {
    const uint64_t key = rng.below(keys_);
    const bool lookup = rng.below(100) < static_cast<uint64_t>(lookup_pct_);
    tree_->run(ptm, slot, [&](typename Tree::Structure& t) {
      uint64_t v = key + 1;
      if (lookup) (void)t.read(key, 0, word_bytes(v));
      else (void)t.insert(key, 0, word_bytes(v));
    });
  }

  // The tree's invariants, and every loaded key still there (nothing removes one) with its loaded or an
  // upserted value.
  Status check(P& ptm) {
    Status st;
    tree_->run(ptm, 0, [&](typename Tree::Structure& t) {
      st = t.check();
      for (uint64_t k = 0; st.ok() && k < keys_; k += 2) {
        uint64_t v = 0;
        if (!t.read(k, 0, word_bytes(v)) || (v != k && v != k + 1))
          st = error(Errc::corrupted, "bptree: loaded key " + std::to_string(k) + " is missing or holds a foreign value");
      }
      if (st.ok() && t.count() > keys_)
        st = error(Errc::corrupted, "bptree: " + std::to_string(t.count()) + " keys from a key space of " + std::to_string(keys_));
    });
    return st;
  }

 private:
  static ds::Options options(const Config& c) { return word_values(2 * c.records); }

  std::optional<Tree> tree_;
  uint64_t keys_ = 0;
  int lookup_pct_ = 50;
};

}  // namespace pmlab::ptm::workloads
