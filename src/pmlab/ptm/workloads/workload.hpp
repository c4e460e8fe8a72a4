// The workloads of the ptm suite, written once over the PTM interface (ptm/common/ptm.hpp) and run
// unchanged on undo, redo and PMDK. Each is a class template over the PTM with
//   static heap_bytes(config)     bytes of heap it needs (pmlab heap or PMDK pool)
//   load(ptm, config)             untimed: build the initial structure (in transactions, on slot 0)
//   op(ptm, slot, rng)            one timed transaction
//   check(ptm)                    structural invariants after the run (a failed Status says which)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pmlab/common/status.hpp"

namespace pmlab::ptm::workloads {

struct Config {
  uint64_t records = 1 << 16;  // array entries, accounts, initial keys or queue length
  int swaps = 16;              // SPS: swaps per transaction
  int lookup_pct = 50;         // hash map and B+-tree: share of read-only lookups
};

// xorshift64*: the per-thread generator of the timed loops (a few instructions, no shared state).
class Rng {
 public:
  explicit Rng(uint64_t seed) noexcept : s_(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {
    if (s_ == 0) s_ = 1;
  }
  uint64_t next() noexcept {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545F4914F6CDD1Dull;
  }
  uint64_t below(uint64_t n) noexcept {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  uint64_t s_;
};

// A word as a structure's 8-byte value (to store, or to read into).
inline std::byte* word_bytes(uint64_t& w) noexcept { return reinterpret_cast<std::byte*>(&w); }
inline const std::byte* word_bytes(const uint64_t& w) noexcept { return reinterpret_cast<const std::byte*>(&w); }

// What SPS and the bank share: one array of words in the heap, published in roots 0 (offset) and 1
// (length), and a heap bound of the array plus the heap's own bookkeeping.
class WordArrayWorkload {
 public:
  // Records a run loads (config.records), in a full sweep and in a quick one.
  static constexpr uint64_t kRecords = 1 << 20, kQuickRecords = 1 << 16;
  static uint64_t heap_bytes(const Config& c) { return c.records * 8 + (1 << 20); }

 protected:
  // Allocates n words in one transaction and fills word i with init(i); `what` names the workload in the
  // out-of-space error.
  template <class P, class Init>
  Status load_words(P& ptm, uint64_t n, Init&& init, const std::string& what) {
    bool ok = true;
    ptm.run(0, [&](auto& tx) {
      const uint64_t off = tx.alloc(n * 8);
      if (off == 0) {
        ok = false;
        return;
      }
      uint64_t* a = tx.template at<uint64_t>(off);
      for (uint64_t i = 0; i < n; ++i) tx.write(a + i, init(i));
      tx.write(tx.root(0), off);
      tx.write(tx.root(1), n);
    });
    if (!ok) return error(Errc::no_space, what + ": heap too small for the array");
    ptm.run(0, [&](auto& tx) { words_ = tx.template at<uint64_t>(tx.read(tx.root(0))); });
    n_ = n;
    return Status::success();
  }

  uint64_t n_ = 0;
  uint64_t* words_ = nullptr;
};

}  // namespace pmlab::ptm::workloads
