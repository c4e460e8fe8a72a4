// The modes a structure is instantiated in. The code of a structure is written once, generic over a mode
// policy; the policy says whether its writes are made durable, and the medium under the arena says where
// the structure lives:
//   dram           volatile policy on a DRAM buffer
//   pmem-volatile  volatile policy on the pool (PMEM used as plain memory)
//   persist        durable policy on the pool: flush + fence and 8-byte atomic commits, with recovery
#pragma once

#include <concepts>
#include <string_view>

#include "pmlab/common/status.hpp"

namespace pmlab::ds {

enum class Mode : uint8_t { dram, pmem_volatile, persist };
const char* to_string(Mode m) noexcept;
Result<Mode> parse_mode(std::string_view text);
// The medium a mode runs on: "dram" or "pool" (the bench's std_params::medium values).
const char* medium_of(Mode m) noexcept;

struct Volatile {
  static constexpr bool kDurable = false;
};
struct Durable {
  static constexpr bool kDurable = true;
};

template <class M>
concept ModePolicy = requires {
  { M::kDurable } -> std::convertible_to<bool>;
};

}  // namespace pmlab::ds
