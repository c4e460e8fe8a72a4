#include "pmlab/cli/options.hpp"

#include "pmlab/common/text.hpp"
#include "pmlab/common/units.hpp"

namespace pmlab::cli {
namespace {

// CLI11 prints the validator's text after the option's name; the text as typed is escaped, so a
// value with control characters cannot garble the terminal.
template <class Parse>
CLI::Validator from_parser(Parse parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        auto parsed = parse(text);
        return parsed ? std::string() : printable(parsed.status().message());
      },
      /*validator_desc=*/"");
}

}  // namespace

CLI::Validator count_value(uint64_t min, uint64_t max) {
  return from_parser([min, max](const std::string& t) { return parse_count(t, min, max); });
}

CLI::Validator real_value(double min, double max) {
  return from_parser([min, max](const std::string& t) { return parse_real(t, min, max); });
}

CLI::Validator size_value(uint64_t min) {
  return from_parser([min](const std::string& t) -> Result<uint64_t> {
    auto size = parse_size(t);
    if (size && *size < min)
      return error(Errc::invalid_argument, "'" + t + "' is below the minimum " + format_size(min));
    return size;
  });
}

CLI::Validator duration_value(double max_seconds) {
  return from_parser([max_seconds](const std::string& t) -> Result<double> {
    auto seconds = parse_seconds(t);
    if (seconds && *seconds <= 0) return error(Errc::invalid_argument, "'" + t + "' is not a positive duration");
    if (seconds && *seconds > max_seconds)
      return error(Errc::invalid_argument, "'" + t + "' is longer than the limit of " +
                                               std::to_string(static_cast<uint64_t>(max_seconds)) + "s");
    return seconds;
  });
}

CLI::Validator non_empty_value() {
  return from_parser([](const std::string& t) -> Result<bool> {
    if (t.empty()) return error(Errc::invalid_argument, "an empty value is not allowed");
    return true;
  });
}

}  // namespace pmlab::cli
