// The ptm suite's hash map: the ds hashtable (ds/hashtable/hashtable.hpp: chained buckets of nodes
// [next][key][value cell]) run on the PTM through TxArena, with 8-byte values and as many buckets as
// initial keys. Keys are drawn uniformly from twice the initial size, so inserts and removes keep the size
// stable; an insert of a present key updates its value. A transaction: a lookup (lookup_pct), else an
// insert or a remove with equal odds.
#pragma once

#include <optional>
#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/ds/hashtable/hashtable.hpp"
#include "pmlab/ptm/workloads/tx_arena.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

template <Ptm P>
class HashMap {
  using Map = PtmStructure<P, ds::Hashtable>;

 public:
  static constexpr const char* kName = "hashmap";
  static constexpr int kRoot = 6;  // holds the map's header

  // The ds arena's bound for every key of the key space present (its blocks are no smaller than the PTM
  // heap's), and room for the heap's own bookkeeping.
  static uint64_t heap_bytes(const Config& c) { return Map::Structure::bytes_needed(options(c)) + (1 << 20); }

  Status load(P& ptm, const Config& c) {
    keys_ = 2 * c.records;
    lookup_pct_ = c.lookup_pct;
    map_.emplace(ptm, kRoot, options(c));
    PMLAB_TRY(map_->create(ptm, c.records));
    bool ok = true;
    // Every other key of the key space, in batches.
    for (uint64_t k = 0; k < keys_ && ok;) {
      map_->run(ptm, 0, [&](typename Map::Structure& m) {
        for (int i = 0; i < 256 && k < keys_ && ok; ++i, k += 2) ok = m.insert(k, 0, word_bytes(k));
      });
    }
    if (!ok) return error(Errc::no_space, "hashmap: heap too small");
    return Status::success();
  }

  void op(P& ptm, int slot, Rng& rng) {
    const uint64_t key = rng.below(keys_);
    const uint64_t dice = rng.below(200);
    map_->run(ptm, slot, [&](typename Map::Structure& m) {
      uint64_t v = key ^ dice;
      if (dice < static_cast<uint64_t>(2 * lookup_pct_)) (void)m.read(key, 0, word_bytes(v));
      else if (dice % 2 == 0) (void)m.insert(key, 0, word_bytes(v));
      else (void)m.remove(key, 0);
    });
  }

  Status check(P& ptm) {
    Status st;
    map_->run(ptm, 0, [&](typename Map::Structure& m) {
      st = m.check();
      if (st.ok() && m.count() > keys_)
        st = error(Errc::corrupted, "hashmap: " + std::to_string(m.count()) + " keys from a key space of " + std::to_string(keys_));
    });
    return st;
  }

 private:
  // Sized for the whole key space; create() gets the initial keys: the bucket count.
  static ds::Options options(const Config& c) { return word_values(2 * c.records); }

  std::optional<Map> map_;
  uint64_t keys_ = 0;
  int lookup_pct_ = 50;
};

}  // namespace pmlab::ptm::workloads
