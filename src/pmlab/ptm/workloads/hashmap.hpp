// A persistent chained hash map of 8-byte keys and values: a bucket array (one word per bucket, the
// offset of the first node) and nodes {key, value, next}. Keys are drawn uniformly from twice the initial
// size, so inserts and removes keep the size stable; an insert of a present key updates its value.
// A transaction: a lookup (lookup_pct), else an insert or a remove with equal odds.
#pragma once

#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

// Roots: 6 = bucket array, 7 = buckets, 8 = size.
struct HashNode {
  uint64_t key;
  uint64_t value;
  uint64_t next;
};

inline uint64_t hash_key(uint64_t key) noexcept { return (key ^ (key >> 29)) * 0xBF58476D1CE4E5B9ull; }

template <class Tx>
uint64_t* hashmap_bucket(Tx& tx, uint64_t key) {
  uint64_t* buckets = tx.template at<uint64_t>(tx.read(tx.root(6)));
  return buckets + (hash_key(key) % tx.read(tx.root(7)));
}

template <class Tx>
bool hashmap_lookup(Tx& tx, uint64_t key, uint64_t* value) {
  for (uint64_t off = tx.read(hashmap_bucket(tx, key)); off != 0;) {
    HashNode* n = tx.template at<HashNode>(off);
    if (tx.read(&n->key) == key) {
      *value = tx.read(&n->value);
      return true;
    }
    off = tx.read(&n->next);
  }
  return false;
}

// False when the heap is full.
template <class Tx>
bool hashmap_upsert(Tx& tx, uint64_t key, uint64_t value) {
  uint64_t* bucket = hashmap_bucket(tx, key);
  for (uint64_t off = tx.read(bucket); off != 0;) {
    HashNode* n = tx.template at<HashNode>(off);
    if (tx.read(&n->key) == key) {
      tx.write(&n->value, value);
      return true;
    }
    off = tx.read(&n->next);
  }
  const uint64_t off = tx.alloc(sizeof(HashNode));
  if (off == 0) return false;
  HashNode* n = tx.template at<HashNode>(off);
  tx.write(&n->key, key);
  tx.write(&n->value, value);
  tx.write(&n->next, tx.read(bucket));
  tx.write(bucket, off);
  tx.write(tx.root(8), tx.read(tx.root(8)) + 1);
  return true;
}

template <class Tx>
bool hashmap_remove(Tx& tx, uint64_t key) {
  uint64_t* link = hashmap_bucket(tx, key);
  for (uint64_t off = tx.read(link); off != 0;) {
    HashNode* n = tx.template at<HashNode>(off);
    if (tx.read(&n->key) == key) {
      tx.write(link, tx.read(&n->next));
      tx.write(tx.root(8), tx.read(tx.root(8)) - 1);
      tx.free(off);
      return true;
    }
    link = &n->next;
    off = tx.read(link);
  }
  return false;
}

template <class P>
class HashMap {
 public:
  static constexpr const char* kName = "hashmap";
  static uint64_t heap_bytes(const Config& c) { return c.records * 8 + c.records * 2 * 48 + (1 << 20); }

  Status load(P& ptm, const Config& c) {
    keys_ = 2 * c.records;
    lookup_pct_ = c.lookup_pct;
    bool ok = true;
    ptm.run(0, [&](auto& tx) {
      const uint64_t off = tx.alloc(c.records * 8);
      if (off == 0) {
        ok = false;
        return;
      }
      uint64_t* b = tx.template at<uint64_t>(off);
      for (uint64_t i = 0; i < c.records; ++i) tx.write(b + i, 0);
      tx.write(tx.root(6), off);
      tx.write(tx.root(7), c.records);
      tx.write(tx.root(8), 0);
    });
    // Every other key of the key space, in batches.
    for (uint64_t k = 0; k < keys_ && ok;) {
      ptm.run(0, [&](auto& tx) {
        for (int i = 0; i < 256 && k < keys_ && ok; ++i, k += 2) ok = hashmap_upsert(tx, k, k);
      });
    }
    if (!ok) return error(Errc::no_space, "hashmap: heap too small");
    return Status::success();
  }

  void op(P& ptm, int slot, Rng& rng) {
    const uint64_t key = rng.below(keys_);
    const uint64_t dice = rng.below(200);
    ptm.run(slot, [&](auto& tx) {
      uint64_t v;
      if (dice < static_cast<uint64_t>(2 * lookup_pct_)) (void)hashmap_lookup(tx, key, &v);
      else if (dice % 2 == 0) (void)hashmap_upsert(tx, key, key ^ dice);
      else (void)hashmap_remove(tx, key);
    });
  }

  Status check(P& ptm) {
    Status st;
    ptm.run(0, [&](auto& tx) {
      const uint64_t nb = tx.read(tx.root(7));
      uint64_t* buckets = tx.template at<uint64_t>(tx.read(tx.root(6)));
      uint64_t count = 0;
      for (uint64_t b = 0; b < nb && st.ok(); ++b)
        for (uint64_t off = tx.read(buckets + b); off != 0; off = tx.read(&tx.template at<HashNode>(off)->next)) {
          ++count;
          if (hash_key(tx.read(&tx.template at<HashNode>(off)->key)) % nb != b) {
            st = error(Errc::corrupted, "hashmap: a key sits in the wrong bucket");
            break;
          }
        }
      if (st.ok() && count != tx.read(tx.root(8)))
        st = error(Errc::corrupted, "hashmap: " + std::to_string(count) + " nodes, size root says " + std::to_string(tx.read(tx.root(8))));
    });
    return st;
  }

 private:
  uint64_t keys_ = 0;
  int lookup_pct_ = 50;
};

}  // namespace pmlab::ptm::workloads
