#include <algorithm>
#include <string>

#include "pmlab/bench/case.hpp"
#include "pmlab/platform/topology.hpp"
#include "pmlab/suites/lockfree/timed_ops.hpp"

namespace pmlab::suites::lockfree {

std::string default_threads() {
  const size_t cpus = platform::allowed_cpus().size();
  return std::to_string(std::clamp<size_t>(cpus, 1, 28));
}

std::optional<std::string> unclaimed_domain(const bench::Params& p, const std::vector<persist::Domain>& claimed) {
  const auto domain = persist::parse_domain(p.text("domain"));
  if (domain && std::find(claimed.begin(), claimed.end(), *domain) == claimed.end())
    return p.text("design") + " is not designed for domain " + p.text("domain");
  return std::nullopt;
}

std::optional<std::string> other_medium(const bench::Params& p, bool volatile_design) {
  const char* medium = volatile_design ? "dram" : "pool";
  if (p.text("medium") != medium) return p.text("design") + " runs on " + medium;
  return std::nullopt;
}

}  // namespace pmlab::suites::lockfree
