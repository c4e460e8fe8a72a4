// SPS [OptanePTM]: an array of `records` words holding a permutation; a transaction swaps `swaps` random
// pairs of entries (2 reads and 2 writes each). Invariant: the array stays a permutation of 0..n-1.
#pragma once

#include <string>
#include <vector>

#include "pmlab/common/status.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

template <class P>
class Sps : public WordArrayWorkload {
 public:
  static constexpr const char* kName = "sps";

  Status load(P& ptm, const Config& c) {
    swaps_ = c.swaps;
    return load_words(
        ptm, c.records, [](uint64_t i) { return i; }, kName);
  }

  void op(P& ptm, int slot, Rng& rng) {
    ptm.run(slot, [&](auto& tx) {
      for (int k = 0; k < swaps_; ++k) {
        uint64_t* x = words_ + rng.below(n_);
        uint64_t* y = words_ + rng.below(n_);
        const uint64_t vx = tx.read(x), vy = tx.read(y);
        tx.write(x, vy);
        tx.write(y, vx);
      }
    });
  }

  Status check(P& ptm) {
    std::vector<uint8_t> seen(n_, 0);
    Status st;
    ptm.run(0, [&](auto& tx) {
      for (uint64_t i = 0; i < n_ && st.ok(); ++i) {
        const uint64_t v = tx.read(words_ + i);
        if (v >= n_ || seen[v])
          st = error(Errc::corrupted, "sps: array is no longer a permutation at " + std::to_string(i));
        else seen[v] = 1;
      }
    });
    return st;
  }

 private:
  int swaps_ = 1;
};

}  // namespace pmlab::ptm::workloads
