// A regular expression over run names: `pmlab run --filter` and the stability sample points. std::regex
// stays behind this class, in run_pattern.cpp, because its templates add seconds to the compilation of
// every file that includes <regex>, and the runner's files are among the largest.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"

namespace pmlab::bench {

class RunPattern {
 public:
  // ECMAScript syntax, as std::regex reads it; a malformed expression is invalid_argument.
  static Result<RunPattern> compile(const std::string& expression);

  // Whether the expression matches somewhere in `name` (a search, not a whole-name match).
  bool found_in(std::string_view name) const;

  const std::string& expression() const noexcept { return expression_; }

 private:
  struct Compiled;
  RunPattern(std::string expression, std::shared_ptr<const Compiled> compiled);

  std::string expression_;
  std::shared_ptr<const Compiled> compiled_;  // shared: a copied pattern is not compiled again
};

}  // namespace pmlab::bench
