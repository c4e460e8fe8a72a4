// Strict checks for command-line values, shared by every subcommand. CLI11 runs a Validator on the
// text as typed, before it converts the text to the option's type, so a value CLI11 would wrap
// (-1 into 2^64-1), saturate (2^64), or take as the default (an empty string) is refused here with
// "pmlab: error: --ops: '-1' is not an integer >= 1" and exit code 2.
#pragma once

#include <cstdint>
#include <limits>

#include <CLI/CLI.hpp>

namespace pmlab::cli {

// A whole number in [min, max], digits only.
CLI::Validator count_value(uint64_t min = 0, uint64_t max = std::numeric_limits<uint64_t>::max());
// A finite decimal number in [min, max].
CLI::Validator real_value(double min, double max);
// A byte size as parse_size reads it ("64M"), at least `min` bytes.
CLI::Validator size_value(uint64_t min = 1);
// A duration as parse_seconds reads it ("0.5s", "250ms"), above zero and at most `max_seconds`.
CLI::Validator duration_value(double max_seconds);
// Any text but the empty string (an empty --out or --domain is a mistake, not "the default").
CLI::Validator non_empty_value();

}  // namespace pmlab::cli
