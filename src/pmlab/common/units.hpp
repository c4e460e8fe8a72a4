// Parsing and printing of byte sizes and durations, the way users type them ("4K", "16KiB", "1G", "250ms").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"

namespace pmlab {

// Binary multiples: K = KiB = 1024. Rejects negatives, fractions of a byte and overflow.
Result<uint64_t> parse_size(std::string_view text);
// The shortest exact form: 4096 -> "4K", 1536 -> "1536", 1073741824 -> "1G".
std::string format_size(uint64_t bytes);
// "1.5s", "250ms", "20us", or a bare number of seconds.
Result<double> parse_seconds(std::string_view text);
Result<int64_t> parse_int(std::string_view text);
// Strict forms for values typed on a command line: only the decimal digits of a number in
// [min, max] (no sign, no spaces, no hex); a finite decimal number in [min, max] (no nan, inf or hex).
// The message says what was typed and what is accepted.
Result<uint64_t> parse_count(std::string_view text, uint64_t min = 0, uint64_t max = UINT64_MAX);
Result<double> parse_real(std::string_view text, double min, double max);

std::string hex64(uint64_t value);

}  // namespace pmlab
