// A B+-tree scan of up to 2^64 entries: BPTree::scan_with counts in 32 bits, so a longer one goes on
// from past the last key seen, chunk after chunk.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace pmlab::ds {

// Visits up to `limit` entries of `tree` from the first key not below `from` on, in key order, as
// scan_with does (each value read into `value`, then visit(key)); returns the entries visited.
template <class Tree, class Visit>
uint64_t scan_long(Tree& tree, uint64_t from, uint64_t limit, std::byte* value, Visit&& visit) {
  uint64_t visited = 0;
  for (bool more = true; more && visited < limit;) {
    const auto chunk = static_cast<uint32_t>(std::min<uint64_t>(limit - visited, UINT32_MAX));
    uint64_t last = 0;
    const uint32_t seen = tree.scan_with(from, chunk, value, [&](uint64_t k) {
      last = k;
      visit(k);
    });
    visited += seen;
    more = seen == chunk && last != UINT64_MAX;
    from = last + 1;
  }
  return visited;
}

}  // namespace pmlab::ds
