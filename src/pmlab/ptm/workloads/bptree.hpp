// The ptm suite's B+-tree: the ds B+-tree (ds/bptree/bptree.hpp: leaves with a slot bitmap and a next
// link in one commit word, an index of inner nodes above them) run on the PTM through TxArena, with
// 8-byte values. Keys are drawn uniformly from twice the loaded ones, so upserts both insert and update. A
// transaction is one structure operation, splits included: a lookup (lookup_pct) or an upsert.
#pragma once

#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/ds/bptree/bptree.hpp"
#include "pmlab/ptm/workloads/tx_arena.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

template <Ptm P>
class BPTree : public StructureWorkload<P, ds::BPTree> {
  using Base = StructureWorkload<P, ds::BPTree>;
  using typename Base::Structure;

 public:
  static constexpr const char* kName = "bptree";
  static constexpr int kRoot = 9;  // holds the tree's header

  // Every other key, in a scrambled order so the tree is not built by appends alone.
  Status load(P& ptm, const Config& c) {
    return this->load_keys(
        ptm, c, kRoot, 2 * c.records, 64, [&](uint64_t i) { return 2 * ((i * 0x9E3779B1ull) % c.records); }, kName);
  }

  void op(P& ptm, int slot, Rng& rng) {
    const uint64_t key = rng.below(this->keys_);
    const bool lookup = rng.below(100) < static_cast<uint64_t>(this->lookup_pct_);
    this->s_->run(ptm, slot, [&](Structure& t) {
      uint64_t v = key + 1;
      if (lookup) (void)t.read(key, 0, word_bytes(v));
      else (void)t.insert(key, 0, word_bytes(v));
    });
  }

  // The tree's invariants, and every loaded key still there (nothing removes one) with its loaded or an
  // upserted value.
  Status check(P& ptm) {
    Status st;
    const uint64_t keys = this->keys_;
    this->s_->run(ptm, 0, [&](Structure& t) {
      st = this->check_structure(t, kName);
      for (uint64_t k = 0; st.ok() && k < keys; k += 2) {
        uint64_t v = 0;
        if (!t.read(k, 0, word_bytes(v)) || (v != k && v != k + 1))
          st = error(Errc::corrupted,
                     "bptree: loaded key " + std::to_string(k) + " is missing or holds a foreign value");
      }
    });
    return st;
  }
};

}  // namespace pmlab::ptm::workloads
