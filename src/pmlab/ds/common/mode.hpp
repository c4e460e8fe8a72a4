// The modes a structure is instantiated in. The code of a structure is written once, generic over its
// persistence policy (ds/common/access.hpp); in these modes that is the region arena Arena<M> of a mode
// policy M, which says whether its writes are made durable, and the medium under the arena says where the
// structure lives:
//   dram           volatile policy on a DRAM buffer
//   pmem-volatile  volatile policy on the pool (PMEM used as plain memory)
//   persist        durable policy on the pool: flush + fence and 8-byte atomic commits, with recovery
//   tx             transactional policy: the same structure code, its arena inside a libpmemobj pool, each
//                  insert / update / remove one PMDK transaction (undo-logged 8-byte commits, commit-time flushes;
//                  pmdk/tx.hpp), recovered by PMDK's own recovery plus the structure's
#pragma once

#include <concepts>
#include <string_view>

#include "pmlab/common/status.hpp"

namespace pmlab::ds {

enum class Mode : uint8_t { dram, pmem_volatile, persist, tx };
const char* to_string(Mode m) noexcept;
Result<Mode> parse_mode(std::string_view text);
// The medium a mode runs on: "dram" or "pool" (the bench's std_params::medium values).
const char* medium_of(Mode m) noexcept;

struct Volatile {
  static constexpr bool kDurable = false;
  static constexpr bool kTransactional = false;
};
struct Durable {
  static constexpr bool kDurable = true;
  static constexpr bool kTransactional = false;
};
// Durable through PMDK transactions: the arena's hooks snapshot a word before an in-place commit store and
// register freshly written ranges for the commit's flush; the structure brackets each change in
// Arena::operation().
struct Transactional {
  static constexpr bool kDurable = true;
  static constexpr bool kTransactional = true;
};

template <class M>
concept ModePolicy = requires {
  { M::kDurable } -> std::convertible_to<bool>;
  { M::kTransactional } -> std::convertible_to<bool>;
};

}  // namespace pmlab::ds
