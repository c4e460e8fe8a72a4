// The ptm suite's hash map: the ds hashtable (ds/hashtable/hashtable.hpp: chained buckets of nodes
// [next][key][value cell]) run on the PTM through TxArena, with 8-byte values and as many buckets as
// initial keys. Keys are drawn uniformly from twice the initial size, so inserts and removes keep the size
// stable; an insert of a present key updates its value. A transaction: a lookup (lookup_pct), else an
// insert or a remove with equal odds.
#pragma once

#include "pmlab/common/status.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ptm/workloads/tx_arena.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

template <Ptm P>
class HashMap : public StructureWorkload<P, ds::Hashtable> {
  using Base = StructureWorkload<P, ds::Hashtable>;
  using typename Base::Structure;

 public:
  static constexpr const char* kName = "hashmap";
  static constexpr int kRoot = 6;  // holds the map's header

  // Every other key of the key space; create() gets the initial keys: the bucket count.
  Status load(P& ptm, const Config& c) {
    return this->load_keys(
        ptm, c, kRoot, c.records, 256, [](uint64_t i) { return 2 * i; }, kName);
  }

  void op(P& ptm, int slot, Rng& rng) {
    const uint64_t key = rng.below(this->keys_);
    const uint64_t dice = rng.below(200);
    const auto lookups = static_cast<uint64_t>(2 * this->lookup_pct_);
    this->s_->run(ptm, slot, [&](Structure& m) {
      uint64_t v = key ^ dice;
      if (dice < lookups) (void)m.read(key, 0, word_bytes(v));
      else if (dice % 2 == 0) (void)m.insert(key, 0, word_bytes(v));
      else (void)m.remove(key, 0);
    });
  }

  Status check(P& ptm) {
    Status st;
    this->s_->run(ptm, 0, [&](Structure& m) { st = this->check_structure(m, kName); });
    return st;
  }
};

}  // namespace pmlab::ptm::workloads
