#include "pmlab/bench/run_pattern.hpp"

#include <regex>
#include <utility>

namespace pmlab::bench {

struct RunPattern::Compiled {
  std::regex regex;
};

RunPattern::RunPattern(std::string expression, std::shared_ptr<const Compiled> compiled)
    : expression_(std::move(expression)), compiled_(std::move(compiled)) {}

Result<RunPattern> RunPattern::compile(const std::string& expression) {
  try {
    return RunPattern(expression, std::make_shared<const Compiled>(Compiled{std::regex(expression)}));
  } catch (const std::regex_error&) {
    return error(Errc::invalid_argument, "'" + expression + "' is not a valid regular expression");
  }
}

bool RunPattern::found_in(std::string_view name) const {
  return std::regex_search(name.begin(), name.end(), compiled_->regex);
}

}  // namespace pmlab::bench
