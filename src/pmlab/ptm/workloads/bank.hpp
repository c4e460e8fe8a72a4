// Bank transfers with a vacation-like mix: accounts in one array; 90% of transactions move an amount
// between two random accounts (2 reads, up to 2 writes), 10% are reservations that read 8 random
// accounts (the "offers"), pick the richest and move a fee from it to the house account (account 0):
// longer read sets with a data-dependent write set, as in STAMP's vacation. Invariant: the total is
// conserved.
#pragma once

#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

inline constexpr uint64_t kInitialBalance = 1000;

template <class P>
class Bank : public WordArrayWorkload {
 public:
  static constexpr const char* kName = "bank";

  Status load(P& ptm, const Config& c) {
    return load_words(
        ptm, c.records < 2 ? 2 : c.records, [](uint64_t) { return kInitialBalance; }, kName);
  }

  void op(P& ptm, int slot, Rng& rng) {
    const uint64_t dice = rng.below(10);
    if (dice != 0) {
      uint64_t* from = words_ + rng.below(n_);
      uint64_t* to = words_ + rng.below(n_);
      const uint64_t amount = 1 + rng.below(50);
      ptm.run(slot, [&](auto& tx) {
        const uint64_t f = tx.read(from);
        if (from == to || f < amount) return;
        tx.write(from, f - amount);
        tx.write(to, tx.read(to) + amount);
      });
      return;
    }
    uint64_t offers[8];
    for (uint64_t& o : offers) o = rng.below(n_);
    ptm.run(slot, [&](auto& tx) {
      uint64_t best = offers[0], best_balance = 0;
      for (uint64_t o : offers) {
        const uint64_t b = tx.read(words_ + o);
        if (b > best_balance) {
          best_balance = b;
          best = o;
        }
      }
      if (best == 0 || best_balance < 5) return;
      tx.write(words_ + best, best_balance - 5);
      tx.write(words_, tx.read(words_) + 5);
    });
  }

  Status check(P& ptm) {
    uint64_t total = 0;
    ptm.run(0, [&](auto& tx) {
      for (uint64_t i = 0; i < n_; ++i) total += tx.read(words_ + i);
    });
    if (total != n_ * kInitialBalance)
      return error(Errc::corrupted,
                   "bank: total " + std::to_string(total) + " != " + std::to_string(n_ * kInitialBalance));
    return Status::success();
  }
};

}  // namespace pmlab::ptm::workloads
