// How a page flush is made failure-atomic (flusher.hpp has the protocols).
#pragma once

#include <cstdint>
#include <string_view>

#include "pmlab/common/status.hpp"

namespace pmlab::primitives::page {

enum class Policy : uint8_t { cow, ulog, hybrid };
const char* to_string(Policy p) noexcept;
Result<Policy> parse_policy(std::string_view text);  // "cow" | "ulog" | "hybrid"

}  // namespace pmlab::primitives::page
